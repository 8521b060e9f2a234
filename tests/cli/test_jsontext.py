"""jsontext.patch: an edit rewrites only what changed, and undoing it gives the text back."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from bigmind.cli import edits, jsontext

ENTRY = {"type": "stdio", "command": "bigmind", "args": ["serve"]}
KEYS = ("mcpServers", "bigmind")

LAYOUTS = {
    "hand formatted": (
        '{\n    "mcpServers": {\n        "other":   { "command": "npx", "args": ["-y", "x"] }\n'
        "    }\n}\n"
    ),
    "one line": '{"mcpServers": {"other": {"command": "x"}}}',
    "tabs and CRLF": '{\r\n\t"numStartups": 3,\r\n\t"projects": {"/a": {"mcpServers": {}}}\r\n}',
    "comments and trailing commas": (
        '{\n  // servers\n  "mcpServers": {\n    "x": {"url": "http://a//b"}, /* mine */\n  },\n}\n'
    ),
    "byte-order mark": '\ufeff{ "a": 1 }',
    "empty object": "{}",
    "no container": '{\n  "theme": "dark",\n  "list": [1, 2]\n}',
}


def edited(text: str, fn: Callable[[dict[str, Any]], None]) -> str:
    doc = edits.load_json(text, "f")
    new = copy.deepcopy(doc)
    fn(new)
    out = jsontext.patch(text, doc, new)
    assert edits.load_json(out, "f") == new
    return out


def add(doc: dict[str, Any]) -> None:
    edits.entry_set(doc, KEYS, ENTRY, "f")


def remove(doc: dict[str, Any]) -> None:
    edits.entry_remove(doc, KEYS)


@pytest.mark.parametrize("text", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_adding_then_removing_our_member_gives_back_the_same_bytes(text: str) -> None:
    installed = edited(text, add)
    assert edited(installed, remove) == text


def test_a_new_member_follows_the_file_s_indentation_and_line_endings() -> None:
    out = edited(LAYOUTS["tabs and CRLF"], add)
    assert out.startswith(LAYOUTS["tabs and CRLF"][:-3] + ',\r\n\t"mcpServers": {\r\n\t\t"bigmind"')
    assert "\n" not in out.replace("\r\n", "")
    assert edited(LAYOUTS["one line"], add).count("\n") == 0


def test_changing_our_entry_rewrites_only_the_value_that_changed() -> None:
    text = '{"mcpServers": {"bigmind": {"command": "/old/bigmind",  "env": {"X": "1"}}}}'
    out = edited(text, lambda d: edits.entry_set(d, KEYS, {"command": "bigmind"}, "f"))
    assert out == text.replace('"/old/bigmind"', '"bigmind"')


def test_other_members_and_comments_stay_when_ours_sits_between_them() -> None:
    text = '{\n  "a": 1,\n  // about b\n  "mcpServers": {"bigmind": {}},\n  "z": 2\n}\n'
    out = edited(text, lambda d: d.pop("mcpServers"))
    assert out == '{\n  "a": 1,\n  "z": 2\n}\n'
    first = '{"mcpServers": {"bigmind": {}, "other": {}}, "z": 2}'
    assert edited(first, remove) == '{"mcpServers": {"other": {}}, "z": 2}'


def test_hooks_are_appended_to_and_removed_from_arrays_in_place() -> None:
    own = {"hooks": [{"type": "command", "command": "echo hi"}]}
    text = json.dumps({"model": "opus", "hooks": {"SessionStart": [own]}}, indent=2)
    ours = {"hooks": [{"type": "command", "command": "bigmind context --hook"}]}
    added = edited(text, lambda d: d["hooks"]["SessionStart"].append(ours))
    end_of_own = text.index("      }\n    ]") + len("      }")
    assert added.startswith(text[:end_of_own] + ',\n      {\n        "hooks": [\n')
    assert edited(added, lambda d: d["hooks"]["SessionStart"].pop()) == text


def test_a_missing_or_blank_file_is_written_whole() -> None:
    assert jsontext.patch(None, {}, {"a": [1]}) == '{\n  "a": [\n    1\n  ]\n}\n'
    assert jsontext.patch("  \n", {}, {"a": 1}) == '{\n  "a": 1\n}\n'
