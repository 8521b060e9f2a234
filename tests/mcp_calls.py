"""Helpers for driving BigMind as an agent would: in-memory calls and raw stdio JSON-RPC."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from bigmind.config import Settings

BIGMIND = Path(sys.executable).parent / "bigmind"
Cli = Client  # type: ignore[type-arg]


async def call(client: Cli, tool: str, **args: Any) -> tuple[str, dict[str, Any]]:
    """Call a tool; return its text and structured content."""
    r = await client.call_tool(tool, args)
    return r.content[0].text, (r.structured_content or {})


async def refused(client: Cli, tool: str, **args: Any) -> str:
    """Call a tool that must fail; return the ToolError's message."""
    with pytest.raises(ToolError) as exc:
        await client.call_tool(tool, args)
    return str(exc.value)


async def end(
    client: Cli, session_id: str | None, one_liner: str = "x", **more: Any
) -> dict[str, Any]:
    """memory_end_session with the required arguments defaulted."""
    args: dict[str, Any] = {"topics": None, "outcome": None, "summary": None} | more
    _, data = await call(
        client, "memory_end_session", session_id=session_id, one_liner=one_liner, **args
    )
    return data


def serve_env(settings: Settings, **more: str) -> dict[str, str]:
    """Environment for `bigmind serve` on ``settings``' database, with no model and no page
    unless ``more`` says otherwise (BIGMIND_* taken from nothing else)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env |= {
        "BIGMIND_DB_PATH": str(settings.db_path),
        "BIGMIND_USER": settings.user,
        "BIGMIND_EMBED_MODEL": "off",
        "BIGMIND_WEB": "false",
    }
    if settings.db_url:
        env["BIGMIND_DB_URL"] = settings.db_url
    return env | more


def spawn_serve(db: Path, **env: str) -> subprocess.Popen[str]:
    """`bigmind serve` as a subprocess with pipes, BIGMIND_* taken only from ``env``."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    full.update(BIGMIND_DB_PATH=str(db), **env)
    return subprocess.Popen(
        [str(BIGMIND), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=full,
    )


INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def send(proc: subprocess.Popen[str], *calls: tuple[str, dict[str, Any]]) -> None:
    """Initialize, then send ``(tool, arguments)`` calls with ids 2, 3, …"""
    assert proc.stdin
    msgs: list[dict[str, Any]] = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for i, (tool, arguments) in enumerate(calls, start=2):
        msgs.append(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        )
    for m in msgs:
        proc.stdin.write(json.dumps(m) + "\n")
    proc.stdin.flush()
