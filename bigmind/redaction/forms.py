"""The other forms a secret takes in pasted text, each searched in a copy of the text whose
findings are mapped back to the original's spans (so the stored text keeps everything else):

- normalised: NFKC (full-width letters, ligatures), without zero-width and bidi characters
  (a key split by U+200B);
- joined: without whitespace, for the provider formats only (a key split across lines);
- decoded: base64 runs (a database URL encoded with its password) and percent-encoded runs
  (``postgres%3A%2F%2Fapp%3A…%40db``). A base64 run whose text holds a secret is redacted
  whole; in a percent-encoded run, the secret's own characters.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterable

from bigmind.redaction import detectors
from bigmind.redaction.findings import HEADER, Finding

Scan = Callable[[str], list[Finding]]


class Mapped:
    """A text made from ``source`` by replacing spans (``edits``: sorted, apart), and the way
    from a span of it back to ``source``."""

    __slots__ = ("_pieces", "_starts", "text")

    def __init__(self, source: str, edits: Iterable[tuple[int, int, str]]) -> None:
        parts: list[str] = []
        self._starts: list[int] = []  # where each piece starts in the text
        self._pieces: list[tuple[int, int, bool]] = []  # its source span; kept verbatim?
        at = size = 0
        for start, end, new in [*edits, (len(source), len(source), "")]:
            for s, e, piece, verbatim in (
                (at, start, source[at:start], True),
                (start, end, new, False),
            ):
                if piece:
                    parts.append(piece)
                    self._starts.append(size)
                    self._pieces.append((s, e, verbatim))
                    size += len(piece)
            at = end
        self.text = "".join(parts)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of ``source`` that ``text[start:end]`` was made from."""
        i = bisect_right(self._starts, start) - 1
        s, _, verbatim = self._pieces[i]
        first = s + start - self._starts[i] if verbatim else s
        j = bisect_right(self._starts, end - 1) - 1
        s, e, verbatim = self._pieces[j]
        last = s + end - self._starts[j] if verbatim else e
        return first, last

    def finding(self, f: Finding) -> Finding:
        start, end = self.span(f.start, f.end)
        return Finding(start, end, f.kind, f.rank)


# -- normalised ---------------------------------------------------------------------------------
# Zero-width characters, the soft hyphen and the bidi controls: invisible, so a key stays a key.
_INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def normalised(text: str) -> Mapped | None:
    """``text`` in NFKC without its invisible characters; None when that is ``text`` itself
    (all ASCII: one check)."""
    if text.isascii() or (
        _INVISIBLE.search(text) is None and unicodedata.is_normalized("NFKC", text)
    ):
        return None
    edits = []
    for run in _NON_ASCII.finditer(text):
        chars = run.group()
        if _INVISIBLE.search(chars) is None and unicodedata.is_normalized("NFKC", chars):
            continue
        for i, c in enumerate(chars, run.start()):
            if _INVISIBLE.match(c):
                edits.append((i, i + 1, ""))
            else:
                n = unicodedata.normalize("NFKC", c)
                if n != c:
                    edits.append((i, i + 1, n))
    return Mapped(text, edits) if edits else None


# -- joined -------------------------------------------------------------------------------------
_SPACE = re.compile(r"\s+")
_PROSE_WORD = re.compile(r"[a-z]{1,12}[.,;:!?)]*")


def joined(text: str) -> list[Finding]:
    """Provider formats split by whitespace: found in a copy without it, mapped back, held to
    the format's boundaries in ``text``, less the prose words a format's open end took in."""
    if len(text) < 16 or _SPACE.search(text) is None:
        return []
    copy = _SPACE.sub("", text)
    matches = detectors.joined(copy, detectors.lowered(copy))
    if not matches:
        return []
    back = Mapped(text, ((m.start(), m.end(), "") for m in _SPACE.finditer(text)))
    found = []
    for f, d in matches:
        start, end = back.span(f.start, f.end)
        if _SPACE.search(text, start, end) is None:
            continue  # not split: the plain search has it
        if d.spec.bounded and (
            (start > 0 and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum())
        ):
            continue
        pieces = text[start:end].split()
        while (
            len(pieces) > 1
            and _PROSE_WORD.fullmatch(pieces[-1])
            and d.pattern.fullmatch("".join(pieces[:-1]))
        ):
            end = text.rindex(pieces.pop(), start, end)
            end = start + len(text[start:end].rstrip())
        found.append(Finding(start, end, f.kind, f.rank))
    return found


# -- decoded ------------------------------------------------------------------------------------
_BASE64_RUN = re.compile(r"(?<![\w+/-])[A-Za-z0-9+/_-]{16,}={0,2}(?![\w+/=-])")
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def encoded(text: str, scan: Scan) -> list[Finding]:
    """Secrets in the base64 and percent-encoded runs of ``text``, found by ``scan`` in their
    decoded text."""
    found = []
    for m in _BASE64_RUN.finditer(text):
        decoded = _decode64(m.group())
        if decoded:
            inner = scan(decoded)
            if inner:
                found.append(Finding(m.start(), m.end(), inner[0].kind, HEADER))
    if "%" in text:
        found += _percent(text, scan)
    return found


def _decode64(run: str) -> str:
    """The text a base64 run encodes ('' unless it is printable UTF-8 of 8+ characters)."""
    body = run.rstrip("=")
    if len(body) % 4 == 1 or body.isalpha() or body.isdigit():
        return ""
    urlsafe = "-" in body or "_" in body
    if urlsafe and ("+" in body or "/" in body):
        return ""
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = (
            base64.urlsafe_b64decode(padded) if urlsafe else base64.b64decode(padded, validate=True)
        )
        out = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return ""
    if len(out) < 8 or not all(c.isprintable() or c in "\n\r\t" for c in out):
        return ""
    return out


def _percent(text: str, scan: Scan) -> list[Finding]:
    edits = []
    for m in _PERCENT.finditer(text):
        raw = bytes.fromhex(m.group().replace("%", ""))
        if raw.isascii():  # each %XX is one character: spans map back exactly
            edits += [(m.start() + 3 * i, m.start() + 3 * i + 3, chr(b)) for i, b in enumerate(raw)]
        else:
            edits.append((m.start(), m.end(), raw.decode("utf-8", "replace")))
    if not edits:
        return []
    decoded = Mapped(text, edits)
    return [decoded.finding(f) for f in scan(decoded.text)]
