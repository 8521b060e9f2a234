"""Every tool through a real in-memory MCP client, as an agent sees it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastmcp import Client
from mcp_calls import Cli, call, end, refused

from bigmind.models import ts_ago
from bigmind.runtime import Runtime
from bigmind.storage.db import SQLiteBackend

pytestmark = pytest.mark.anyio

CORE_TOOLS = {
    "memory_start_session",
    "memory_end_session",
    "memory_flag_important",
    "memory_append_chunk",
    "memory_get_context",
    "memory_get_session_detail",
    "memory_list_sessions",
    "memory_search_chunks",
    "memory_search_facts",
    "memory_store_fact",
    "memory_update_profile",
    "memory_deprecate_fact",
    "memory_update_fact",
    "memory_forget",
    "memory_get_stats",
    "memory_get_instructions",
    "memory_health_check",
    "memory_vacuum",
    "memory_export",
}


async def test_tool_list_and_annotations(client: Cli) -> None:
    tools = {t.name: t for t in await client.list_tools()}
    assert set(tools) >= CORE_TOOLS
    assert tools["memory_search_facts"].annotations.read_only_hint is True
    assert tools["memory_vacuum"].annotations.destructive_hint is True
    assert tools["memory_forget"].annotations.destructive_hint is True
    assert tools["memory_update_fact"].annotations.destructive_hint is False
    assert "CALL THIS FIRST" in (tools["memory_start_session"].description or "")
    assert all(t.description for t in tools.values())


async def test_server_instructions_and_init_prompt(client: Cli) -> None:
    assert "memory_start_session" in (client.session.instructions or "")
    prompt = await client.get_prompt("bigmind_init")
    text = prompt.messages[0].content.text
    assert "BigMind Context" in text and "memory_end_session" in text


async def test_start_session_announces_id_and_returns_context(client: Cli) -> None:
    text, data = await call(client, "memory_start_session", ide_hint="vscode")
    first = text.splitlines()[0]
    assert re.fullmatch(r"🧠 BigMind Session: `[0-9a-f-]{36}`", first)
    assert data["session_id"] in first
    assert "## 🧠 BigMind Context" in text
    assert data["context_tokens"] <= 1300


async def test_start_session_resumes_given_id(client: Cli) -> None:
    _, data = await call(client, "memory_start_session")
    text, again = await call(client, "memory_start_session", session_id=data["session_id"])
    assert again["session_id"] == data["session_id"] and again["resumed"]
    assert "(resumed)" in text.splitlines()[0]


async def test_start_session_for_another_user_is_refused(client: Cli) -> None:
    msg = await refused(client, "memory_start_session", user_id="mallory")
    assert "acts as user 'alice'" in msg


async def test_start_session_auto_closes_stale(client: Cli, runtime: Runtime) -> None:
    _, old = await call(client, "memory_start_session")
    backend = runtime.store.db
    with backend.transaction() as tx:
        tx.execute(
            "UPDATE sessions SET started_at = ? WHERE id = ?", (ts_ago(hours=30), old["session_id"])
        )
    text, data = await call(client, "memory_start_session")
    assert data["auto_closed"] == [old["session_id"]]
    assert "Auto-closed 1 session" in text


async def test_full_session_loop(client: Cli) -> None:
    _, s = await call(client, "memory_start_session")
    sid = s["session_id"]
    await call(client, "memory_update_profile", role="Backend engineer", pinned_facts=["uses uv"])
    _, f = await call(client, "memory_store_fact", category="preference", fact="Prefers pytest")
    _, c = await call(
        client,
        "memory_flag_important",
        content="Chose apsw over sqlite3 because it loads extensions",
        flag_reason="decision",
        session_id=sid,
    )
    text, _ = await call(
        client,
        "memory_end_session",
        session_id=sid,
        one_liner="Chose the SQLite driver",
        topics=["db", "driver"],
        outcome="apsw it is",
        summary="We compared drivers and chose apsw.",
        key_facts=["apsw loads sqlite-vec"],
        code_refs="bigmind/db.py",
        importance=8,
    )
    assert f"Closed session `{sid}`" in text
    detail, d = await call(client, "memory_get_session_detail", session_id=sid)
    assert "We compared drivers" in detail and "apsw loads sqlite-vec" in detail
    assert "Chose apsw over sqlite3" in detail and d["chunk_ids"] == [c["chunk_id"]]
    # The next conversation starts where this one stopped.
    text, _ = await call(client, "memory_start_session")
    assert "**Role:** Backend engineer" in text and "📌 uses uv" in text
    assert f"#{f['fact_id']}" in text and "Chose the SQLite driver" in text


async def test_writes_without_a_session_open_one(client: Cli) -> None:
    text, data = await call(client, "memory_append_chunk", content="hello", role="user")
    assert data["opened_session"] and "No session was open" in text
    _, again = await call(client, "memory_append_chunk", content="again")
    assert again["session_id"] == data["session_id"] and not again["opened_session"]
    assert again["seq"] == 2


async def test_end_session_without_id_closes_the_open_one(client: Cli) -> None:
    _, s = await call(client, "memory_start_session")
    _, data = await call(
        client,
        "memory_end_session",
        session_id=None,
        one_liner="done",
        topics="x",
        outcome=None,
        summary=None,
    )
    assert data["session_id"] == s["session_id"] and data["was_open"]


async def test_store_fact_dedup_and_validation(client: Cli) -> None:
    _, a = await call(client, "memory_store_fact", category="decision", fact="Use WAL mode")
    text, b = await call(client, "memory_store_fact", category="decision", fact="use wal mode.")
    assert not b["created"] and b["fact_id"] == a["fact_id"] and "Already known" in text
    msg = await refused(client, "memory_store_fact", category="decision", fact="x", confidence=2)
    assert "confidence" in msg
    msg = await refused(client, "memory_store_fact", category="Bad Cat", fact="x")
    assert "category" in msg and "lowercase" in msg
    msg = await refused(
        client, "memory_store_fact", category="decision", fact="x", session_id="nope"
    )
    assert "No session 'nope'" in msg


async def test_search_tools_answer_questions_with_why(client: Cli) -> None:
    await call(client, "memory_store_fact", category="preference", fact="The user prefers pytest")
    await call(
        client, "memory_append_chunk", content="We fixed the flaky login test by mocking time"
    )
    text, data = await call(
        client, "memory_search_facts", query="Which testing tool does the user prefer?"
    )
    assert data["results"][0]["text"] == "The user prefers pytest"
    assert "why: keyword match" in text and "confidence 1.00" in text
    text, data = await call(
        client, "memory_search_chunks", query='how did we fix the "flaky" login test?'
    )
    assert data["results"] and data["results"][0]["kind"] == "chunk"
    text, data = await call(client, "memory_search_chunks", query="kubernetes")
    assert data["results"] == [] and "No chunks match" in text


async def test_deprecate_fact(client: Cli) -> None:
    _, f = await call(client, "memory_store_fact", category="decision", fact="Deploy on Fridays")
    text, _ = await call(client, "memory_deprecate_fact", fact_id=f["fact_id"], reason="bad idea")
    assert "Deprecated fact" in text
    _, data = await call(client, "memory_search_facts", query="deploy fridays")
    assert data["results"] == []
    msg = await refused(client, "memory_deprecate_fact", fact_id=999, reason="x")
    assert "No fact #999" in msg
    msg = await refused(client, "memory_deprecate_fact", fact_id=f["fact_id"], reason="x")
    assert "already deprecated" in msg


async def test_get_context_has_no_side_effects(client: Cli, runtime: Runtime) -> None:
    before = runtime.store.count_sessions()
    text, data = await call(client, "memory_get_context")
    assert "BigMind Context" in text and data["context_tokens"] <= 1300
    assert runtime.store.count_sessions() == before


async def test_session_detail_errors_and_cap(client: Cli) -> None:
    msg = await refused(client, "memory_get_session_detail", session_id="missing")
    assert "memory_list_sessions" in msg
    _, s = await call(client, "memory_start_session")
    for i in range(30):
        await call(client, "memory_append_chunk", content=f"chunk {i} " + "word " * 100)
    text, _ = await call(
        client, "memory_get_session_detail", session_id=s["session_id"], max_tokens=500
    )
    assert "more exchanges not shown" in text


async def test_list_sessions(client: Cli) -> None:
    _, s = await call(client, "memory_start_session")
    await call(
        client,
        "memory_end_session",
        session_id=s["session_id"],
        one_liner="Fixed CI",
        topics=["ci"],
        outcome="green",
        summary="s",
    )
    await call(client, "memory_start_session")
    text, data = await call(client, "memory_list_sessions", limit=5)
    assert "🟡 in progress" in text and "Fixed CI" in text and len(data["sessions"]) == 2
    _, data = await call(client, "memory_list_sessions", topic="ci")
    assert [x["one_liner"] for x in data["sessions"]] == ["Fixed CI"]
    assert "limit" in await refused(client, "memory_list_sessions", limit=0)


async def test_update_profile_requires_a_field(client: Cli) -> None:
    assert "at least one" in await refused(client, "memory_update_profile")


async def test_stats_health_instructions(client: Cli) -> None:
    await call(client, "memory_store_fact", category="preference", fact="x1")
    _, stats = await call(client, "memory_get_stats")
    assert stats["counts"]["facts"] == 1 and stats["facts_by_category"] == {"preference": 1}
    text, health = await call(client, "memory_health_check", stale_days=7)
    assert health["ok"] and "full-text index facts" in text
    r = await client.call_tool("memory_get_instructions", {})
    assert "Session ritual" in r.content[0].text


async def test_vacuum_prunes_old_chunks_only(client: Cli, runtime: Runtime) -> None:
    _, s = await call(client, "memory_start_session")
    await call(client, "memory_append_chunk", content="old chunk")
    await call(client, "memory_append_chunk", content="new chunk")
    await end(client, s["session_id"], "x", summary="kept summary")
    backend: SQLiteBackend = runtime.store.db  # type: ignore[assignment]
    with backend.transaction() as tx:
        tx.execute(
            "UPDATE conversation_chunks SET created_at = ? WHERE content = 'old chunk'",
            (ts_ago(days=100),),
        )
    _text, data = await call(client, "memory_vacuum", older_than_days=30)
    assert data["deleted_chunks"] == 1
    _, hits = await call(client, "memory_search_chunks", query="chunk")
    assert [h["text"] for h in hits["results"]] == ["new **chunk**"]
    detail, _ = await call(client, "memory_get_session_detail", session_id=s["session_id"])
    assert "kept summary" in detail
    assert "older_than_days" in await refused(client, "memory_vacuum", older_than_days=0)


async def test_export_is_complete_atomic_and_never_clobbers(client: Cli, tmp_path: Path) -> None:
    _, s = await call(client, "memory_start_session")
    await call(client, "memory_store_fact", category="preference", fact="Prefers pytest")
    await call(client, "memory_append_chunk", content="a chunk")
    await call(client, "memory_update_profile", role="dev")
    await end(client, s["session_id"], "x", summary="sum")
    target = tmp_path / "data" / "exports" / "out" / "backup.json"
    _text, data = await call(client, "memory_export", output_path="out/backup.json")
    assert data["path"] == str(target) and target.exists()
    dump = json.loads(target.read_text())
    assert dump["format"] == "bigmind-export" and dump["user"]["username"] == "alice"
    assert len(dump["facts"]) == 1 and len(dump["conversation_chunks"]) == 1
    assert len(dump["session_summaries"]) == 1 and dump["identity_profile"][0]["role"] == "dev"
    before = target.read_text()
    assert "already exists" in await refused(client, "memory_export", output_path=str(target))
    assert target.read_text() == before
    await call(client, "memory_store_fact", category="preference", fact="Second fact")
    await call(client, "memory_export", output_path=str(target), overwrite=True)
    assert len(json.loads(target.read_text())["facts"]) == 2
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".bigmind-export-")]


async def test_the_export_tool_writes_inside_the_exports_folder_only(
    client: Cli, tmp_path: Path
) -> None:
    exports = tmp_path / "data" / "exports"
    exports.mkdir(parents=True)
    dotfile = tmp_path / ".bashrc"
    dotfile.write_text("alias ls='ls -F'\n")
    for path in ("../../.bashrc", str(dotfile), "../exports/../../x.json", str(tmp_path)):
        said = await refused(client, "memory_export", output_path=path, overwrite=True)
        assert "is outside" in said and "bigmind export --output PATH" in said
    (exports / "link.json").symlink_to(dotfile)
    (exports / "away").symlink_to(tmp_path)
    said = await refused(client, "memory_export", output_path="link.json", overwrite=True)
    assert "is outside" in said  # followed, it leads out
    (exports / "inner.json").write_text("{}")
    (exports / "alias.json").symlink_to(exports / "inner.json")
    said = await refused(client, "memory_export", output_path="alias.json", overwrite=True)
    assert "symbolic link" in said
    assert "is outside" in await refused(client, "memory_export", output_path="away/x.json")
    notes = exports / "notes.txt"
    notes.write_text("mine")
    said = await refused(client, "memory_export", output_path="notes.txt", overwrite=True)
    assert "is not a BigMind export" in said and notes.read_text() == "mine"
    said = await refused(client, "memory_export", output_path="n" * 300 + ".json")
    assert "a name of 305 bytes" in said
    said = await refused(client, "memory_import", input_path="d/" * 2100 + "x.json")
    assert "a path is at most 4,096" in said
    assert dotfile.read_text() == "alias ls='ls -F'\n"
    assert (exports / "inner.json").read_text() == "{}"


async def test_export_default_path_is_under_the_data_folder(client: Cli, tmp_path: Path) -> None:
    _, data = await call(client, "memory_export")
    path = Path(data["path"])
    assert path.parent == tmp_path / "data" / "exports" and path.name.startswith("bigmind_export_")


async def test_unexpected_database_problem_is_a_clear_tool_error(tmp_path: Path) -> None:
    from bigmind.config import Settings
    from bigmind.mcp.server import build_server

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    settings = Settings(db_path=blocker / "memory.db", user="alice")
    async with Client(build_server(settings)) as c:
        assert len(await c.list_tools()) >= 17  # the server answers without a database
        msg = await refused(c, "memory_get_context")
        assert "BIGMIND_DB_PATH" in msg


async def test_a_tilde_is_a_file_name_to_the_export_tool(client: Cli, tmp_path: Path) -> None:
    _, data = await call(client, "memory_export", output_path="~0")  # fuzzing found it
    assert data["path"] == str(tmp_path / "data" / "exports" / "~0")
    said = await refused(client, "memory_import", input_path="~nobody-such-user/x.json")
    assert "without ~" in said or "No export file" in said


async def test_stats_count_reminders_attempts_and_bound_files(client: Cli) -> None:
    await call(client, "memory_remind", text="Rotate the staging keys")
    await call(client, "memory_remind", text="Check the nightly build", when="2020-01-01")
    _, done = await call(client, "memory_remind", text="Already handled")
    await call(client, "memory_remind", done=done["reminder"]["id"])
    await call(
        client, "memory_record_attempt", approach="Poll every second", outcome="failed", why="CPU"
    )
    await call(
        client,
        "memory_store_fact",
        category="gotcha",
        fact="db.py locks under load",
        files=["src/db.py", "src/pool.py"],
    )
    _, data = await call(client, "memory_get_stats")
    counts = data["counts"]
    assert (counts["reminders_open"], counts["attempts"], counts["bound_files"]) == (2, 1, 2)
