"""The real thing: `bigmind serve` spawned as a subprocess, driven over stdio by the official SDK."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_calls import BIGMIND, send, spawn_serve

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]


def _params(db: Path, *args: str, command: str | None = None) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env.update(BIGMIND_DB_PATH=str(db), BIGMIND_USER="stdio-user")
    return StdioServerParameters(
        command=command or str(BIGMIND), args=list(args) or ["serve"], env=env, cwd=str(ROOT)
    )


async def _session_loop(params: StdioServerParameters, errlog: Path) -> str:
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name == "BigMind Memory"
                assert "memory_start_session" in (init.instructions or "")
                tools = await session.list_tools()
                assert len(tools.tools) >= 17
                r = await session.call_tool("memory_start_session", {"ide_hint": "stdio-test"})
                first = r.content[0].text.splitlines()[0]
                assert first.startswith("🧠 BigMind Session: `")
                sid = r.structured_content["session_id"]
                await session.call_tool(
                    "memory_store_fact",
                    {"category": "preference", "fact": "Survives restarts", "session_id": sid},
                )
                await session.call_tool(
                    "memory_store_fact",
                    {
                        "category": "gotcha",
                        "fact": "db.py locks under load",
                        "files": ["src/db.py"],
                    },
                )
                r = await session.call_tool(
                    "memory_announce_focus", {"description": "writer", "files": "./src\\db.py"}
                )
                assert "⚠️ Gotcha for src/db.py: #" in r.content[0].text
                await session.call_tool(
                    "memory_record_attempt",
                    {"approach": "Poll the queue every second", "outcome": "failed", "why": "CPU"},
                )
                await session.call_tool(
                    "memory_end_session",
                    {
                        "session_id": sid,
                        "one_liner": "stdio loop",
                        "topics": ["stdio"],
                        "outcome": "ok",
                        "summary": "Drove the server over stdio.",
                    },
                )
                bad = await session.call_tool("memory_vacuum", {"older_than_days": 0})
                assert bad.is_error
                return sid


async def test_serve_over_stdio_and_data_survives_restart(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    sid = await _session_loop(_params(db), tmp_path / "err1.log")
    # A second server process on the same file sees everything the first one wrote.
    with (tmp_path / "err2.log").open("w") as err:
        async with stdio_client(_params(db), errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                r = await session.call_tool("memory_search_facts", {"query": "restarts"})
                assert "Survives restarts" in r.content[0].text
                r = await session.call_tool("memory_recall", {"query": "why does db.py lock"})
                assert r.content[0].text.startswith("⚠️ Gotcha for db.py: #")
                r = await session.call_tool("memory_get_context", {})
                assert "stdio loop" in r.content[0].text
                r = await session.call_tool("memory_recall", {"query": "poll the queue"})
                assert "failed because CPU" in r.content[0].text
                r = await session.call_tool("memory_get_session_detail", {"session_id": sid})
                assert "Drove the server over stdio." in r.content[0].text


async def test_python_src_server_py_launches_the_same_server(tmp_path: Path) -> None:
    params = _params(tmp_path / "m.db", str(ROOT / "src" / "server.py"), command=sys.executable)
    await _session_loop(params, tmp_path / "err.log")


async def test_python_dash_m_bigmind_serve(tmp_path: Path) -> None:
    params = _params(tmp_path / "m.db", "-m", "bigmind", "serve", command=sys.executable)
    await _session_loop(params, tmp_path / "err.log")


def test_stdout_carries_only_json_rpc(tmp_path: Path) -> None:
    """Every line the server writes to stdout must be a JSON-RPC message."""
    with spawn_serve(tmp_path / "m.db", BIGMIND_LOG_LEVEL="DEBUG") as proc:
        assert proc.stdin and proc.stdout
        try:
            send(proc, ("memory_get_context", {}), ("memory_vacuum", {"older_than_days": -1}))
            parsed: list[dict[str, Any]] = []
            while {p.get("id") for p in parsed} < {1, 2, 3}:
                line = proc.stdout.readline()  # each must be one JSON-RPC message
                assert line, "server closed stdout before answering"
                parsed.append(json.loads(line))
                assert parsed[-1]["jsonrpc"] == "2.0"
        finally:
            proc.stdin.close()
            proc.wait(timeout=30)
        rest = proc.stdout.read()
    context = next(p for p in parsed if p.get("id") == 2)
    assert "BigMind Context" in context["result"]["content"][0]["text"]
    assert rest.strip() == ""


def test_restart_server_replies_then_the_process_exits_cleanly(tmp_path: Path) -> None:
    with spawn_serve(tmp_path / "m.db") as proc:
        assert proc.stdin and proc.stdout
        send(proc, ("memory_restart_server", {}))
        replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert "will exit" in replies[1]["result"]["content"][0]["text"]
        assert proc.wait(timeout=20) == 0  # exits by itself, stdin still open


async def test_paraphrase_over_stdio_with_the_real_model(tmp_path: Path, model_dir: Path) -> None:
    params = _params(tmp_path / "memory.db")
    assert params.env is not None
    params.env["BIGMIND_EMBED_MODEL"] = str(model_dir)
    with (tmp_path / "err.log").open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.call_tool("memory_start_session", {"focus": "writing tests"})
                for fact in ("The user prefers pytest for all Python tests", "Tabs, not spaces"):
                    await session.call_tool(
                        "memory_store_fact", {"category": "preference", "fact": fact}
                    )
                data: dict[str, Any] = {}
                for _ in range(300):  # the model loads in the background: ~1 s here
                    r = await session.call_tool(
                        "memory_search_semantic", {"query": "Which testing library do we use?"}
                    )
                    data = r.structured_content or {}
                    if data.get("note") is None:
                        break
                    await anyio.sleep(0.1)
                assert data.get("note") is None, data
                assert "pytest" in data["results"][0]["text"]
                assert "semantic #1" in data["results"][0]["why"]
