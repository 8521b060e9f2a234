"""MCP resources: the packet, a session and a fact, listed and read like the tools that show
them, scoped to the configured user (reading writes nothing: tests/storage/test_reads_never_write.py)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_calls import BIGMIND, Cli, call, end

from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime

pytestmark = pytest.mark.anyio


async def _read(client: Cli, uri: str) -> str:
    contents = await client.read_resource(uri)
    return "\n".join(str(getattr(c, "text", "")) for c in contents)


async def _refused(client: Cli, uri: str) -> str:
    with pytest.raises(MCPError) as exc:
        await client.read_resource(uri)
    return str(exc.value)


async def _seed(client: Cli) -> dict[str, Any]:
    _, s = await call(client, "memory_start_session")
    sid = s["session_id"]
    _, f = await call(client, "memory_store_fact", category="decision", fact="Payments use Kafka")
    await call(client, "memory_flag_important", content="Kafka keeps 7 days", flag_reason="ops")
    await end(client, sid, "Chose Kafka for payments", summary="Kafka carries payment events")
    return {"session": sid, "fact": f["fact_id"]}


async def test_the_packet_is_a_resource_and_sessions_and_facts_are_templates(
    client: Client,  # type: ignore[type-arg]
) -> None:
    assert [str(r.uri) for r in await client.list_resources()] == ["bigmind://context"]
    templates = {t.uri_template for t in await client.list_resource_templates()}
    assert templates == {"bigmind://sessions/{session_id}", "bigmind://facts/{fact_id}"}


async def test_reading_each_resource_returns_what_its_tool_shows(
    client: Client,  # type: ignore[type-arg]
) -> None:
    seeded = await _seed(client)
    packet = await _read(client, "bigmind://context")
    tool_packet, _ = await call(client, "memory_get_context")
    assert packet.startswith("## 🧠 BigMind Context") and packet in tool_packet
    assert "Payments use Kafka" in packet and "Chose Kafka for payments" in packet
    session = await _read(client, f"bigmind://sessions/{seeded['session']}")
    assert "Kafka carries payment events" in session and "Kafka keeps 7 days" in session
    fact = await _read(client, f"bigmind://facts/{seeded['fact']}")
    assert f"Fact #{seeded['fact']} [decision]" in fact and "Payments use Kafka" in fact


async def test_an_unknown_id_is_a_clear_not_found(
    client: Client,  # type: ignore[type-arg]
) -> None:
    assert "No fact #999 in your memory" in await _refused(client, "bigmind://facts/999")
    assert "fact ids are numbers" in await _refused(client, "bigmind://facts/kafka")
    huge = await _refused(client, "bigmind://facts/99999999999999999999")  # once an overflow
    assert "fact ids are numbers" in huge
    assert "No session 'nope'" in await _refused(client, "bigmind://sessions/nope")


async def test_another_users_session_and_fact_are_not_found(
    settings_for: Callable[[str], Settings],
    runtime: Runtime,
) -> None:
    bob = settings_for("bob")
    bob_rt = Runtime(bob)
    try:
        async with Client(build_server(bob, bob_rt)) as c:
            seeded = await _seed(c)
            assert "Payments use Kafka" in await _read(c, f"bigmind://facts/{seeded['fact']}")
        async with Client(build_server(runtime.settings, runtime)) as c:
            fact = await _refused(c, f"bigmind://facts/{seeded['fact']}")
            session = await _refused(c, f"bigmind://sessions/{seeded['session']}")
            packet = await _read(c, "bigmind://context")
        assert f"No fact #{seeded['fact']}" in fact and "No session" in session
        assert "Kafka" not in packet
    finally:
        bob_rt.close()


@pytest.mark.e2e
async def test_resources_over_stdio(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env.update(
        BIGMIND_DB_PATH=str(tmp_path / "m.db"),
        BIGMIND_USER="stdio-user",
        BIGMIND_EMBED_MODEL="off",
        BIGMIND_WEB="false",
    )
    params = StdioServerParameters(command=str(BIGMIND), args=["serve"], env=env)
    with (tmp_path / "err.log").open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                r = await session.call_tool(
                    "memory_store_fact", {"category": "decision", "fact": "Stdio reads facts"}
                )
                fact_id = r.structured_content["fact_id"]  # type: ignore[index]
                listed = await session.list_resources()
                assert [str(x.uri) for x in listed.resources] == ["bigmind://context"]
                packet = await session.read_resource("bigmind://context")  # type: ignore[arg-type]
                assert "Stdio reads facts" in getattr(packet.contents[0], "text", "")
                fact = await session.read_resource(f"bigmind://facts/{fact_id}")  # type: ignore[arg-type]
                assert "Stdio reads facts" in getattr(fact.contents[0], "text", "")
