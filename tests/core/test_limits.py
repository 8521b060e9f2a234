"""Limits live in bigmind.limits: the tools' schemas and descriptions promise what the store does."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastmcp import Client
from mcp_calls import call, end, refused

from bigmind import limits

pytestmark = pytest.mark.anyio

NUMBERS = {
    v
    for name, v in vars(limits).items()
    if name.isupper() and isinstance(v, int) and not isinstance(v, bool)
} | {n for name, v in vars(limits).items() if name.isupper() and isinstance(v, tuple) for n in v}


def _properties(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, prop in schema.get("properties", {}).items():
        merged = dict(prop)
        for alt in prop.get("anyOf", []):
            merged.update({k: v for k, v in alt.items() if k != "type"})
        out[name] = merged
    return out


async def test_every_bound_in_the_tool_schemas_comes_from_limits(
    client: Client,  # type: ignore[type-arg]
) -> None:
    checked = 0
    for tool in await client.list_tools():
        for name, prop in _properties(tool.input_schema).items():
            for key in ("maximum", "maxLength"):
                if key in prop and prop[key] not in (1, 1.0):  # 0…1 units are not limits
                    assert prop[key] in NUMBERS, f"{tool.name}.{name} {key}={prop[key]}"
                    checked += 1
            if name == "limit":
                assert prop["maximum"] == limits.RESULTS, tool.name
            if name == "importance":
                assert (prop["minimum"], prop["maximum"]) == limits.IMPORTANCE, tool.name
            for n in re.findall(r"≤ ([\d,]+) (?:characters|chars)", prop.get("description", "")):
                assert int(n.replace(",", "")) in NUMBERS, f"{tool.name}.{name}: ≤ {n}"
                checked += 1
    assert checked >= 15


async def test_a_one_liner_as_long_as_promised_is_kept(
    client: Client,  # type: ignore[type-arg]
) -> None:
    tools = {t.name: t for t in await client.list_tools()}
    described = tools["memory_end_session"].input_schema["properties"]["one_liner"]["description"]
    assert f"≤ {limits.ONE_LINER} characters" in described
    _, s = await call(client, "memory_start_session")
    longest = "x" * limits.ONE_LINER
    done = await end(client, s["session_id"], longest)
    assert done["session_id"] == s["session_id"]
    _, s2 = await call(client, "memory_start_session")
    message = await refused(
        client,
        "memory_end_session",
        session_id=s2["session_id"],
        one_liner=longest + "x",
        topics=None,
        outcome=None,
        summary=None,
    )
    assert f"the limit is {limits.ONE_LINER:,}" in message


async def test_a_fact_at_the_limit_is_stored_and_one_past_it_is_refused(
    client: Client,  # type: ignore[type-arg]
) -> None:
    _, data = await call(client, "memory_store_fact", category="note", fact="y" * limits.FACT)
    assert data["created"]
    message = await refused(
        client, "memory_store_fact", category="note", fact="z" * (limits.FACT + 1)
    )
    assert f"the limit is {limits.FACT:,}" in message
