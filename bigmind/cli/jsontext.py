"""Edit JSON (and JSONC) text in place: rewrite only what changed, keep every other byte.

`bigmind install` edits files that other programs own: ``~/.claude.json`` holds all of Claude
Code's state and is rewritten by it constantly, a team's ``.mcp.json`` is formatted by hand, VS
Code's ``mcp.json`` may hold comments. Serialising the edited document again would reformat all
of that (and drop the comments). :func:`patch` instead compares the document before and after
the edit and touches only the spans that differ: a new member goes after the last one, in the
file's own indentation and line endings; a removed one is cut out with the comma before it. So
removing what install added gives back, byte for byte, the text install found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# Whitespace (and a byte-order mark), comments, strings, punctuation, and anything else up to
# the next delimiter (numbers, true, false, null). Comments and whitespace are dropped.
_TOKEN = re.compile(
    r'[\s\ufeff]+|//[^\n]*|/\*.*?\*/|"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"/]+', re.S
)
_SKIP = re.compile(r"[\s\ufeff]|//|/\*")


@dataclass
class _Node:
    """A value's span in the text; containers ({ or [) also list their members."""

    kind: str  # "{", "[" or "" (a scalar)
    start: int
    end: int
    items: list[_Item] = field(default_factory=list)


@dataclass
class _Item:
    key: str | None  # None in an array
    start: int  # where the member starts: its key, or the element itself
    node: _Node


class _Parser:
    """Recursive descent over tokens; the text was already validated by ``json.loads``."""

    def __init__(self, text: str) -> None:
        self.tokens = [
            (m.group(), m.start(), m.end())
            for m in _TOKEN.finditer(text)
            if not _SKIP.match(m.group())
        ]
        self.i = 0

    def take(self) -> tuple[str, int, int]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def peek(self) -> str:
        return self.tokens[self.i][0]

    def value(self) -> _Node:
        tok, start, end = self.take()
        if tok not in ("{", "["):
            return _Node("", start, end)
        node = _Node(tok, start, end)
        close = "}" if tok == "{" else "]"
        while self.peek() != close:
            item_start = self.tokens[self.i][1]
            key = None
            if tok == "{":
                key = json.loads(self.take()[0])
                self.take()  # the colon
            node.items.append(_Item(key, item_start, self.value()))
            if self.peek() == ",":
                self.take()  # a trailing comma (JSONC) is fine too
        node.end = self.take()[2]
        return node


@dataclass(frozen=True)
class _Style:
    """How the file writes what we add: its line ending and indentation unit."""

    nl: str
    unit: str
    multiline: bool

    @classmethod
    def of(cls, text: str) -> _Style:
        m = re.search(r"\n([ \t]+)\S", text)
        return cls("\r\n" if "\r\n" in text else "\n", m.group(1) if m else "  ", "\n" in text)

    def value(self, value: Any, indent: str | None) -> str:
        """``value`` as JSON: laid out over lines from ``indent`` on, or on one line (None)."""
        if indent is None:
            return json.dumps(value, ensure_ascii=False)
        out = json.dumps(value, indent=self.unit, ensure_ascii=False)
        return out.replace("\n", self.nl + indent)

    def member(self, key: str | None, value: Any, indent: str | None) -> str:
        prefix = "" if key is None else json.dumps(key, ensure_ascii=False) + ": "
        return prefix + self.value(value, indent)


def new_file(doc: dict[str, Any]) -> str:
    """A file that did not exist: two-space indentation, a final newline."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def patch(text: str | None, old: dict[str, Any], new: dict[str, Any]) -> str:
    """``text`` (whose document is ``old``) edited to hold ``new``, changing only what differs."""
    if text is None or not text.strip():
        return new_file(new)
    differ = _Differ(text)
    differ.diff(_Parser(text).value(), old, new)
    out = text
    for start, end, replacement in sorted(differ.edits, reverse=True):
        out = out[:start] + replacement + out[end:]
    return out


class _Differ:
    def __init__(self, text: str) -> None:
        self.text = text
        self.style = _Style.of(text)
        self.edits: list[tuple[int, int, str]] = []

    def indent_of(self, pos: int) -> str:
        """The leading whitespace of the line ``pos`` is on."""
        line = self.text[self.text.rfind("\n", 0, pos) + 1 : pos]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def replace(self, node: _Node, value: Any) -> None:
        indent = self.indent_of(node.start) if self.style.multiline else None
        self.edits.append((node.start, node.end, self.style.value(value, indent)))

    def diff(self, node: _Node, old: Any, new: Any) -> None:
        if old == new and type(old) is type(new):
            return
        if node.kind == "{" and isinstance(old, dict) and isinstance(new, dict):
            self.members(node, old, new)
        elif node.kind == "[" and isinstance(old, list) and isinstance(new, list):
            self.elements(node, old, new)
        else:
            self.replace(node, new)

    def members(self, node: _Node, old: dict[str, Any], new: dict[str, Any]) -> None:
        removed = [i for i, it in enumerate(node.items) if it.key not in new]
        added = [(k, v) for k, v in new.items() if k not in old]
        if removed and added:  # both at once never happens in our edits: keep it simple
            self.replace(node, new)
            return
        last = {it.key: it for it in node.items}  # a repeated key: json.loads keeps the last
        for key, value in new.items():
            if key in old:
                self.diff(last[key].node, old[key], value)
        if removed:
            self.cut(node, removed)
        else:
            self.append(node, added)

    def elements(self, node: _Node, old: list[Any], new: list[Any]) -> None:
        n = len(old)
        if len(new) > n and new[:n] == old:
            self.append(node, [(None, v) for v in new[n:]])
        elif len(new) == n:
            for item, was, now in zip(node.items, old, new, strict=True):
                self.diff(item.node, was, now)
        elif (gone := _removed(old, new)) is not None:
            self.cut(node, gone)
        else:
            self.replace(node, new)

    def cut(self, node: _Node, indexes: list[int]) -> None:
        """Remove these members, each with the comma and space that led to it."""
        items, gone = node.items, set(indexes)
        kept = [i for i in range(len(items)) if i not in gone]
        if not kept:
            self.edits.append((node.start + 1, node.end - 1, ""))
            return
        if kept[0] > 0:  # leading members: up to where the first kept one starts
            self.edits.append((items[0].start, items[kept[0]].start, ""))
        for i in sorted(gone):
            if i > kept[0]:  # from the end of the one before (the comma) to its own end
                self.edits.append((items[i - 1].node.end, items[i].node.end, ""))

    def append(self, node: _Node, members: Sequence[tuple[str | None, Any]]) -> None:
        """Add members after the last one, laid out like it (or like the file, when empty)."""
        if not members:
            return
        style, items = self.style, node.items
        if items:
            inline = "\n" not in self.text[node.start : items[0].start]
            indent = None if inline else self.indent_of(items[-1].start)
            sep = ", " if indent is None else "," + style.nl + indent
            added = "".join(sep + style.member(k, v, indent) for k, v in members)
            self.edits.append((items[-1].node.end, items[-1].node.end, added))
            return
        if not style.multiline:
            inside = ", ".join(style.member(k, v, None) for k, v in members)
        else:
            outer = self.indent_of(node.start)
            indent = outer + style.unit
            body = ("," + style.nl + indent).join(style.member(k, v, indent) for k, v in members)
            inside = style.nl + indent + body + style.nl + outer
        self.edits.append((node.start + 1, node.end - 1, inside))


def _removed(old: list[Any], new: list[Any]) -> list[int] | None:
    """Indexes of ``old`` whose removal leaves ``new`` (order kept), or None."""
    gone, j = [], 0
    for i, value in enumerate(old):
        if j < len(new) and new[j] == value:
            j += 1
        else:
            gone.append(i)
    return gone if j == len(new) else None
