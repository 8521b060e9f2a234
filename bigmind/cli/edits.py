"""Reversible edits of files other programs own: marked text blocks and JSON config entries.

Every function here is pure (text in and out for marked blocks; a parsed document in and out
for JSON configs, whose difference :mod:`bigmind.cli.jsontext` writes back into the file's own
text) so `bigmind install` can plan all its edits, show them with ``--dry-run``, and refuse
before touching anything when one file is unreadable. An edit applied twice changes nothing the
second time; its removal restores what the user had.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bigmind.errors import InvalidInput


@dataclass(frozen=True)
class Markers:
    """The comment lines around a BigMind block, in the file's comment syntax."""

    begin: str  # what the BEGIN line starts with
    end: str  # the whole END line
    note: str  # the rest of the BEGIN line

    @property
    def begin_line(self) -> str:
        return f"{self.begin} {self.note}"


HTML = Markers(
    "<!-- BIGMIND:BEGIN",
    "<!-- BIGMIND:END -->",
    "(written by `bigmind install`; `bigmind uninstall` removes it) -->",
)
HASH = Markers(  # gitignore syntax: .git/info/exclude
    "# BIGMIND:BEGIN",
    "# BIGMIND:END",
    "(written by `bigmind install`; `bigmind uninstall` removes it)",
)
BEGIN, END, BEGIN_LINE = HTML.begin, HTML.end, HTML.begin_line


# -- marked blocks in Markdown (and gitignore files) -----------------------------------------
def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _block_span(text: str, where: str, m: Markers) -> tuple[int, int] | None:
    """(start, end) of the marked block including its END line, or None when there is none."""
    begins = [x.start() for x in re.finditer(r"(?m)^[ \t]*" + re.escape(m.begin), text)]
    end_re = r"(?m)^[ \t]*" + re.escape(m.end) + r"[ \t]*\r?\n?"
    ends = [x.end() for x in re.finditer(end_re, text)]
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise InvalidInput(
            f"{where} has broken BigMind markers ({len(begins)} BEGIN, {len(ends)} END): "
            "fix or delete the block by hand, then run the command again."
        )
    return begins[0], ends[0]


def block_text(body: str, nl: str = "\n", m: Markers = HTML) -> str:
    lines = [m.begin_line, *body.strip("\n").splitlines(), m.end]
    return nl.join(lines) + nl


def block_get(text: str, where: str, m: Markers = HTML) -> str | None:
    span = _block_span(text, where, m)
    return None if span is None else text[span[0] : span[1]]


def block_set(text: str | None, body: str, where: str, m: Markers = HTML) -> str:
    """``text`` with the BigMind block holding ``body``: replaced in place, or appended after
    a blank line (a new file is just the block)."""
    if not text:
        return block_text(body, m=m)
    nl = _newline(text)
    block = block_text(body, nl, m)
    span = _block_span(text, where, m)
    if span is not None:
        return text[: span[0]] + block + text[span[1] :]
    sep = "" if text.endswith(nl * 2) else (nl if text.endswith(nl) else nl * 2)
    return text + sep + block


def block_remove(text: str, where: str, m: Markers = HTML) -> str | None:
    """``text`` without the BigMind block and the blank line install put before it.

    Returns None when nothing but whitespace is left (the file was ours alone).
    """
    span = _block_span(text, where, m)
    if span is None:
        return text
    nl = _newline(text)
    head, tail = text[: span[0]], text[span[1] :]
    if not tail and head.endswith(nl * 2):
        head = head[: -len(nl)]  # the separator block_set added
    out = head + tail
    return out if out.strip() else None


# -- JSON and JSON with comments (VS Code's mcp.json is JSONC) -------------------------------
_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA = re.compile(r'"(?:\\.|[^"\\])*"|,(?=\s*[}\]])')


def strip_jsonc(text: str) -> str:
    """Remove // and /* */ comments, then trailing commas, outside strings."""

    def uncomment(m: re.Match[str]) -> str:
        tok = m.group(0)  # a string stays; a comment keeps its line breaks (error line numbers)
        return tok if tok.startswith('"') else "\n" * tok.count("\n") or " "

    plain = _COMMENT.sub(uncomment, text)
    return _TRAILING_COMMA.sub(lambda m: m.group(0) if m.group(0) != "," else "", plain)


def load_json(text: str | None, where: str) -> dict[str, Any]:
    """Parse a config file (JSON or JSONC); a missing or blank file is an empty document."""
    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(strip_jsonc(text.lstrip("\ufeff")))
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{where} is not valid JSON (line {exc.lineno}: {exc.msg}); "
            "fix it or move it away — nothing was changed."
        ) from exc
    if not isinstance(doc, dict):
        raise InvalidInput(f"{where} holds a JSON {type(doc).__name__}, not an object.")
    return doc


def _container(doc: dict[str, Any], keys: tuple[str, ...], where: str) -> dict[str, Any]:
    node = doc
    for k in keys:
        child = node.setdefault(k, {})
        if not isinstance(child, dict):
            raise InvalidInput(f'{where}: "{k}" is a {type(child).__name__}, expected an object.')
        node = child
    return node


def entry_set(
    doc: dict[str, Any], keys: tuple[str, ...], value: dict[str, Any], where: str
) -> None:
    """Set ``doc[keys…]`` to ``value``, keeping any other fields the user added to that entry
    (``env``, ``disabled``…) and every sibling entry."""
    parent = _container(doc, keys[:-1], where)
    entry = parent.get(keys[-1])
    if not isinstance(entry, dict):
        parent[keys[-1]] = dict(value)
        return
    entry.update(value)


def env_var_set(doc: dict[str, Any], keys: tuple[str, ...], name: str, value: str | None) -> None:
    """Set one variable in the ``env`` of entry ``doc[keys…]`` (None: remove it), keeping the
    user's other variables; an ``env`` left empty goes."""
    entry = entry_get(doc, keys)
    if not isinstance(entry, dict):
        return
    env = entry.get("env")
    if value is not None:
        if not isinstance(env, dict):
            env = entry["env"] = {}
        env[name] = value
    elif isinstance(env, dict) and name in env:
        del env[name]
        if not env:
            del entry["env"]


def entry_get(doc: dict[str, Any], keys: tuple[str, ...]) -> Any:
    node: Any = doc
    for k in keys:
        if not isinstance(node, dict) or k not in node:
            return None
        node = node[k]
    return node


def entry_remove(doc: dict[str, Any], keys: tuple[str, ...]) -> None:
    """Delete ``doc[keys…]`` and the containers install created that it leaves empty."""
    path: list[dict[str, Any]] = [doc]
    for k in keys[:-1]:
        nxt = path[-1].get(k)
        if not isinstance(nxt, dict):
            return
        path.append(nxt)
    path[-1].pop(keys[-1], None)
    for depth in range(len(keys) - 1, 0, -1):
        if path[depth]:
            break
        path[depth - 1].pop(keys[depth - 1], None)


# -- Claude Code hooks: {"hooks": {Event: [{"matcher"?, "hooks": [{"type", "command"}]}]}} ----
def _item_lists(groups: list[Any]) -> Iterator[list[Any]]:
    """The ``hooks`` list of each well-formed matcher group; anything else is left alone."""
    for group in groups:
        items = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(items, list):
            yield items


def _matches(item: Any, is_ours: Callable[[str], bool]) -> bool:
    return isinstance(item, dict) and is_ours(str(item.get("command", "")))


def _drop_emptied(groups: list[Any]) -> None:
    groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]


def hook_commands(doc: dict[str, Any]) -> Iterator[str]:
    """Every hook command in a Claude Code settings document."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return
    for groups in hooks.values():
        if isinstance(groups, list):
            for items in _item_lists(groups):
                yield from (str(it.get("command", "")) for it in items if isinstance(it, dict))


def hook_set(
    doc: dict[str, Any],
    event: str,
    command: str,
    is_ours: Callable[[str], bool],
    where: str,
    timeout: int = 5,
) -> None:
    """Make ``command`` the one BigMind hook for ``event``: an older BigMind command (another
    install path) is replaced in place; the user's own hooks are left as they are."""
    groups = _container(doc, ("hooks",), where).setdefault(event, [])
    if not isinstance(groups, list):
        raise InvalidInput(f'{where}: hooks "{event}" is not a list.')
    ours = {"type": "command", "command": command, "timeout": timeout}
    placed = False
    for items in _item_lists(groups):
        for i, item in enumerate(items):
            if _matches(item, is_ours):
                items[i] = None if placed else {**item, **ours}
                placed = True
        items[:] = [it for it in items if it is not None]
    _drop_emptied(groups)
    if not placed:
        groups.append({"hooks": [ours]})


def hook_remove(doc: dict[str, Any], is_ours: Callable[[str], bool]) -> None:
    """Remove every BigMind hook, then the groups, events and ``hooks`` key left empty."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        for items in _item_lists(groups):
            items[:] = [it for it in items if not _matches(it, is_ours)]
        _drop_emptied(groups)
        if not groups:
            del hooks[event]
    if not hooks:
        del doc["hooks"]
