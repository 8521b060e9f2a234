"""memory_forget through a real MCP client: every kind of memory leaves the database for real —
its row, full-text entries, vectors, use counts, history — and its bytes leave the SQLite file
and its WAL (PostgreSQL: the rows and the tables' files, after VACUUM FULL). Searches, exports
and diffs made afterwards know nothing of it; what a forgotten session leaves is said."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import file_bytes
from fastmcp import Client
from mcp_calls import Cli, call, end, refused

from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.memory.erasure import TEXT_TABLES
from bigmind.runtime import Runtime
from bigmind.storage.db import Backend

pytestmark = pytest.mark.anyio

# Markers FTS5's porter stemmer keeps as they are, so the index holds these very bytes.
MARK = {
    k: f"zq{k}7x" for k in ("fact", "chunk", "summary", "session", "hypothesis", "person", "focus")
}
OLD_FACT = "zqfactold7x"  # what the fact said before its correction: in its history
KEEP = "zqkeep7x"  # in memories that must stay
VECTOR_KINDS = ("fact", "chunk", "chunk_context", "summary", "hypothesis", "person")


@dataclass
class World:
    rt: Runtime
    client: Cli
    settings: Settings
    tmp: Path
    before: str = ""  # a session opened before everything (the diff's start)
    ids: dict[str, str] = field(default_factory=dict)  # kind → the id to forget
    session_chunks: list[int] = field(default_factory=list)
    after_chunk: list[int] = field(default_factory=list)  # exchanges after the forgotten one
    kept_fact: int = 0
    kept_hypothesis: int = 0

    @property
    def db(self) -> Backend:
        return self.rt.store.db


async def _fill(w: World) -> None:
    c = w.client
    _, s = await call(c, "memory_start_session", ide_hint="tests")
    w.before = s["session_id"]
    await call(c, "memory_store_fact", category="decision", fact=f"{KEEP} we ship on Mondays")
    # A session, forgotten whole; a fact and a hypothesis learned in it are kept.
    _, s1 = await call(c, "memory_start_session")
    sid = s1["session_id"]
    m = MARK["session"]
    for text in (f"{m} asked about the vault", f"{m} answered about the vault"):
        _, ch = await call(c, "memory_append_chunk", content=text, session_id=sid)
        w.session_chunks.append(ch["chunk_id"])
    await call(c, "memory_announce_focus", session_id=sid, description=f"{m} on the vault")
    _, f = await call(
        c,
        "memory_store_fact",
        category="codebase",
        fact=f"{KEEP} the vault is in Rust",
        session_id=sid,
    )
    w.kept_fact = f["fact_id"]
    _, h = await call(
        c, "memory_add_hypothesis", hypothesis=f"{KEEP} the vault scales", session_id=sid
    )
    w.kept_hypothesis = h["hypothesis_id"]
    await end(
        c, sid, f"{m} vault session", topics=[m, "vault"], summary=f"{m} summary of the vault"
    )
    w.ids["session"] = sid
    # A session whose summary alone is forgotten.
    _, s3 = await call(c, "memory_start_session")
    await end(
        c, s3["session_id"], f"{KEEP} cache review", summary=f"{MARK['summary']} the cache is cold"
    )
    w.ids["summary"] = s3["session_id"]
    # The open session: an exchange with two after it, a focus, a hypothesis, a fact.
    _, s2 = await call(c, "memory_start_session")
    sid2 = s2["session_id"]
    _, ch = await call(
        c,
        "memory_flag_important",
        content=f"{MARK['chunk']} the broker password is hunter2",
        flag_reason="decision",
        session_id=sid2,
    )
    w.ids["chunk"] = str(ch["chunk_id"])
    for text in ("Which broker was it again?", "The one with the password above."):
        _, ch = await call(c, "memory_append_chunk", content=text, session_id=sid2)
        w.after_chunk.append(ch["chunk_id"])
    _, fo = await call(
        c,
        "memory_announce_focus",
        session_id=sid2,
        description=f"{MARK['focus']} billing",
        files=["bill.py"],
    )
    w.ids["focus"] = str(fo["focus_id"])
    _, h = await call(
        c, "memory_add_hypothesis", hypothesis=f"{MARK['hypothesis']} the queue stalls"
    )
    w.ids["hypothesis"] = str(h["hypothesis_id"])
    _, f = await call(
        c, "memory_store_fact", category="decision", fact=f"{OLD_FACT} payments use Kafka"
    )
    await call(
        c,
        "memory_update_fact",
        fact_id=f["fact_id"],
        fact=f"{MARK['fact']} payments use RabbitMQ",
        reason="moved",
    )
    w.ids["fact"] = str(f["fact_id"])
    _, p = await call(
        c,
        "memory_remember_person",
        username=MARK["person"],
        role="DBA",
        notes=f"{MARK['person']} knows the vault",
    )
    w.ids["person"] = str(p["person"]["id"])
    # Vectors for everything, and uses (searches' first hits) written to memory_usage.
    sem = w.rt.semantic
    assert sem is not None
    w.rt.wrote()
    assert sem.wait_idle(90) and sem.ready, sem.status()
    for marker in (*MARK.values(), OLD_FACT):
        await call(c, "memory_recall", query=f"{marker} vault broker payments queue cache")
    assert w.rt.flush_usage() > 0


@pytest.fixture
async def world(settings: Settings, model_dir: Path, tmp_path: Path) -> AsyncIterator[World]:
    s = settings.model_copy(update={"embed_model": str(model_dir)})
    rt = Runtime(s, background=True)
    try:
        async with Client(build_server(s, rt)) as client:
            w = World(rt, client, s, tmp_path)
            await _fill(w)
            yield w
    finally:
        rt.close()


# -- what is in the database ---------------------------------------------------------------------
def count(db: Backend, sql: str, *params: object) -> int:
    return int(db.query(sql, params)[0]["n"])


def vector_items(db: Backend, kind: str) -> set[str]:
    rows = db.query("SELECT item_id FROM embeddings WHERE kind = ?", (kind,))
    return {str(r["item_id"]) for r in rows}


def vec_rows(db: Backend, kind: str) -> int:
    return count(db, f"SELECT count(*) AS n FROM vec_{kind}")


def usage_items(db: Backend, kind: str) -> set[str]:
    rows = db.query("SELECT item_id FROM memory_usage WHERE kind = ?", (kind,))
    return {str(r["item_id"]) for r in rows}


def pg_rows_with(db: Backend, marker: str) -> list[str]:
    """The tables with a row whose text (any column, the tsvector included) holds ``marker``."""
    tables = [
        str(r["t"])
        for r in db.query(
            "SELECT tablename AS t FROM pg_tables WHERE schemaname = current_schema()"
        )
    ]
    return [
        t
        for t in tables
        if count(db, f"SELECT count(*) AS n FROM {t} x WHERE CAST(x AS TEXT) LIKE ?", f"%{marker}%")
    ]


def pg_files(db: Backend, tables: tuple[str, ...]) -> list[Path] | None:
    """The data files of these tables, their TOAST tables and indexes, after a CHECKPOINT
    (None when the server's data folder is not readable from here)."""
    db.query("CHECKPOINT")
    folder = Path(str(db.query("SHOW data_directory")[0]["data_directory"]))
    if not folder.is_dir():
        return None
    rels = db.query(
        "SELECT pg_relation_filepath(c.oid) AS p FROM pg_class c WHERE c.oid IN ("
        " SELECT oid FROM pg_class WHERE relname = ANY(?)"
        " UNION SELECT reltoastrelid FROM pg_class WHERE relname = ANY(?)"
        " UNION SELECT indexrelid FROM pg_index WHERE indrelid IN"
        "  (SELECT oid FROM pg_class WHERE relname = ANY(?)))",
        (list(tables), list(tables), list(tables)),
    )
    out: list[Path] = []
    for r in rels:
        if r["p"]:
            out += sorted(folder.glob(str(r["p"]) + "*"))
    return out


def in_files(paths: list[Path], marker: str) -> list[str]:
    return [p.name for p in paths if p.is_file() and marker.encode() in p.read_bytes()]


def present(w: World, markers: list[str], kind: str) -> dict[str, list[str]]:
    """Where each marker still is: the SQLite file and WAL; PostgreSQL rows and table files."""
    out: dict[str, list[str]] = {}
    if w.db.dialect == "sqlite":
        raw = file_bytes(w.settings)
        for m in markers:
            if m.encode() in raw:
                out[m] = ["sqlite file or WAL"]
        return out
    files = pg_files(w.db, TEXT_TABLES[kind])
    for m in markers:
        where = pg_rows_with(w.db, m) + (in_files(files, m) if files else [])
        if where:
            out[m] = where
    return out


# -- the tests -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(MARK))
async def test_forget_leaves_no_trace(world: World, kind: str) -> None:
    w, db, item = world, world.db, world.ids[kind]
    markers = [MARK[kind], *([OLD_FACT] if kind == "fact" else [])]
    if db.dialect == "sqlite":  # a full ANALYZE samples index keys (sessions' topics, usernames)
        db.query("PRAGMA analysis_limit=0")
        db.query("ANALYZE")
    assert set(present(w, [*markers, KEEP], kind)) == {*markers, KEEP}  # so the check can fail
    context_before = {
        str(r["item_id"]): r["content_hash"]
        for r in db.query(
            "SELECT item_id, content_hash FROM embeddings WHERE kind = 'chunk_context'"
        )
    }

    text, data = await call(w.client, "memory_forget", kind=kind, id=item, reason="test")
    assert text.startswith("Forgot ") and "for good" in text and "Reason: test" in text
    assert data["kind"] == kind and data["id"] == item

    # The bytes: gone from the file and its WAL (SQLite), the rows and tables' files (PostgreSQL).
    assert present(w, markers, kind) == {}
    assert KEEP in present(w, [KEEP], kind)
    # The row and everything made from it (once the neighbours' context vectors, which the
    # forget changed, are embedded again: counted mid-write, the two counts could differ).
    assert w.rt.semantic is None or w.rt.semantic.wait_idle(60)
    gone = _vector_keys(w, kind)
    for vkind, ids in gone.items():
        assert not ids & vector_items(db, vkind), vkind
        assert not ids & usage_items(db, vkind), vkind
        assert vec_rows(db, vkind) == len(vector_items(db, vkind)), vkind
    if kind == "fact":
        assert count(db, "SELECT count(*) AS n FROM fact_history") == 0
    for marker in markers:
        _, found = await call(w.client, "memory_recall", query=marker, limit=50)
        assert marker not in json.dumps(found), found
    # Later exports and diffs know nothing of it.
    _, out = await call(w.client, "memory_export", output_path="after.json")
    exported = Path(out["path"]).read_text(encoding="utf-8")
    diff, _ = await call(w.client, "memory_diff_sessions", since_session_id=w.before)
    for marker in markers:
        assert marker not in exported and marker not in diff
    assert KEEP in exported
    _check_what_stays(w, kind, data, context_before)
    await refused(w.client, "memory_forget", kind=kind, id=item)  # nothing left to forget


def _vector_keys(w: World, kind: str) -> dict[str, set[str]]:
    """The (vector kind → item ids) the forgotten memory had."""
    item = w.ids[kind]
    if kind == "session":
        chunks = {str(i) for i in w.session_chunks}
        return {"summary": {item}, "chunk": chunks, "chunk_context": chunks}
    if kind == "chunk":
        return {"chunk": {item}, "chunk_context": {item}}
    if kind == "focus":
        return {}
    return {kind: {item}}


def _check_what_stays(
    w: World, kind: str, data: dict[str, Any], context_before: dict[str, Any]
) -> None:
    db = w.db
    if kind == "session":
        assert data["kept"] == {"facts": [w.kept_fact], "hypotheses": [w.kept_hypothesis]}
        fact = db.query("SELECT source_session FROM facts WHERE id = ?", (w.kept_fact,))
        hyp = db.query("SELECT session_id FROM hypotheses WHERE id = ?", (w.kept_hypothesis,))
        assert fact == [{"source_session": None}] and hyp == [{"session_id": None}]
        assert (
            count(
                db,
                "SELECT count(*) AS n FROM conversation_chunks WHERE session_id = ?",
                w.ids["session"],
            )
            == 0
        )
    if kind == "summary":  # the session stays, without its summary
        row = db.query("SELECT has_tier2 FROM sessions WHERE id = ?", (w.ids["summary"],))
        assert row == [{"has_tier2": 0}]
    if kind == "chunk":
        # The next exchanges' context vectors held the forgotten text: they are made again.
        # (The forget woke the embedder, which may have made them already.)
        after = {str(i) for i in w.after_chunk}
        sem = w.rt.semantic
        assert sem is not None
        w.rt.wrote()
        assert sem.wait_idle(60)
        now = {
            str(r["item_id"]): r["content_hash"]
            for r in db.query(
                "SELECT item_id, content_hash FROM embeddings WHERE kind = 'chunk_context'"
            )
        }
        for i in after:
            assert i in now and now[i] != context_before[i]


async def test_forget_refusals(world: World) -> None:
    c = world.client
    msg = await refused(c, "memory_forget", kind="planet", id=1)
    assert "'planet' is not a kind of memory that can be forgotten: fact, chunk" in msg
    assert "No fact #987654" in await refused(c, "memory_forget", kind="fact", id=987_654)
    assert "is a number" in await refused(c, "memory_forget", kind="chunk", id="abc")
    assert "No session 'nope'" in await refused(c, "memory_forget", kind="session", id="nope")
    # A session without a summary has no summary to forget.
    msg = await refused(c, "memory_forget", kind="summary", id=world.before)
    assert "No summary of a session" in msg
    # A person by @username.
    text, _ = await call(c, "memory_forget", kind="person", id=f"@{MARK['person']}")
    assert f"person #{world.ids['person']}" in text


async def test_a_person_added_by_another_member_is_theirs_to_forget(settings_for: Any) -> None:
    team = {"mode": "team"}
    a_rt = Runtime(settings_for("alice").model_copy(update=team))
    b_rt = Runtime(settings_for("bob").model_copy(update=team))
    try:
        async with (
            Client(build_server(a_rt.settings, a_rt)) as alice,
            Client(build_server(b_rt.settings, b_rt)) as bob,
        ):
            await call(alice, "memory_remember_person", username="jdoe", role="SRE")
            msg = await refused(bob, "memory_forget", kind="person", id="jdoe")
            assert "added by another user" in msg
            _, mine = await call(bob, "memory_remember_person", username="rroe", role="PM")
            await call(bob, "memory_forget", kind="person", id=mine["person"]["id"])
            _, listed = await call(bob, "memory_list_people")
            assert [x["username"] for x in listed["people"]] == ["jdoe"]
    finally:
        a_rt.close()
        b_rt.close()


async def test_a_secret_leaves_the_file_without_a_model(
    client: Cli, runtime: Runtime, settings: Settings, tmp_path: Path
) -> None:
    """The plain path (no vectors): a fact and an exchange holding a pasted token."""
    w = World(runtime, client, settings, tmp_path)
    token = "zqghp7xtokenabcdef0123"
    _, f = await call(client, "memory_store_fact", category="ops", fact=f"The CI token is {token}")
    _, c = await call(
        client, "memory_flag_important", content=f"use {token} to push", flag_reason="ops"
    )
    await call(client, "memory_store_fact", category="ops", fact=f"{KEEP} CI runs nightly")
    kinds = {"fact": TEXT_TABLES["fact"], "chunk": TEXT_TABLES["chunk"]}
    assert present(w, [token], "fact") and present(w, [token], "chunk")
    size = runtime.store.db.file_size()
    await call(client, "memory_forget", kind="fact", id=f["fact_id"])
    await call(client, "memory_forget", kind="chunk", id=c["chunk_id"])
    for kind in kinds:
        assert present(w, [token], kind) == {}
    assert KEEP in present(w, [KEEP], "fact")
    if runtime.store.db.dialect == "sqlite":
        assert Path(str(settings.db_path) + "-wal").stat().st_size == 0  # truncated
        assert runtime.store.db.file_size() <= size


async def test_a_big_purge_leaves_no_bytes_either(
    client: Cli, runtime: Runtime, settings: Settings, tmp_path: Path
) -> None:
    """Past BULK memories, one forget deletes in bulk (FTS5 merges its indexes afterwards)."""
    from bigmind.memory import erasure as forget
    from bigmind.memory import purge

    store, w = runtime.store, World(runtime, client, settings, tmp_path)
    marker = "zqbulk7x"
    for i in range(forget.BULK + 20):
        store.append_chunk(f"exchange {i} pasted {marker} by mistake")
    store.store_fact("ops", f"{KEEP} nightly builds")
    found = purge.find(store, marker)
    assert len(found.targets) == forget.BULK + 20 and present(w, [marker], "chunk")
    done = forget.forget(store, found.targets)
    assert done.removed["exchanges"] == forget.BULK + 20
    assert "120 memories (120 chunks)" in done.summary()
    assert present(w, [marker], "chunk") == {} and KEEP in present(w, [KEEP], "fact")
    _, data = await call(client, "memory_search_chunks", query=marker)
    assert data["results"] == []
    if store.db.dialect == "sqlite":  # the indexes are whole, and delete securely again
        for fts in ("conversation_chunks_fts", "facts_fts"):
            assert store.db.query(f"SELECT v FROM {fts}_config WHERE k = 'secure-delete'") == [
                {"v": 1}
            ]
            with store.db.transaction() as tx:
                tx.execute(f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)")


def test_postgresql_rewrites_the_tables_a_forget_touched(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """VACUUM FULL ran (a table's file is new); a table past REWRITE_MAX_ROWS gets a plain
    VACUUM instead, and the answer says so."""
    from bigmind.memory import erasure
    from bigmind.storage import pg
    from bigmind.storage.connect import connect_pg
    from bigmind.storage.store import Store

    db = connect_pg(pg_url)
    try:
        store = Store(db, "alice")
        a, _, _ = store.store_fact("ops", "zqpgone7x the first")
        b, _, _ = store.store_fact("ops", "zqpgtwo7x the second")

        def filenode() -> int:
            return int(db.query("SELECT pg_relation_filenode('facts') AS n")[0]["n"])

        before = filenode()
        done = erasure.forget(store, [erasure.resolve(store, "fact", a.id)])
        assert done.scrub.startswith("VACUUM FULL fact_files, fact_history, fact_links, facts;")
        assert filenode() != before
        monkeypatch.setattr(pg, "REWRITE_MAX_ROWS", -2)  # every table counts as big
        before = filenode()
        done = erasure.forget(store, [erasure.resolve(store, "fact", b.id)])
        assert "facts (~" in done.scrub and "run VACUUM FULL later" in done.scrub
        assert filenode() == before and store.facts.get(b.id) is None
    finally:
        db.close()


def test_the_exchanges_after_one_are_found_by_order_across_gaps(settings: Settings) -> None:
    """Context vectors embed the exchanges just before, by order; forgetting leaves gaps in
    seq, so what follows an exchange is found by order, not by seq arithmetic."""
    from bigmind.storage.chunks_table import following_any
    from bigmind.storage.connect import open_database
    from bigmind.storage.store import Store

    backend = open_database(settings)
    try:
        store = Store(backend, "alice")
        sid = store.start_session().session.id
        chunks = [store.append_chunk(f"turn {i}", sid)[0] for i in range(1, 7)]
        with store.db.transaction() as tx:  # as alice (row-level security)
            store.chunks.delete(tx, [chunks[2].id, chunks[3].id])  # seq 3 and 4 are gone
            after = following_any(tx, [chunks[1].id], 2)
            both = following_any(tx, [chunks[0].id, chunks[4].id], 2)
        assert sorted(after) == [chunks[4].id, chunks[5].id]
        assert sorted(both) == [chunks[1].id, chunks[4].id, chunks[5].id]
    finally:
        backend.close()
