"""How `bigmind serve` ends: when stdin closes, every request read before is answered, then the
process exits 0; with the model loaded it stops its threads first (no native abort)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import mcp.client.stdio
import pytest
from conftest import free_port
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_calls import BIGMIND, serve_env

from bigmind.config import Settings

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
WAIT_S = 120  # generous bound for one process on a loaded machine; a hang fails, not blocks


def initialize(capabilities: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": capabilities or {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]


def tool(msg_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}


def run_then_close(
    env: dict[str, str], messages: list[dict[str, Any]], tmp_path: Path
) -> tuple[int, dict[Any, dict[str, Any]], str]:
    """Write every message in one go, close stdin, wait for the exit: (code, replies by id,
    stderr)."""
    err = tmp_path / "serve.err"
    with err.open("w") as errlog:
        proc = subprocess.run(
            [str(BIGMIND), "serve"],
            input="".join(json.dumps(m) + "\n" for m in messages),
            stdout=subprocess.PIPE,
            stderr=errlog,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=WAIT_S,
        )
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    replies = {m["id"]: m for m in lines if "method" not in m}
    return proc.returncode, replies, err.read_text()


def test_every_request_sent_before_stdin_closes_is_answered(
    settings: Settings, tmp_path: Path
) -> None:
    """initialize, tools/list and two tool calls, then EOF at once: the calls (the first one
    migrates a fresh database) used to be cancelled by the end of input, unanswered."""
    messages = [
        *initialize(),
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        tool(3, "memory_start_session", ide_hint="eof-test"),
        tool(4, "memory_store_fact", category="preference", fact="Answers come before exit"),
    ]
    code, replies, err = run_then_close(serve_env(settings), messages, tmp_path)
    assert sorted(replies) == [1, 2, 3, 4], err
    assert "BigMind Session" in replies[3]["result"]["content"][0]["text"]
    assert replies[4]["result"]["structuredContent"]["created"] is True
    assert code == 0, err


def test_a_call_waiting_on_the_client_is_still_answered_after_stdin_closes(
    settings: Settings, tmp_path: Path
) -> None:
    """A client that declares roots is asked for them; it has closed stdin and never answers,
    so the call waits for the roots' timeout in flight, then runs in the process's project."""
    messages = [*initialize({"roots": {"listChanged": False}}), tool(2, "memory_get_context")]
    code, replies, err = run_then_close(serve_env(settings), messages, tmp_path)
    assert sorted(replies) == [1, 2], err
    assert "BigMind Context" in replies[2]["result"]["content"][0]["text"]
    assert code == 0, err


@pytest.mark.sqlite_only
def test_stdin_closed_right_after_initialize_exits_0(settings: Settings, tmp_path: Path) -> None:
    code, replies, err = run_then_close(serve_env(settings), initialize(), tmp_path)
    assert sorted(replies) == [1] and code == 0, err
    assert not settings.db_path.exists()  # nothing was asked of the memory: nothing opened


@pytest.mark.anyio
@pytest.mark.sqlite_only
async def test_no_native_abort_at_exit_while_the_model_works(
    settings: Settings, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five short sessions through the SDK's client, each ending while the model loads or
    embeds: the process stops its threads and releases the model before the interpreter
    exits. Before, "terminate called without an active exception" and SIGABRT (3 in 5)."""
    # The SDK kills a server still running 2 s after stdin closed; how the server ends by
    # itself is what is tested here, on a machine that may be slow.
    monkeypatch.setattr(mcp.client.stdio, "PROCESS_TERMINATION_TIMEOUT", float(WAIT_S))
    env = serve_env(
        settings,
        BIGMIND_EMBED_MODEL=str(model_dir),
        BIGMIND_WEB="1",  # the profile page's thread is stopped too
        BIGMIND_PORT=str(free_port()),
    )
    # sh reports the server's exit code on stderr: the SDK's client does not expose it.
    script = f'"{BIGMIND}" serve; echo "exit code $?" >&2'
    for run in range(5):
        params = StdioServerParameters(command="/bin/sh", args=["-c", script], env=env)
        errlog = tmp_path / f"serve-{run}.err"
        with errlog.open("w") as err:
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await session.call_tool("memory_start_session", {"focus": f"run {run}"})
                    for n in range(12):
                        fact = f"Run {run} fact {n}: the build uses tool number {n * 7}"
                        await session.call_tool(
                            "memory_store_fact", {"category": "codebase", "fact": fact}
                        )
                    await session.call_tool("memory_recall", {"query": "which build tool"})
        text = errlog.read_text()
        assert "terminate called" not in text, text
        assert "exit code 0" in text.splitlines()[-1], text
