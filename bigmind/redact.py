"""Secrets out of stored text: every text BigMind keeps passes through :func:`redact` first.

Each secret found becomes ``[REDACTED:<kind>]``, where the kind is a short stable slug
(:data:`LABELS`): ``aws-access-key``, ``github-token``, ``private-key``, ``jwt``,
``password``… The text is searched as written and in the forms a secret hides in
(:mod:`bigmind.redaction.forms`): normalised (NFKC, without zero-width and bidi characters),
without its whitespace (a key split across lines: provider formats only), and decoded (base64
and percent-encoded runs). What searches: :mod:`bigmind.redaction.detectors` (provider
formats on detect-secrets' plugins, private keys, passwords in URLs and command lines,
Authorization headers, assignments to secret-sounding names) and
:mod:`bigmind.redaction.prose` (statements: "the password for staging is …", "pw for
jenkins: …", "das Passwort ist …").

Ordinary engineering text stays as it is: commit hashes, UUIDs, checksums, URLs without
credentials, base64 in prose, versions, paths, ``password`` as a word, placeholders
(``<your password>``, ``${DB_PASSWORD}``, ``****``), "token 9fceb02d…" (an id).

A surface collects what the calls it serves redacted (:func:`collecting`) and says so
(:func:`describe`); the secret itself is never returned, logged or kept.
"""

from __future__ import annotations

import bisect
import logging
from collections import Counter
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from bigmind.redaction import detectors, forms, prose
from bigmind.redaction.findings import LABELS, PLACED, PLACEHOLDER, Finding, Redacted

__all__ = [
    "LABELS",
    "PLACEHOLDER",
    "Finding",
    "Redacted",
    "collecting",
    "describe",
    "find",
    "kinds",
    "label",
    "redact",
    "report",
    "scrub",
    "scrub_optional",
]

log = logging.getLogger(__name__)


# -- finding and replacing -------------------------------------------------------------------
def _scan(text: str, providers: Container[int] | None = None) -> list[Finding]:
    """The detectors and the statements, on one form of the text (``providers``: the
    provider formats whose hints it may hold; None: any)."""
    low = detectors.lowered(text)
    spots = detectors.positions(low, prose.WORDS)
    return detectors.detect(text, low, providers, spots) + prose.statements(text, low, spots)


def find(text: str) -> list[Finding]:
    """The secrets in ``text``, in order, without overlaps."""
    if len(text) < 8:
        return []
    norm = forms.normalised(text)
    base = text if norm is None else norm.text
    words = base.split()
    copy = "".join(words)  # hints are looked for once, in the copy without whitespace
    anchors = detectors.hints(copy, detectors.lowered(copy))
    found = _scan(base, tuple(anchors)) + forms.encoded(base, words, _scan)
    if anchors:
        found += forms.joined(base, copy, anchors)
    if not found:
        return []
    kept = _settle(base, found)
    return kept if norm is None else [norm.finding(f) for f in kept]


def _settle(text: str, found: list[Finding]) -> list[Finding]:
    """Keep the best of overlapping findings, skip what is already redacted, and catch the
    other occurrences of a long secret (a token pasted twice)."""
    taken = _Spans(m.span() for m in PLACED.finditer(text)) if "[REDACTED:" in text else _Spans()
    kept: list[Finding] = []
    for f in sorted(found, key=lambda f: (f.rank, f.start, -f.end)):
        if taken.add(f.start, f.end):
            kept.append(f)
    values: dict[str, Finding] = {}
    for f in kept:
        if f.end - f.start >= 12:
            values.setdefault(text[f.start : f.end], f)
    for value, f in values.items():
        at = text.find(value)
        while at >= 0:
            if taken.add(at, at + len(value)):
                kept.append(Finding(at, at + len(value), f.kind, f.rank))
            at = text.find(value, at + 1)
    return sorted(kept, key=lambda f: f.start)


class _Spans:
    """Spans that do not overlap, in order: adding one that overlaps none is O(log n)."""

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        for start, end in spans:
            self.add(start, end)

    def add(self, start: int, end: int) -> bool:
        """Add ``[start, end)`` unless it overlaps a span held; whether it was added."""
        i = bisect.bisect_right(self.starts, start)
        if (i > 0 and self.ends[i - 1] > start) or (i < len(self.starts) and self.starts[i] < end):
            return False
        self.starts.insert(i, start)
        self.ends.insert(i, end)
        return True


def redact(text: str) -> Redacted:
    """``text`` with each secret replaced by ``[REDACTED:<kind>]``. Pure: reports nothing."""
    findings = find(text)
    if not findings:
        return Redacted(text, {})
    parts, at = [], 0
    for f in findings:
        parts += [text[at : f.start], PLACEHOLDER.format(f.kind)]
        at = f.end
    parts.append(text[at:])
    return Redacted("".join(parts), Counter(f.kind for f in findings))


# -- telling the user -----------------------------------------------------------------------
_collected: ContextVar[Counter[str] | None] = ContextVar("bigmind_redacted", default=None)


@contextmanager
def collecting() -> Iterator[Counter[str]]:
    """Collect what :func:`scrub` redacts during this block (one tool call, one command)."""
    found: Counter[str] = Counter()
    token = _collected.set(found)
    try:
        yield found
    finally:
        _collected.reset(token)


def scrub(text: str) -> str:
    """:func:`redact`, reporting what was found to the surface collecting (if any)."""
    r = redact(text)
    report(r.found)
    return r.text


def report(found: Mapping[str, int]) -> None:
    """Tell the surface collecting (if any) and the log what was redacted (never the secret)."""
    if found:
        log.info("redacted before storing: %s", ", ".join(sorted(found)))
        into = _collected.get()
        if into is not None:
            into.update(found)


def scrub_optional(text: str | None) -> str | None:
    return None if text is None else scrub(text)


def describe(found: Mapping[str, int], lead: str = "Redacted before storing") -> str:
    """``Redacted before storing: 1 AWS access key, 2 passwords.`` (kinds by count)."""
    items = sorted(found.items(), key=lambda kv: -kv[1])
    return f"{lead}: {', '.join(label(k, n) for k, n in items)}."


def label(kind: str, n: int) -> str:
    one, many = LABELS.get(kind, (kind, kind + "s"))
    return f"{n} {one if n == 1 else many}"


def kinds() -> Sequence[str]:
    """Every kind of secret a placeholder may name."""
    return tuple(LABELS)
