"""An export file's top-level entries and table rows, read one at a time.

``json.loads`` of a whole export held about three times the file in memory (a 215 MB export took
690 MB). :func:`entries` reads the file in 1 MiB pieces and decodes one top-level value, or one
row of a top-level list, at a time with the standard library's decoder, so what it holds is a
piece of the file and one row. A single value longer than :data:`MAX_VALUE` characters is
refused (no row a tool can write comes near it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

PIECE = 1 << 20  # characters read at a time
MAX_VALUE = 64 << 20  # the longest single value (a row, or a top-level non-list value)
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class NotAnObject(ValueError):
    """The file's top-level value is not a JSON object."""


class _Reader:
    """A window on a text file: what is left of the last piece read, and the position in it."""

    def __init__(self, fh: TextIO) -> None:
        self.fh = fh
        self.buf = ""
        self.pos = 0
        self.eof = False

    def _more(self) -> bool:
        if self.eof:
            return False
        piece = self.fh.read(PIECE)
        if not piece:
            self.eof = True
            return False
        self.buf = self.buf[self.pos :] + piece
        self.pos = 0
        return True

    def _error(self, what: str) -> json.JSONDecodeError:
        return json.JSONDecodeError(what, self.buf, self.pos)

    def peek(self) -> str:
        """The next character that is not white space ('' at the end of the file)."""
        while True:
            match = _WS.match(self.buf, self.pos)
            self.pos = match.end() if match else self.pos
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise self._error(f"Expecting {char!r}")
        self.pos += 1

    def value(self) -> Any:
        """The next JSON value, whole."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError:
                if len(self.buf) - self.pos > MAX_VALUE:
                    raise self._error(f"a value longer than {MAX_VALUE:,} characters") from None
                if not self._more():
                    raise
                continue
            if end == len(self.buf) and self._more():
                continue  # a number or literal may go on in the next piece
            self.pos = end
            return value


def entries(path: Path) -> Iterator[tuple[str, int | None, Any]]:
    """``(key, None, value)`` for each top-level member of the file's object, except that a
    member whose value is a list gives ``(key, i, item)`` for each item instead (and
    ``(key, -1, None)`` when it is empty).

    Raises:
        NotAnObject: the file does not start with ``{``.
        json.JSONDecodeError: not JSON.
        OSError, UnicodeDecodeError: the file cannot be read as UTF-8 text.
    """
    with path.open(encoding="utf-8") as fh:
        r = _Reader(fh)
        if r.peek() != "{":
            raise NotAnObject("the file does not hold a JSON object")
        r.pos += 1
        if r.peek() == "}":
            r.pos += 1
        else:
            while True:
                key = r.value()
                if not isinstance(key, str):
                    raise r._error("Expecting a property name")
                r.take(":")
                if r.peek() == "[":
                    r.pos += 1
                    if r.peek() == "]":
                        r.pos += 1
                        yield key, -1, None
                    else:
                        i = 0
                        while True:
                            yield key, i, r.value()
                            i += 1
                            if r.peek() == ",":
                                r.pos += 1
                                continue
                            r.take("]")
                            break
                else:
                    yield key, None, r.value()
                if r.peek() == ",":
                    r.pos += 1
                    continue
                r.take("}")
                break
        if r.peek() != "":
            raise r._error("Extra data")
