"""Conformance: the real Claude Code CLI (from npm) reads what `bigmind install` wrote.

Claude Code runs headless (`claude -p`) in a temporary HOME with a fake key and an API address
where nothing listens, so no request leaves the machine: the model never answers, but the
session still starts and ends. The test checks Claude Code's own debug log: the SessionStart
hook's JSON was accepted and its packet added, and on termination the SessionEnd hook closed the
BigMind session named in the prompt. It also asks `claude mcp get` about the `.mcp.json` entry.
Pinned to the version this was written against; skipped without npx or the package.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from npx import npx_command, npx_env, run_npx

from bigmind.storage.store import Store

CLAUDE_CODE = "@anthropic-ai/claude-code@2.1.197"
BIGMIND = Path(sys.executable).parent / "bigmind"
pytestmark = [
    pytest.mark.skipif(os.name == "nt", reason="POSIX signals"),
    pytest.mark.e2e,
    # The first run fetches Claude Code from npm (235 MB; run_npx gives it 240 s, then skips).
    pytest.mark.timeout(420),
]


def _wait_for(path: Path, text: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = path.read_text(errors="replace") if path.exists() else ""
        if text in log:
            return log
        time.sleep(0.2)
    return path.read_text(errors="replace") if path.exists() else ""


def test_claude_code_runs_the_hooks_bigmind_installed(
    tmp_path: Path, store: Store, db_path: Path, db_url: str | None
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    r = subprocess.run(
        [str(BIGMIND), "install", "--client", "claude-code", "--project", str(project)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    store.store_fact("preference", "Prefers pytest over unittest")
    sid = store.start_session("claude-code").session.id
    env = npx_env(
        ANTHROPIC_API_KEY="sk-ant-test-not-a-key",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",  # nothing listens: no request leaves
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        BIGMIND_DB_PATH=str(db_path),
        BIGMIND_USER="alice",
        BIGMIND_EMBED_MODEL="off",
        **({"BIGMIND_DB_URL": db_url} if db_url else {}),
    )
    version = run_npx(CLAUDE_CODE, "--version", env=env, cwd=project)  # fetches it once
    assert version.returncode == 0 and "Claude Code" in version.stdout, version.stderr

    got = run_npx(CLAUDE_CODE, "mcp", "get", "bigmind", env=env, cwd=project, timeout=60)
    # The committed .mcp.json starts `bigmind` from PATH; the hooks are this machine's.
    assert "Scope: Project config" in got.stdout and "Command: bigmind\n" in got.stdout

    debug = tmp_path / "claude-debug.txt"
    prompt = f"Continue BigMind Session: `{sid}` and fix the login test"
    proc = subprocess.Popen(
        [*npx_command(CLAUDE_CODE), "-p", prompt, "--debug-file", str(debug)],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        log = _wait_for(debug, "provided additionalContext", 60)
        assert "Successfully parsed and validated hook JSON output" in log, log[-3000:]
        assert f"Hook SessionStart ({BIGMIND} context --hook) provided additionalContext" in log
        assert "Prefers pytest over unittest" in log
        # Quit once the prompt is in the transcript the SessionEnd hook reads.
        projects = Path(os.environ["HOME"]) / ".claude" / "projects"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
            sid in t.read_text(errors="replace") for t in projects.rglob("*.jsonl")
        ):
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGTERM)  # the user quits: Claude Code runs SessionEnd
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    log = _wait_for(debug, "close --hook] completed with status 0", 10)
    assert f"SessionEnd:other [{BIGMIND} close --hook] completed with status 0" in log
    s = store.get_session(sid)
    assert not s.is_open and s.auto_closed == 1
    assert s.one_liner.startswith(f"[auto-closed] Continue BigMind Session: `{sid}`")


def test_claude_code_reads_the_user_level_server_and_forgets_it_on_uninstall(
    tmp_path: Path,
) -> None:
    anywhere = tmp_path / "anywhere"
    anywhere.mkdir()
    env = npx_env(
        ANTHROPIC_API_KEY="sk-ant-test-not-a-key",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    # Claude Code starts its state file (~/.claude.json) on the first run.
    first = run_npx(CLAUDE_CODE, "mcp", "get", "bigmind", env=env, cwd=anywhere)
    assert 'No MCP server named "bigmind"' in first.stdout + first.stderr
    state = Path(os.environ["HOME"]) / ".claude.json"
    theirs = json.loads(state.read_text())
    for verb in ("install", "uninstall"):
        r = subprocess.run(
            [str(BIGMIND), verb, "--client", "claude-code"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 0, r.stderr
        if verb == "install":
            got = run_npx(CLAUDE_CODE, "mcp", "get", "bigmind", env=env, cwd=anywhere, timeout=60)
            assert "Scope: User config" in got.stdout and f"Command: {BIGMIND}\n" in got.stdout
    got = run_npx(CLAUDE_CODE, "mcp", "get", "bigmind", env=env, cwd=anywhere, timeout=60)
    assert got.returncode != 0 and 'No MCP server named "bigmind"' in got.stdout + got.stderr
    left = json.loads(state.read_text())
    assert "mcpServers" not in left and left["machineID"] == theirs["machineID"]
