"""Tool profiles: `full` serves every tool, `compact` (BIGMIND_TOOLS=compact) eight thin adapters
that cover the session loop; what each costs in every turn's context (tools/list)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from fastmcp import Client
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_calls import BIGMIND, Cli, call, refused

from bigmind.config import Settings
from bigmind.mcp.instructions import server_instructions
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime

pytestmark = pytest.mark.anyio

FULL_MAX_CHARS = 20_000  # ≤ 5,000 tokens at 4 characters a token
COMPACT_MAX_CHARS = 6_000  # ≤ 1,500 tokens
COMPACT = {
    "memory_start_session",
    "memory_recall",
    "memory_store_fact",
    "memory_flag_important",
    "memory_end_session",
    "memory_fix_fact",
    "memory_journal",
    "memory_get",
}


def wire_size(tools: list) -> int:  # type: ignore[type-arg]
    """What tools/list sends (camelCase, no null fields), as compact JSON."""
    wire = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    return len(json.dumps(wire, ensure_ascii=False, separators=(",", ":")))


@pytest.fixture
async def compact(settings: Settings, runtime: Runtime):  # type: ignore[no-untyped-def]
    s = settings.model_copy(update={"tools": "compact"})
    async with Client(build_server(s, runtime)) as c:
        yield c


async def test_full_profile_lists_every_tool_within_its_budget(client: Cli) -> None:
    tools = await client.list_tools()
    assert len(tools) > 30
    assert wire_size(tools) <= FULL_MAX_CHARS, f"tools/list is {wire_size(tools):,} characters"
    assert all(t.title is None and t.meta is None for t in tools)  # no derived title, no tags


async def test_compact_profile_is_eight_tools_within_its_budget(compact: Cli) -> None:
    tools = await compact.list_tools()
    assert {t.name for t in tools} == COMPACT
    assert wire_size(tools) <= COMPACT_MAX_CHARS, f"tools/list is {wire_size(tools):,} characters"


@pytest.mark.parametrize("profile", ["full", "compact"])
async def test_the_instructions_name_only_tools_the_profile_serves(
    settings: Settings, runtime: Runtime, profile: str
) -> None:
    server = build_server(settings.model_copy(update={"tools": profile}), runtime)
    async with Client(server) as c:
        served = {t.name for t in await c.list_tools()}
    named = set(re.findall(r"memory_\w+", server.instructions or ""))
    assert "memory_start_session" in named and named <= served


async def test_the_session_loop_in_the_compact_profile(compact: Cli) -> None:
    _, started = await call(compact, "memory_start_session", focus="the build")
    sid = started["session_id"]
    _, stored = await call(
        compact, "memory_store_fact", category="decision", fact="We build with uv", session_id=sid
    )
    fid = stored["fact_id"]
    text, found = await call(compact, "memory_recall", query="how do we build")
    assert fid in [h["id"] for h in found["results"]], text
    await call(compact, "memory_flag_important", content="Chose uv", flag_reason="decision")
    _, hyp = await call(compact, "memory_journal", action="add", text="uv is faster")
    _, res = await call(
        compact, "memory_journal", action="resolve", id=hyp["hypothesis_id"], text="yes"
    )
    assert res["hypothesis"]["status"] == "confirmed"
    _, fixed = await call(
        compact,
        "memory_fix_fact",
        action="update",
        fact_id=fid,
        fact="We build with uv 0.5",
        reason="precise",
    )
    assert fixed["fact"]["fact"] == "We build with uv 0.5"
    _, ended = await call(compact, "memory_end_session", one_liner="Build chosen", topics="build")
    assert ended["session_id"] == sid and ended["was_open"]
    _, detail = await call(compact, "memory_get", what="session", session_id=sid)
    assert detail["session"]["one_liner"] == "Build chosen"
    text, _ = await call(compact, "memory_get", what="context")
    assert "Build chosen" in text
    await call(compact, "memory_fix_fact", action="deprecate", fact_id=fid, reason="moved on")
    _, gone = await call(compact, "memory_fix_fact", action="forget", fact_id=fid, reason="x")
    assert gone


async def test_compact_actions_name_the_missing_argument(compact: Cli) -> None:
    assert "needs text" in await refused(compact, "memory_journal", action="add")
    assert "needs session_id" in await refused(compact, "memory_get", what="session")
    assert "needs fact" in await refused(
        compact, "memory_fix_fact", action="update", fact_id=1, reason="r"
    )


@pytest.mark.e2e
async def test_bigmind_serve_with_the_compact_profile_over_stdio(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env.update(BIGMIND_DB_PATH=str(tmp_path / "m.db"), BIGMIND_TOOLS="compact", BIGMIND_WEB="false")
    params = StdioServerParameters(command=str(BIGMIND), args=["serve"], env=env)
    with (tmp_path / "err.log").open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.instructions == server_instructions("compact")
                listed = await session.list_tools()
                assert {t.name for t in listed.tools} == COMPACT
                # A reminder set through the compact journal leads the packet when due.
                args = {"action": "remind", "text": "Ship the docs", "when": "2020-01-01"}
                set_ = await session.call_tool("memory_journal", args)
                assert set_.content[0].text.startswith("Reminder #1 set")
                got = await session.call_tool("memory_get", {"what": "context"})
                assert "⏰ Reminder #1 " in got.content[0].text
