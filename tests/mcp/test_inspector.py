"""Conformance: the official MCP Inspector CLI lists BigMind's tools and calls one over stdio.

The Inspector is pinned to 0.15.0, the newest release that runs on Node 20: 0.16–1.x declare
``node >=22.7.5`` and 2.x ``>=22.19``. Skipped when ``npx`` is missing or the package cannot
be fetched (offline); the first run downloads it (~30 s), later runs use npm's cache.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from npx import npx_env, run_npx

# The first run fetches the Inspector from npm (run_npx gives it 240 s, then skips).
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"
BIGMIND = Path(sys.executable).parent / "bigmind"


def inspector(tmp_path: Path, *method: str) -> Any:
    """`npx @modelcontextprotocol/inspector --cli bigmind serve --method …`; its JSON answer."""
    # The Inspector starts the server with a minimal environment plus its -e pairs.
    server_env = {
        "BIGMIND_DB_PATH": str(tmp_path / "memory.db"),
        "BIGMIND_USER": "inspector",
        "BIGMIND_EMBED_MODEL": "off",
    }
    args = ["--cli"]
    for key, value in server_env.items():
        args += ["-e", f"{key}={value}"]
    args += [str(BIGMIND), "serve", *method]
    r = run_npx(INSPECTOR, *args, env=npx_env(), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout)


@pytest.mark.anyio
async def test_tools_list_has_every_tool(tmp_path: Path, client: Client) -> None:  # type: ignore[type-arg]
    listed = inspector(tmp_path, "--method", "tools/list")
    expected = {t.name for t in await client.list_tools()}
    names = {t["name"] for t in listed["tools"]}
    assert names == expected
    assert all(t["description"] and t["inputSchema"]["type"] == "object" for t in listed["tools"])


def test_tools_call_start_session_returns_the_session_line(tmp_path: Path) -> None:
    result = inspector(tmp_path, "--method", "tools/call", "--tool-name", "memory_start_session")
    assert not result.get("isError")
    text = result["content"][0]["text"]
    assert re.match(r"🧠 BigMind Session: `[0-9a-f-]{36}`\n", text), text
    assert result["structuredContent"]["session_id"] in text.splitlines()[0]
    assert (tmp_path / "memory.db").is_file()
