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
import functools
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence

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
_INVISIBLE = "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
# Where NFKC changes characters: the BMP, the mathematical and enclosed alphanumerics, the
# CJK compatibility ideographs.
_RANGES = ((0x80, 0xD800), (0xE000, 0x10000), (0x1D400, 0x1D800), (0x1F100, 0x1F200))
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")
_CHUNK = 4_096


@functools.cache
def _changing() -> re.Pattern[str]:
    """The invisible characters and those NFKC changes (built once, on the first text that
    is not ASCII: ~15 ms)."""
    spans: list[list[int]] = []
    for lo, hi in _RANGES:
        for n in range(lo, hi):
            if unicodedata.normalize("NFKC", chr(n)) != chr(n):
                if spans and spans[-1][1] == n - 1:
                    spans[-1][1] = n
                else:
                    spans.append([n, n])
    ranges = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in spans)
    return re.compile(f"[{_INVISIBLE}{ranges}]")


def normalised(text: str) -> Mapped | None:
    """``text`` in NFKC (one character at a time) without its invisible characters; None when
    that is ``text`` itself (all ASCII: one check)."""
    if text.isascii():
        return None
    edits = []
    for lo in range(0, len(text), _CHUNK):  # C-speed checks skip most of a long text
        chunk = text[lo : lo + _CHUNK]
        if chunk.isascii() or (
            unicodedata.is_normalized("NFKC", chunk) and _INVISIBLE_RE.search(chunk) is None
        ):
            continue
        for run in _NON_ASCII.finditer(chunk):
            for m in _changing().finditer(chunk, run.start(), run.end()):
                edits.append((lo + m.start(), lo + m.end(), _nfkc(m.group())))
    return Mapped(text, edits) if edits else None


def _nfkc(c: str) -> str:
    return "" if _INVISIBLE_RE.match(c) else unicodedata.normalize("NFKC", c)


# -- joined -------------------------------------------------------------------------------------
_SPACE = re.compile(r"\s+")
_PROSE_WORD = re.compile(r"[a-z]{1,12}[.,;:!?)]*")
_TRIMMED = 16  # trailing words given back at most


def joined(text: str, copy: str, anchors: Mapping[int, list[int]]) -> list[Finding]:
    """Provider formats split by whitespace: found in ``copy`` (``text`` without whitespace,
    whose hints are ``anchors``), mapped back, held to the format's boundaries in ``text``,
    less the prose words a format's open end took in."""
    if len(copy) == len(text):
        return []
    matches = detectors.joined(copy, anchors)
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
        pieces, cut = text[start:end].split(), f.end
        for _ in range(_TRIMMED):  # "…token\nand then": the format's open end took "and"
            if len(pieces) < 2 or not _PROSE_WORD.fullmatch(pieces[-1]):
                break
            shorter = cut - len(pieces[-1])
            if not d.pattern.fullmatch(copy, f.start, shorter):
                break
            cut = shorter
            pieces.pop()
        start, end = back.span(f.start, cut)
        found.append(Finding(start, end, f.kind, f.rank))
    return found


# -- decoded ------------------------------------------------------------------------------------
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
# The first character of a base64 group whose first byte is printable ASCII (0x20-0x7f).
_TEXT_LEADS = str.maketrans("", "", "IJKLMNOPQRSTUVWXYZabcdef")


def encoded(text: str, words: Sequence[str], scan: Scan) -> list[Finding]:
    """Secrets in the base64 and percent-encoded runs of ``text`` (``words``: its words, in
    order), found by ``scan`` in their decoded text."""
    found = []
    at = 0
    long = [w for w in words if len(w) >= 16] if max(map(len, words), default=0) >= 16 else []
    for word in long:
        at = text.find(word, at)
        for m in _BASE64_RUN.finditer(word):
            decoded = _decode64(m.group())
            inner = scan(decoded) if decoded else []
            if inner:
                found.append(Finding(at + m.start(), at + m.end(), inner[0].kind, HEADER))
        at += len(word)
    if "%" in text:
        found += _percent(text, scan)
    return found


def _decode64(run: str) -> str:
    """The text a base64 run encodes ('' unless it is printable UTF-8 of 8+ characters)."""
    body = run.rstrip("=")
    if len(body) % 4 == 1 or body.islower() or body.isupper() or body.isdigit():
        return ""  # base64 of text mixes cases; identifiers and hex do not
    if len(body[::4].translate(_TEXT_LEADS)) * 8 > len(body) // 4 + 1:
        return ""  # each group of 4 encodes 3 bytes; a printable byte's group starts with I-f
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
