"""Claude Code hooks: the packet arrives at SessionStart, SessionEnd closes what the agent left
open, and neither ever blocks or fails the client."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import pytest
from cli_run import run_hook
from mcp_calls import BIGMIND

from bigmind.cli.hooks import FENCE_OPEN, HOOK_DEADLINE_S, auto_one_liner, first_prompt
from bigmind.cli.main import main
from bigmind.storage.pg import WRITE_LOCK_KEY
from bigmind.storage.store import Store

hook = run_hook  # in this process: see mcp_calls.run_hook


def hook_process(
    *args: str, event: dict[str, object] | None = None
) -> subprocess.CompletedProcess[str]:
    # No assertion on how long a hook takes (that flakes on a loaded machine): the deadline is
    # the watchdog's job (HOOK_DEADLINE_S), and the tests check that it fires and what it says.
    return subprocess.run(
        [str(BIGMIND), *args, "--hook"],
        input=json.dumps(event or {}),
        capture_output=True,
        text=True,
        timeout=30,
    )


def transcript(tmp_path: Path, *entries: dict[str, object]) -> Path:
    path = tmp_path / "transcript.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    return path


def user(text: object) -> dict[str, object]:
    return {"type": "user", "message": {"role": "user", "content": text}}


def assistant(text: str) -> dict[str, object]:
    return {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    }


def test_session_start_hook_returns_the_fenced_packet(store: Store, tmp_path: Path) -> None:
    store.store_fact("preference", "Prefers pytest over unittest")
    r = hook("context", event={"session_id": "cc-1", "hook_event_name": "SessionStart"})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    text = out["additionalContext"]
    assert text.startswith(FENCE_OPEN) and text.rstrip().endswith("</bigmind-memory>")
    assert "not instructions" in text and "Prefers pytest over unittest" in text
    assert "hook skipped" not in r.stderr  # answered, not given up on by the watchdog
    assert store.open_sessions() == []  # the agent opens its session; the hook only reads


@contextmanager
def write_locked(store: Store, db_path: Path, db_url: str | None) -> Iterator[None]:
    """Another client holds the database's write lock meanwhile."""
    if db_url:
        import psycopg

        with psycopg.connect(db_url, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (WRITE_LOCK_KEY,))
            yield
        return
    locker = apsw.Connection(str(db_path))
    locker.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        locker.execute("ROLLBACK")
        locker.close()


def test_hooks_fail_open_when_the_database_is_locked(
    store: Store, db_path: Path, db_url: str | None
) -> None:
    store.start_session("cc")
    with write_locked(store, db_path, db_url):
        for command in ("context", "close"):
            r = hook(command, event={"session_id": "cc-2"})
            assert r.returncode == 0 and r.stdout == ""
            assert "hook skipped" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.e2e
def test_hooks_fail_open_when_the_database_cannot_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("BIGMIND_DB_PATH", str(tmp_path / "file" / "memory.db"))
    r = hook_process("context")
    assert r.returncode == 0 and r.stdout == "" and "BIGMIND_DB_PATH" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.e2e
def test_a_hook_whose_stdin_never_closes_is_ended_by_its_watchdog() -> None:
    with subprocess.Popen(
        [str(BIGMIND), "context", "--hook"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            code = proc.wait(timeout=30)  # a hang guard only: the watchdog ends it before
        finally:
            proc.kill()
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()
    # The watchdog fired (its message) and exited 0 while the main thread still waited on stdin.
    assert code == 0 and out == ""
    assert f"hook skipped: no answer within {HOOK_DEADLINE_S} s" in err


def test_session_end_closes_the_session_named_in_the_transcript(
    store: Store, tmp_path: Path
) -> None:
    mine = store.start_session("claude-code").session.id
    other = store.start_session("vscode").session.id  # another window's session
    path = transcript(
        tmp_path,
        user("<command-name>/clear</command-name>"),
        user("Fix the flaky login test in auth/tests.py"),
        assistant(f"🧠 BigMind Session: `{mine}`\nLooking at the test…"),
        user([{"type": "tool_result", "content": "ok"}]),
    )
    r = hook("close", event={"session_id": "cc-3", "transcript_path": str(path)})
    assert r.returncode == 0 and "hook skipped" not in r.stderr, r.stderr
    s = store.get_session(mine)
    assert not s.is_open and s.auto_closed == 1
    assert s.one_liner == "[auto-closed] Fix the flaky login test in auth/tests.py"
    assert store.get_session(other).is_open


def test_a_session_the_agent_ended_keeps_its_own_one_liner(store: Store, tmp_path: Path) -> None:
    sid = store.start_session("claude-code").session.id
    store.end_session(sid, "Fixed login test", ["auth"], "done", None)
    path = transcript(tmp_path, user("hi"), assistant(f"BigMind Session: `{sid}`"))
    r = hook("close", event={"session_id": "cc-4", "transcript_path": str(path)})
    assert r.returncode == 0
    s = store.get_session(sid)
    assert s.one_liner == "Fixed login test" and s.auto_closed == 0


def test_without_a_session_line_the_end_hook_closes_what_opened_since_its_start(
    store: Store, tmp_path: Path, db_path: Path
) -> None:
    before = store.start_session("vscode").session.id
    time.sleep(0.05)
    r = hook("context", event={"session_id": "cc-5"})
    assert r.returncode == 0
    during = store.start_session("claude-code").session.id
    path = transcript(tmp_path, user("Rename the config module"))
    r = hook("close", event={"session_id": "cc-5", "transcript_path": str(path), "reason": "exit"})
    assert r.returncode == 0, r.stderr
    assert not store.get_session(during).is_open
    assert store.get_session(before).is_open
    assert not (db_path.parent / "hooks" / "claude-cc-5.json").exists()


def test_close_on_the_command_line(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    a = store.start_session("x").session.id
    assert main(["close", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"closed": [a]}
    assert main(["close"]) == 0
    assert capsys.readouterr().out.strip() == "No open sessions to close."
    assert main(["close", "--session", "nope"]) == 3
    assert "Traceback" not in capsys.readouterr().err


def test_first_prompt_and_one_liner_from_a_transcript() -> None:
    lines = "\n".join(
        json.dumps(e)
        for e in (
            {"type": "summary", "summary": "x"},
            user([{"type": "text", "text": "  Explain\nthe   cache  "}]),
        )
    )
    assert first_prompt(lines) == "Explain the cache"
    assert first_prompt("not json\n") == ""
    long = auto_one_liner(json.dumps(user("word " * 100)))
    assert 110 <= len(long) <= 120 and long.endswith("word…")
    assert auto_one_liner("", "logout") == "[auto-closed at Claude Code session end] reason: logout"
