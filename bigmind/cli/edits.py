"""Reversible edits of files other programs own: marked text blocks and JSON config entries.

Every function here is pure (text in, text out) so `bigmind install` can plan all its edits,
show them with ``--dry-run``, and refuse before touching anything when one file is unreadable.
An edit applied twice changes nothing the second time; its removal restores what the user had.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from bigmind.errors import InvalidInput

BEGIN = "<!-- BIGMIND:BEGIN"
END = "<!-- BIGMIND:END -->"
BEGIN_LINE = f"{BEGIN} (written by `bigmind install`; `bigmind uninstall` removes it) -->"


# -- marked blocks in Markdown ---------------------------------------------------------------
def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _block_span(text: str, where: str) -> tuple[int, int] | None:
    """(start, end) of the marked block including its END line, or None when there is none."""
    begins = [m.start() for m in re.finditer(r"(?m)^[ \t]*" + re.escape(BEGIN), text)]
    ends = [m.end() for m in re.finditer(r"(?m)^[ \t]*" + re.escape(END) + r"[ \t]*\r?\n?", text)]
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise InvalidInput(
            f"{where} has broken BigMind markers ({len(begins)} BEGIN, {len(ends)} END): "
            "fix or delete the block by hand, then run the command again."
        )
    return begins[0], ends[0]


def block_text(body: str, nl: str = "\n") -> str:
    lines = [BEGIN_LINE, *body.strip("\n").splitlines(), END]
    return nl.join(lines) + nl


def block_get(text: str, where: str) -> str | None:
    span = _block_span(text, where)
    return None if span is None else text[span[0] : span[1]]


def block_set(text: str | None, body: str, where: str) -> str:
    """``text`` with the BigMind block holding ``body``: replaced in place, or appended after
    a blank line (a new file is just the block)."""
    if not text:
        return block_text(body)
    nl = _newline(text)
    block = block_text(body, nl)
    span = _block_span(text, where)
    if span is not None:
        return text[: span[0]] + block + text[span[1] :]
    sep = "" if text.endswith(nl * 2) else (nl if text.endswith(nl) else nl * 2)
    return text + sep + block


def block_remove(text: str, where: str) -> str | None:
    """``text`` without the BigMind block and the blank line install put before it.

    Returns None when nothing but whitespace is left (the file was ours alone).
    """
    span = _block_span(text, where)
    if span is None:
        return text
    nl = _newline(text)
    head, tail = text[: span[0]], text[span[1] :]
    if not tail and head.endswith(nl * 2):
        head = head[: -len(nl)]  # the separator block_set added
    out = head + tail
    return out if out.strip() else None


# -- JSON and JSON with comments (VS Code's mcp.json is JSONC) -------------------------------
_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.S)


def strip_jsonc(text: str) -> tuple[str, bool]:
    """Remove // and /* */ comments and trailing commas outside strings.

    Returns (json_text, had_comments).
    """
    found = False

    def keep(m: re.Match[str]) -> str:
        nonlocal found
        tok = m.group(0)
        if tok.startswith('"'):
            return tok
        if tok.startswith("/"):
            found = True
            return "\n" * tok.count("\n")  # keep line numbers for error messages
        return ""

    return _TOKEN.sub(keep, text), found


def load_json(text: str | None, where: str) -> tuple[dict[str, Any], bool]:
    """Parse a config file (JSON or JSONC). Returns (document, had_comments)."""
    if text is None or not text.strip():
        return {}, False
    plain, comments = strip_jsonc(text.lstrip("\ufeff"))
    try:
        doc = json.loads(plain)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{where} is not valid JSON (line {exc.lineno}: {exc.msg}); "
            "fix it or move it away — nothing was changed."
        ) from exc
    if not isinstance(doc, dict):
        raise InvalidInput(f"{where} holds a JSON {type(doc).__name__}, not an object.")
    return doc, comments


def dump_json(doc: dict[str, Any], like: str | None = None) -> str:
    """Serialise with the indentation (and line endings) the original file used."""
    indent: int | str | None = 2
    if like and "\n" not in like.strip():
        indent = None  # a one-line file stays on one line
    elif like:
        m = re.search(r"\n([ \t]+)\S", like)
        if m:
            ws = m.group(1)
            indent = ws if "\t" in ws else len(ws)
    out = json.dumps(doc, indent=indent, ensure_ascii=False)
    out += "\n" if like is None or like.endswith("\n") else ""
    return out.replace("\n", "\r\n") if like and "\r\n" in like else out


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
