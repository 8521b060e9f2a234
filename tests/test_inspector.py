"""Conformance: the official MCP Inspector CLI lists BigMind's tools and calls one over stdio.

The Inspector is pinned to 0.15.0, the newest release that runs on Node 20: 0.16–1.x declare
``node >=22.7.5`` and 2.x ``>=22.19``. Skipped when ``npx`` is missing or the package cannot
be fetched (offline); the first run downloads it (~30 s), later runs use npm's cache.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"
# npm's cache as it was at import, before the conftest points HOME at a temporary folder:
# otherwise every test would download the Inspector again.
NPM_CACHE = (
    {}
    if any(k.lower() == "npm_config_cache" for k in os.environ)
    else {"NPM_CONFIG_CACHE": str(Path.home() / ".npm")}
)
BIGMIND = Path(sys.executable).parent / "bigmind"
# npm's own failures (no network, registry down), as opposed to the Inspector's verdicts.
FETCH_FAILED = re.compile(
    r"npm (?:ERR!|error) (?:code )?(?:E[A-Z0-9]+|network)|ENOTFOUND|EAI_AGAIN"
)


def inspector(tmp_path: Path, *method: str) -> Any:
    """`npx @modelcontextprotocol/inspector --cli bigmind serve --method …`; its JSON answer."""
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not installed (Node.js is needed for the MCP Inspector)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env |= NPM_CACHE
    # The Inspector starts the server with a minimal environment plus its -e pairs.
    server_env = {
        "BIGMIND_DB_PATH": str(tmp_path / "memory.db"),
        "BIGMIND_USER": "inspector",
        "BIGMIND_EMBED_MODEL": "off",
    }
    command = [npx, "--yes", INSPECTOR, "--cli"]
    for key, value in server_env.items():
        command += ["-e", f"{key}={value}"]
    command += [str(BIGMIND), "serve", *method]
    try:
        r = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npx {INSPECTOR} did not finish in 240 s (fetching it?)")
    fetch_failed = FETCH_FAILED.search(r.stderr)
    if r.returncode != 0 and fetch_failed:
        pytest.skip(f"cannot fetch {INSPECTOR}: {fetch_failed.group(0)}")
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
