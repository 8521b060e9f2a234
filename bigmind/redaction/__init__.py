"""What :mod:`bigmind.redact` runs: the detectors (``detectors.py``), statements in prose
(``prose.py``), the other forms a secret takes (``forms.py``) and their findings
(``findings.py``)."""
