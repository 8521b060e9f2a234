"""Privacy across the users of one database, tool by tool.

Alice fills her memory through the tools with texts that all carry ``MARKER``; bob then calls
every tool the server lists with arguments that would expose her data if privacy failed.
Nothing bob gets back may carry the marker or her session ids, her ids must be refused exactly
like unknown ids, and her rows must be unchanged afterwards. People and approved company
knowledge are shared: bob must see those. The servers run in team mode, alice an admin and
bob a member, so her pending company entry is hers and the curators' alone.

``MATRIX`` maps every listed tool to bob's case; a tool without a case fails
``test_matrix_covers_every_tool``.
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from mcp_calls import call
from privacy_world import (
    BOB,
    LURE,
    MARKER,
    PENDING,
    SHARED,
    SHARED_FILE,
    UNKNOWN_INT,
    Seed,
    Settings_for,
    World,
    alice_snapshot,
    assert_alice_intact,
    embedded,
    fill_seed,
    new_sid,
    open_world,
)

from bigmind.config import Settings
from bigmind.models import now_ts

pytestmark = pytest.mark.anyio

# -- bob's cases, one per tool ---------------------------------------------------------------------
Case = Callable[[World], Awaitable[None]]
MATRIX: dict[str, Case] = {}


def case(tool: str) -> Callable[[Case], Case]:
    def register(fn: Case) -> Case:
        assert tool not in MATRIX, tool
        MATRIX[tool] = fn
        return fn

    return register


def _query() -> str:
    return f"{MARKER} {LURE} {BOB}"


@case("memory_start_session")
async def _start_session(w: World) -> None:
    text, data = await w.call("memory_start_session", ide_hint="vscode")
    assert BOB in text and SHARED in text  # his fact, and the approved company entry
    assert data["auto_closed"] == []  # alice's session open for 30 h is not bob's to close
    text, _ = await w.call("memory_start_session", focus=_query())
    assert BOB in text
    await w.refused_like_unknown("memory_start_session", "session_id", w.a.open, new_sid())
    await w.refused_like_unknown("memory_start_session", "session_id", w.a.closed, new_sid())
    as_name = await w.refused("memory_start_session", user_id="alice")
    as_uid = await w.refused("memory_start_session", user_id=w.a.uid)
    as_nobody = await w.refused("memory_start_session", user_id="nobody")
    assert as_name == as_uid == as_nobody and "acts as user 'bob'" in as_name


@case("memory_end_session")
async def _end_session(w: World) -> None:
    args = {"one_liner": "bob's headline", "topics": None, "outcome": None, "summary": "bob's"}
    for sid in (w.a.open, w.a.closed):
        await w.refused_like_unknown("memory_end_session", "session_id", sid, new_sid(), **args)
    _, data = await w.call("memory_end_session", session_id=None, **args)
    assert data["session_id"] == w.bob_session and data["was_open"]


@case("memory_flag_important")
async def _flag_important(w: World) -> None:
    args = {"content": f"{BOB} decided", "flag_reason": "decision"}
    for sid in (w.a.open, w.a.closed):
        await w.refused_like_unknown("memory_flag_important", "session_id", sid, new_sid(), **args)
    _, data = await w.call("memory_flag_important", **args)
    assert data["session_id"] == w.bob_session


@case("memory_append_chunk")
async def _append_chunk(w: World) -> None:
    for sid in (w.a.open, w.a.closed):
        await w.refused_like_unknown(
            "memory_append_chunk", "session_id", sid, new_sid(), content=f"{BOB} intrudes"
        )
    _, data = await w.call("memory_append_chunk", content=f"{BOB} says hi")
    assert data["session_id"] == w.bob_session and data["seq"] == 2


@case("memory_get_context")
async def _get_context(w: World) -> None:
    text, _ = await w.call("memory_get_context")
    assert BOB in text and SHARED in text and "user `bob`" in text


@case("memory_get_session_detail")
async def _get_session_detail(w: World) -> None:
    for sid in (w.a.closed, w.a.open):
        await w.refused_like_unknown(
            "memory_get_session_detail", "session_id", sid, new_sid(), max_tokens=50_000
        )
    _, data = await w.call("memory_get_session_detail", session_id=w.bob_session)
    assert data["chunk_ids"] == [w.bob_chunk]


@case("memory_list_sessions")
async def _list_sessions(w: World) -> None:
    _, data = await w.call("memory_list_sessions", limit=100)
    assert [s["id"] for s in data["sessions"]] == [w.bob_session]
    _, data = await w.call("memory_list_sessions", limit=100, topic=MARKER)
    assert data["sessions"] == []


async def _search(w: World, tool: str, **args: Any) -> list[dict[str, Any]]:
    """Bob's search for alice's words and his own: only his rows (and shared ones) come back."""
    _, data = await w.call(tool, query=_query(), limit=100, **args)
    results = data["results"]
    private = [r for r in results if r["kind"] not in ("person", "global")]
    assert private and all(BOB in r["text"] for r in private), results
    return results


@case("memory_recall")
async def _recall(w: World) -> None:
    found = await _search(w, "memory_recall")
    assert {r["kind"] for r in found} == {"fact", "chunk", "person", "global"}
    assert all(SHARED in r["text"] for r in found if r["kind"] in ("person", "global"))
    await _search(w, "memory_recall", kinds=["fact", "chunk", "summary", "hypothesis"])
    # Alice's fact bound to a file bob also edits: never shown to him.
    text, data = await w.call("memory_recall", query=f"why does {SHARED_FILE} break")
    assert "gotchas" not in data and "Gotcha" not in text


@case("memory_search_semantic")
async def _search_semantic(w: World) -> None:
    await _search(w, "memory_search_semantic")
    await _search(w, "memory_search_semantic", kinds="summary, hypothesis, fact")


@case("memory_search_facts")
async def _search_facts(w: World) -> None:
    for deprecated in (False, True):
        found = await _search(w, "memory_search_facts", include_deprecated=deprecated)
        assert [r["id"] for r in found] == [w.bob_fact]


@case("memory_search_chunks")
async def _search_chunks(w: World) -> None:
    found = await _search(w, "memory_search_chunks")
    assert [r["id"] for r in found] == [w.bob_chunk]


@case("memory_store_fact")
async def _store_fact(w: World) -> None:
    # Alice's very fact, word for word: a new fact of bob's, not "already known as #<hers>".
    same = {"category": MARKER, "fact": f"{MARKER} fact: the {LURE} opens on tuesdays"}
    _, data = await w.call("memory_store_fact", **same)
    assert data["created"] and data["fact_id"] != w.a.fact
    await w.refused_like_unknown(
        "memory_store_fact", "session_id", w.a.open, new_sid(), category="x", fact=f"{BOB} new"
    )


@case("memory_update_profile")
async def _update_profile(w: World) -> None:
    _, data = await w.call("memory_update_profile", role=f"{BOB} engineer")
    p = data["profile"]
    assert p["role"] == f"{BOB} engineer" and p["preferences"] is None and p["pinned_facts"] is None


@case("memory_deprecate_fact")
async def _deprecate_fact(w: World) -> None:
    for fid in (w.a.fact, w.a.old_fact):  # an active one, and one already deprecated
        await w.refused_like_unknown(
            "memory_deprecate_fact", "fact_id", fid, UNKNOWN_INT, reason="bob says so"
        )


@case("memory_update_fact")
async def _update_fact(w: World) -> None:
    for fid in (w.a.fact, w.a.old_fact):  # an active one, and a deprecated one with history
        for args in ({}, {"fact": f"{BOB} rewrites it"}, {"importance": 1}, {"restore_version": 1}):
            await w.refused_like_unknown("memory_update_fact", "fact_id", fid, UNKNOWN_INT, **args)
    # Alice's very text for bob's own fact: no "fact #<hers> already says this" (the reply is
    # checked with the text bob gave blanked out); then his own words back.
    same = f"{MARKER} fact: the {LURE} opens on tuesdays"
    _, data = await w.call("memory_update_fact", fact_id=w.bob_fact, fact=same)
    assert data["changed"] == ["fact"]
    _, data = await w.call("memory_update_fact", fact_id=w.bob_fact, restore_version=1)
    assert data["fact"]["fact"] == f"{BOB} keeps the {LURE} tidy"


@case("memory_forget")
async def _forget(w: World) -> None:
    a = w.a
    for kind, theirs in (
        ("fact", a.fact),
        ("fact", a.old_fact),
        ("chunk", a.chunk),
        ("chunk", a.flagged),
        ("hypothesis", a.hypothesis),
        ("hypothesis", a.resolved),
        ("focus", a.focus),
        ("attempt", a.attempt),
    ):
        await w.refused_like_unknown("memory_forget", "id", theirs, UNKNOWN_INT, kind=kind)
    for kind in ("session", "summary"):
        for sid in (a.closed, a.open):
            await w.refused_like_unknown("memory_forget", "id", sid, new_sid(), kind=kind)
    # People are shared: a member may not forget the one alice added (and is told why).
    msg = await w.refused("memory_forget", kind="person", id="jdoe")
    assert "added by another user" in msg
    text, data = await w.call("memory_forget", kind="chunk", id=w.bob_chunk)
    assert data["removed"]["exchanges"] == 1 and "Forgot chunk" in text


@case("memory_add_hypothesis")
async def _add_hypothesis(w: World) -> None:
    for sid in (w.a.open, w.a.closed):
        await w.refused_like_unknown(
            "memory_add_hypothesis", "session_id", sid, new_sid(), hypothesis=f"{BOB} guesses"
        )
    await w.call("memory_add_hypothesis", hypothesis=f"{BOB} guesses")


@case("memory_record_attempt")
async def _record_attempt(w: World) -> None:
    args = {"approach": f"{BOB} pries the {LURE}", "outcome": "failed", "why": "stuck"}
    for sid in (w.a.open, w.a.closed):
        await w.refused_like_unknown("memory_record_attempt", "session_id", sid, new_sid(), **args)
    await w.call("memory_record_attempt", **args)
    # Alice's failed approach, in her very words: never a warning to bob.
    text, data = await w.call(
        "memory_announce_focus", description=f"open the {LURE} with a crowbar"
    )
    assert all(t["approach"].startswith(BOB) for t in data["failed_attempts"]), text


@case("memory_resolve_hypothesis")
async def _resolve_hypothesis(w: World) -> None:
    for hid in (w.a.hypothesis, w.a.resolved):
        for status in ("confirmed", "open"):
            await w.refused_like_unknown(
                "memory_resolve_hypothesis",
                "hypothesis_id",
                hid,
                UNKNOWN_INT,
                status=status,
                resolution="bob knows",
            )


@case("memory_remind")
async def _remind(w: World) -> None:
    await w.refused_like_unknown("memory_remind", "done", w.a.reminder, UNKNOWN_INT)
    for sid in (w.a.open, w.a.closed):
        await w.refused_like_unknown(
            "memory_remind", "session_id", sid, new_sid(), text=f"{BOB} remember"
        )
    _, data = await w.call("memory_remind", text=f"{BOB} remember", when="2020-01-01")
    text, _ = await w.call("memory_get_context")
    assert f"Reminder #{data['reminder']['id']} " in text


@case("memory_list_hypotheses")
async def _list_hypotheses(w: World) -> None:
    for status in ("all", "open", "refuted"):
        _, data = await w.call("memory_list_hypotheses", status=status, limit=100)
        assert data["hypotheses"] == []


@case("memory_scan_hypotheses")
async def _scan_hypotheses(w: World) -> None:
    # Bob's prediction in alice's words: the evidence found must be his rows only.
    await w.call("memory_add_hypothesis", hypothesis=f"the {LURE} passphrase opens on tuesdays")
    _, data = await w.call("memory_scan_hypotheses", stale_days=1)
    [scan] = data["scans"]
    evidence = {(e["kind"], e["id"]) for e in scan["evidence"]}
    assert evidence == {("fact", w.bob_fact), ("chunk", w.bob_chunk)}


@case("memory_announce_focus")
async def _announce_focus(w: World) -> None:
    for sid in (w.a.open, w.a.closed):
        await w.refused_like_unknown(
            "memory_announce_focus", "session_id", sid, new_sid(), description=f"{BOB} intrudes"
        )
    # The file alice's open session announced: not a conflict across users.
    text, data = await w.call(
        "memory_announce_focus",
        session_id=w.bob_session,
        description=f"{BOB} edits billing",
        files=[SHARED_FILE],
    )
    assert data["conflicts"] == [] and data["gotchas"] == [] and "⚠️" not in text


@case("memory_get_active_sessions")
async def _get_active_sessions(w: World) -> None:
    await call(
        w.bob,
        "memory_announce_focus",
        session_id=None,
        description=f"{BOB} on billing",
        files=[SHARED_FILE],
    )
    _, data = await w.call("memory_get_active_sessions")
    assert [s["session_id"] for s in data["sessions"]] == [w.bob_session]
    assert data["conflicts"] == []


@case("memory_close_stale_sessions")
async def _close_stale_sessions(w: World) -> None:
    for sid in (w.a.open, w.a.closed):
        await w.refused_like_unknown(
            "memory_close_stale_sessions", "session_id", sid, new_sid(), force=True
        )
    _, other = await call(w.bob, "memory_start_session")
    _, data = await w.call(
        "memory_close_stale_sessions", session_id=other["session_id"], idle_minutes=1, force=True
    )
    assert data["closed"] == [w.bob_session]  # alice's open session stays open


@case("memory_log_token_save")
async def _log_token_save(w: World) -> None:
    args = {"description": f"{BOB} saved", "tokens_saved": 5, "method_used": "memory"}
    for sid in (w.a.open, w.a.closed):
        await w.refused_like_unknown("memory_log_token_save", "session_id", sid, new_sid(), **args)
    await w.call("memory_log_token_save", session_id=None, **args)
    _, stats = await call(w.bob, "memory_get_stats")
    assert stats["token_savings"]["total"] == 5


@case("memory_diff_sessions")
async def _diff_sessions(w: World) -> None:
    for sid in (w.a.closed, w.a.open):
        await w.refused_like_unknown("memory_diff_sessions", "since_session_id", sid, new_sid())
    # Bob's session opened before alice wrote anything: only shared rows of hers show.
    text, data = await w.call("memory_diff_sessions", since_session_id=w.bob_session)
    assert data["counts"]["New facts"] == 1 and data["counts"]["Hypotheses added"] == 0
    assert data["counts"]["Sessions opened"] == 0 and data["counts"]["Profile changed"] == 0
    assert data["counts"]["People added or updated"] == 1 and "jdoe" in text
    assert data["counts"]["Company knowledge"] == 1 and SHARED in text


@case("memory_remember_person")
async def _remember_person(w: World) -> None:
    _, data = await w.call("memory_remember_person", username="jdoe", notes=f"{BOB} met her")
    assert not data["created"] and SHARED in data["person"]["notes"]
    assert BOB in data["person"]["notes"]


@case("memory_recall_person")
async def _recall_person(w: World) -> None:
    _, data = await w.call("memory_recall_person", query=f"who knows the {LURE}? {SHARED}")
    assert [p["username"] for p in data["people"]] == ["jdoe"]


@case("memory_list_people")
async def _list_people(w: World) -> None:
    _, data = await w.call("memory_list_people", limit=100)
    assert [p["username"] for p in data["people"]] == ["jdoe"]


@case("memory_who_knows")
async def _who_knows(w: World) -> None:
    """The directory answers from session topics and approved company knowledge: alice's
    "vault" topic and her approved entry name her; her private texts never surface."""
    text, data = await w.call("memory_who_knows", topic="vault")
    (alice,) = [p for p in data["people"] if p["username"] == "alice"]
    assert "`alice`" in text and "vault ×1" in text
    assert [t["topic"] for t in alice["topics"]] == ["vault"]
    assert [e["id"] for e in alice["entries"]] == [w.a.approved_entry]
    _, data = await w.call("memory_who_knows", topic=LURE)  # words of every private text
    assert {p["username"] for p in data["people"]} == {"alice"}  # the topic and the entry
    _, data = await w.call("memory_who_knows", topic=PENDING)
    assert data["people"] == []  # her pending entry is no company knowledge yet
    with w.alice_rt.store.db.transaction() as tx:
        w.alice_rt.store.directory.set_hidden(tx, True, now_ts())
    try:
        _, data = await w.call("memory_who_knows", topic="vault")
        assert data["people"] == []
    finally:
        with w.alice_rt.store.db.transaction() as tx:
            w.alice_rt.store.directory.set_hidden(tx, False, now_ts())


@case("memory_get_stats")
async def _get_stats(w: World) -> None:
    _, data = await w.call("memory_get_stats")
    counts = data["counts"]
    assert counts["sessions"] == counts["open_sessions"] == 1
    assert counts["facts"] == counts["chunks"] == 1
    assert counts["summaries"] == counts["hypotheses"] == counts["deprecated_facts"] == 0
    assert counts["global_approved"] == 1  # shared
    assert data["facts_by_category"] == {"preference": 1}
    assert data["token_savings"]["total"] == 0
    assert all(b["resolved"] == 0 for b in data["hypothesis_calibration"])


@case("memory_get_instructions")
async def _get_instructions(w: World) -> None:
    text, _ = await w.call("memory_get_instructions")
    assert "memory_start_session" in text


@case("memory_health_check")
async def _health_check(w: World) -> None:
    _, data = await w.call("memory_health_check", stale_days=30)
    checks = {c["name"]: c["detail"] for c in data["checks"]}
    assert checks["open sessions"].startswith(f"1 open, oldest `{w.bob_session}`")
    assert checks["facts untouched for 30 days"].startswith("0 ")
    assert checks["low-confidence facts (< 0.5)"] == "0"


@case("memory_vacuum")
async def _vacuum(w: World) -> None:
    _, data = await w.call("memory_vacuum", older_than_days=1)
    assert data["deleted_chunks"] == 0  # alice's 10-day-old chunks are not bob's


@case("memory_export")
async def _export(w: World) -> None:
    _, data = await w.call("memory_export", output_path=w.path("bob.json").name)
    w.check("bob's export file", Path(data["path"]).read_text(encoding="utf-8"))
    assert data["counts"]["sessions"] == data["counts"]["facts"] == 1
    assert data["counts"]["conversation_chunks"] == 1 and data["counts"]["hypotheses"] == 0
    assert data["counts"]["global_knowledge"] == 0  # alice promoted it


@case("memory_import")
async def _import(w: World) -> None:
    # A fact naming alice's session as its source: refused in the very words a random id
    # gets (nothing says the session exists), and no link to her one-liner on bob's pages.
    said = []
    for sid in (w.a.closed, new_sid()):
        naming = {
            "format": "bigmind-export",
            "version": 1,
            "user": {"username": "bob"},
            "facts": [{"category": "x", "fact": f"{BOB} src", "source_session": sid}],
        }
        path = w.path("naming.json")
        path.write_text(json.dumps(naming), encoding="utf-8")
        msg = await w.refused("memory_import", input_path=str(path), _allow=[sid])
        said.append(msg.replace(sid, "<id>").replace(str(path), "<path>"))
    assert said[0] == said[1] and "not in the file nor yours" in said[0]
    # Alice's own export, merged into bob's memory: bob's copies get ids of his own.
    _, out = await call(await w.alice(), "memory_export", output_path=w.path("alice.json").name)
    _, data = await call(w.bob, "memory_import", input_path=out["path"])
    assert data["added"]["sessions"] == 2
    _, listed = await call(w.bob, "memory_list_sessions")
    assert not {w.a.closed, w.a.open} & {s["id"] for s in listed["sessions"]}
    # A file that reuses alice's integer ids and names her as owner: bob's new rows, new ids.
    sid = new_sid()
    crafted = {
        "format": "bigmind-export",
        "version": 1,
        "user": {"username": "alice", "id": w.a.uid},
        "sessions": [{"id": sid, "user_id": w.a.uid, "started_at": now_ts(), "one_liner": ""}],
        "facts": [{"id": w.a.fact, "user_id": w.a.uid, "category": "x", "fact": f"{BOB} 1"}],
        "conversation_chunks": [
            {
                "id": w.a.chunk,
                "user_id": w.a.uid,
                "session_id": sid,
                "role": "user",
                "content": f"{BOB} 2",
                "seq": 1,
            }
        ],
        "hypotheses": [{"id": w.a.hypothesis, "user_id": w.a.uid, "hypothesis": f"{BOB} 3"}],
        "identity_profile": [{"user_id": w.a.uid, "role": f"{BOB} role"}],
    }
    path = w.path("crafted.json")
    path.write_text(json.dumps(crafted), encoding="utf-8")
    _, data = await w.call("memory_import", input_path=str(path))
    assert data["added"]["facts"] == data["added"]["hypotheses"] == 1
    _, found = await call(w.bob, "memory_search_facts", query=f"{BOB} 1")
    assert w.a.fact not in [r["id"] for r in found["results"]]
    _, sessions = await call(w.bob, "memory_list_sessions")
    assert sid in [s["id"] for s in sessions["sessions"]]


@case("memory_promote_to_global")
async def _promote_to_global(w: World) -> None:
    await w.refused_like_unknown(
        "memory_promote_to_global",
        "source_session",
        w.a.closed,
        new_sid(),
        category="pattern",
        title=f"{BOB} pattern",
        content="Retry with backoff",
    )
    _, data = await w.call(
        "memory_promote_to_global", category="pattern", title=f"{BOB} idea", content="Cache it"
    )
    assert data["created"] and data["status"] == "pending"
    # Alice's approved entry, word for word: shared, so "already known" is no leak.
    _, data = await w.call(
        "memory_promote_to_global",
        category="standard",
        title=f"{SHARED} vault policy",
        content=f"{SHARED}: the {LURE} rotates keys monthly",
    )
    assert not data["created"] and data["entry_id"] == w.a.approved_entry


@case("memory_search_global")
async def _search_global(w: World) -> None:
    _, data = await w.call("memory_search_global", query=f"{PENDING} {SHARED} {LURE}", limit=100)
    assert [r["id"] for r in data["results"]] == [w.a.approved_entry]


@case("memory_list_global")
async def _list_global(w: World) -> None:
    _, data = await w.call("memory_list_global", limit=100)
    assert [e["id"] for e in data["entries"]] == [w.a.approved_entry]
    for status in ("pending", "deprecated"):
        _, data = await w.call("memory_list_global", status=status, limit=100)
        assert data["entries"] == [] and data["own_only"]


@case("memory_approve_global")
async def _approve_global(w: World) -> None:
    # A member may review nothing: alice's entries are refused like an unknown one.
    for entry, action in ((w.a.pending_entry, "approve"), (w.a.approved_entry, "deprecate")):
        msg = await w.refused_like_unknown(
            "memory_approve_global", "entry_id", entry, UNKNOWN_INT, action=action
        )
        assert "Only a curator or admin" in msg


PROFILE_PAGES = (
    "/",
    "/activity",
    "/topics",
    "/sessions",
    "/facts",
    "/facts?status=all",
    f"/facts?q={LURE.replace(' ', '+')}",
    "/hypotheses",
    "/people",
    "/global",
    "/global?page=2",
    "/api/identity",
)


@case("memory_get_profile_url")
async def _profile_url(w: World) -> None:
    # Bob's profile page, every view of it, shows none of alice's private rows.
    _, data = await w.call("memory_get_profile_url")
    for path in PROFILE_PAGES:
        with urllib.request.urlopen(data["url"].rstrip("/") + path, timeout=20) as r:
            w.check(f"profile page {path}", r.read().decode())
    for sid in (w.a.closed, w.a.open):  # her sessions are "not found", the page says no more
        with pytest.raises(urllib.error.HTTPError) as exc:
            urllib.request.urlopen(f"{data['url']}sessions/{sid}", timeout=20)
        assert exc.value.code == 404
        w.check("profile session page", exc.value.read().decode(), {"id": sid})


@case("memory_open_profile")
async def _open_profile(w: World) -> None:
    with patch.dict(os.environ):
        os.environ.pop("DISPLAY", None)  # never a real browser from the tests
        os.environ.pop("WAYLAND_DISPLAY", None)
        text, data = await w.call("memory_open_profile")
    assert data["opened"] is False and data["url"] in text


@case("memory_restart_server")
async def _restart_server(w: World) -> None:
    text, _ = await w.call("memory_restart_server")
    assert "will exit" in text
    assert w.exited.wait(5) and w.exits == [0]  # bob's server only; alice's keeps serving


# -- the tests ---------------------------------------------------------------------------------------
# The world is written once per backend (and xdist worker) through the tools, and each test
# gets a copy of that database with its own two servers on it: bob's cases then meet the same
# rows as if the world had been written for them, at a fraction of the cost.
@pytest.fixture(scope="session")
def sqlite_privacy_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Seed]:
    """A SQLite file holding the world, and its ids."""
    folder = tmp_path_factory.mktemp("privacy-world")
    path = folder / "data" / "memory.db"
    seed = fill_seed(lambda user: Settings(db_path=path, user=user), folder)
    return path, seed


@pytest.fixture(scope="session")
def pg_privacy_world(
    pg_server_url: str, pg_template: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Seed]:
    """A PostgreSQL database holding the world (``pg_url`` copies it), and its ids."""
    from pg_fixture import app_database, make_database  # a plugin: imported once pytest has it

    folder = tmp_path_factory.mktemp("pg-privacy-world")
    name = make_database(pg_server_url, pg_template)
    url = app_database(pg_server_url, name)
    seed = fill_seed(
        lambda user: Settings(db_path=folder / "unused.db", db_url=url, user=user), folder
    )
    return name, seed


@pytest.fixture
def copies_the_privacy_world() -> None:
    """Asks ``pg_url`` for a copy of ``pg_privacy_world`` rather than an empty database."""


@pytest.fixture
def seed(
    copies_the_privacy_world: None,
    settings_for: Settings_for,
    db_kind: str,
    request: pytest.FixtureRequest,
) -> Seed:
    """The world's ids; its database is already the test's (PostgreSQL: ``pg_url`` copied
    it) or is copied here (SQLite: the file, before any server opens it)."""
    if db_kind == "postgresql":
        seeded: tuple[str, Seed] = request.getfixturevalue("pg_privacy_world")
        return seeded[1]
    source, ids = request.getfixturevalue("sqlite_privacy_world")
    target = settings_for("alice").db_path
    target.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal"):  # the servers closed it: the WAL, if any, is whole
        if Path(f"{source}{suffix}").exists():
            shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")
    return ids


@pytest.fixture
async def world(settings_for: Settings_for, tmp_path: Path, seed: Seed) -> AsyncIterator[World]:
    async with open_world(settings_for, tmp_path, seed=seed) as w:
        yield w


async def test_matrix_covers_every_tool(world: World) -> None:
    listed = {t.name for t in await world.bob.list_tools()}
    assert listed == set(MATRIX), (
        f"tools without a privacy case: {sorted(listed - set(MATRIX))}; "
        f"cases for tools not listed: {sorted(set(MATRIX) - listed)}"
    )


@pytest.mark.parametrize("tool", sorted(MATRIX))
async def test_bob_cannot_reach_alices_memory(world: World, tool: str) -> None:
    before = await alice_snapshot(world)
    assert_alice_intact(before, world.a)
    await MATRIX[tool](world)
    assert tool in world.called, f"the case for {tool} never called it"
    after = await alice_snapshot(world)
    assert after == before


async def test_semantic_search_keeps_to_its_owner(
    settings_for: Settings_for, tmp_path: Path, model_dir: Path
) -> None:
    """With the model loaded, vector search is partitioned by owner: bob's searches in alice's
    words find his rows and the shared ones, never hers."""
    async with open_world(settings_for, tmp_path, model_dir) as w:
        embedded(w)
        for tool in ("memory_search_semantic", "memory_recall"):
            _, data = await w.call(tool, query="where is the passphrase of the vault kept?")
            kinds = {r["kind"] for r in data["results"]}
            assert data["note"] is None and {"fact", "chunk", "person", "global"} <= kinds
        for tool in ("memory_search_facts", "memory_search_chunks"):
            _, data = await w.call(tool, query="which day does the vault open?")
            assert [r["text"] for r in data["results"] if BOB not in r["text"]] == []
        text, _ = await w.call("memory_start_session", focus="the vault passphrase")
        assert BOB in text


async def test_import_cannot_forge_approved_company_knowledge(world: World) -> None:
    """A member's import publishes nothing: a file's 'approved' entry, approved in alice's
    name, waits for a curator of this database like any proposal."""
    forged = {
        "format": "bigmind-export",
        "version": 1,
        "user": {"username": "bob"},
        "global_knowledge": [
            {
                "category": "standard",
                "title": "forged policy",
                "content": "Push straight to main",
                "importance": 10,
                "status": "approved",
                "approved_by": world.a.uid,
                "created_at": now_ts(),
            }
        ],
    }
    path = world.path("forged.json")
    path.write_text(json.dumps(forged), encoding="utf-8")
    await world.call("memory_import", input_path=str(path))
    alice = await world.alice()
    _, data = await call(alice, "memory_list_global", limit=100)
    assert [e["title"] for e in data["entries"]] == [f"{SHARED} vault policy"]
    _, data = await call(alice, "memory_list_global", status="pending", limit=100)
    [forged_entry] = [e for e in data["entries"] if e["title"] == "forged policy"]
    assert forged_entry["approved_by"] is None and forged_entry["promoter"] == "bob"


# -- Tier G: another member's pending proposal and the promoter's session stay private ---------
async def test_promote_does_not_match_another_users_pending_entry(world: World) -> None:
    _, data = await world.call(
        "memory_promote_to_global",
        category="decision",
        title=f"{PENDING} proposal",
        content=f"{PENDING}: move the {LURE} to the cellar",
    )
    assert data["created"] and data["entry_id"] != world.a.pending_entry


async def test_list_global_hides_the_promoters_session(world: World) -> None:
    alice = await world.alice()
    _, e = await call(
        alice,
        "memory_promote_to_global",
        category="architecture",
        title=f"{SHARED} layout",
        content="Services talk over gRPC",
        source_session=world.a.closed,
    )
    await call(alice, "memory_approve_global", entry_id=e["entry_id"], action="approve")
    await world.call("memory_list_global", limit=100)
