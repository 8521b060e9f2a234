"""Bad tool arguments get one line naming the argument and what it takes (bigmind.mcp.arguments),
for every tool: no pydantic dump, no links, no "For further information visit…"."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_calls import Cli, refused

from bigmind.mcp.arguments import expected

pytestmark = pytest.mark.anyio
WRONG = {"not": "this"}  # no argument of any tool takes an object


def sample(prop: dict[str, Any]) -> Any:
    """A value ``prop`` accepts."""
    if "anyOf" in prop:
        return sample(next(o for o in prop["anyOf"] if o.get("type") != "null"))
    if "enum" in prop:
        return prop["enum"][0]
    kind = prop.get("type")
    if kind in ("integer", "number"):
        return prop.get("minimum", 1)
    if kind == "boolean":
        return True
    if kind == "array":
        return ["x"]
    return "x"


def assert_readable(msg: str, *names: str) -> None:
    assert "\n" not in msg, msg
    low = msg.lower()
    leaks = ("pydantic", "errors.pydantic.dev", "http", "for further information", "[type=")
    for leak in (*leaks, "validation error"):
        assert leak not in low, msg
    for name in names:
        assert name in msg, (name, msg)


async def bad_calls(client: Cli) -> list[tuple[str, dict[str, Any], str]]:
    """(tool, arguments, the argument the answer must name) for every tool in tools/list: each
    argument wrongly typed, each required argument left out, and an argument no tool has."""
    calls = []
    for tool in await client.list_tools():
        props: dict[str, Any] = tool.input_schema.get("properties", {})
        required: list[str] = tool.input_schema.get("required", [])
        valid = {name: sample(props[name]) for name in required}
        for name in props:
            calls.append((tool.name, {**valid, name: WRONG}, f"'{name}'"))
        for name in required:
            calls.append((tool.name, {k: v for k, v in valid.items() if k != name}, name))
        calls.append((tool.name, {**valid, "no_such_argument": 1}, "no_such_argument"))
    return calls


# sqlite_only: arguments are refused before a tool runs, so the database is never reached.
@pytest.mark.sqlite_only
async def test_every_tool_answers_bad_arguments_in_one_line(client: Cli) -> None:
    calls = await bad_calls(client)
    tools = {t.name for t in await client.list_tools()}
    assert {name for name, _args, _arg in calls} == tools
    assert len(calls) > 3 * len(tools)
    for name, args, arg in calls:
        assert_readable(await refused(client, name, **args), arg)


@pytest.mark.parametrize(
    ("tool", "args", "says"),
    [
        (
            "memory_store_fact",
            {"category": "decision", "fact": "x", "importance": "high"},
            """'importance' must be an integer from 1 to 10, got "high".""",
        ),
        (
            "memory_store_fact",
            {"category": "decision", "fact": "x", "importance": 42},
            "'importance' must be an integer from 1 to 10, got 42.",
        ),
        (
            "memory_store_fact",
            {"category": "decision", "fact": "x", "scope": "everywhere"},
            """'scope' must be one of project, global (or left out), got "everywhere".""",
        ),
        ("memory_end_session", {}, "missing required argument one_liner."),
        (
            "memory_store_fact",
            {"category": "decision", "content": "x"},
            "missing required argument fact; unknown argument content; this tool takes: "
            "category, fact, confidence, session_id, importance, scope, files, replaces.",
        ),
        (
            "memory_store_fact",
            {"category": "decision", "fact": "x", "sesion_id": "s"},
            "unknown argument sesion_id (did you mean session_id?); this tool takes:",
        ),
        ("memory_get_stats", {"verbose": True}, "this tool takes: no arguments."),
        (
            "memory_recall",
            {"query": "q" * 2_500},
            "'query' must be a string of at most 2,000 characters, got 2,500 characters.",
        ),
        ("memory_forget", {"kind": "fact", "id": [3]}, "'id' must be an integer or a string"),
        (
            "memory_search_facts",
            {"query": "x", "include_deprecated": "maybe"},
            """'include_deprecated' must be true or false, got "maybe".""",
        ),
    ],
)
@pytest.mark.sqlite_only
async def test_bad_arguments_say_what_the_argument_takes(
    client: Cli, tool: str, args: dict[str, Any], says: str
) -> None:
    msg = await refused(client, tool, **args)
    assert says in msg
    assert_readable(msg)


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        ({"type": "integer", "minimum": 1}, "an integer of at least 1"),
        ({"type": "number", "minimum": 0.0, "maximum": 1.0}, "a number from 0.0 to 1.0"),
        ({"type": "array", "items": {"type": "string"}}, "an array of strings"),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "an integer (or left out)"),
        ({"enum": ["all", "project"], "type": "string"}, "one of all, project"),
        ({}, "a valid value"),
    ],
)
def test_schemas_in_words(schema: dict[str, Any], words: str) -> None:
    assert expected(schema) == words
