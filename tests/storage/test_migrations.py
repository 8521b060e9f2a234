"""Schema migrations: fresh installs, upgrades of the original plan's databases, rollback, races.

The legacy databases are built from ``tests/fixtures/legacy_v{1,2,3}.sql``: the plan's DDL
for that schema version plus rows the legacy code would have written, with its mix of
timestamp spellings and its trigger-less FTS tables.
"""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw
import pytest

from bigmind.errors import BackendUnavailable
from bigmind.memory import globalkb
from bigmind.models import content_hash
from bigmind.search import keyword
from bigmind.storage.connect import connect
from bigmind.storage.db import SQLiteBackend, Tx
from bigmind.storage.migrations import (
    FTS_TABLES,
    MIGRATIONS,
    SCHEMA_VERSION,
    Migration,
    applied,
    migrate,
)
from bigmind.storage.store import Store

FIXTURES = Path(__file__).parents[1] / "fixtures"
LEGACY_VERSIONS = (1, 2, 3)

PPLATE = "b7e2c1d0-5a3f-4e8b-9c6d-2f1a0e9b8c7d"
JDOE = "4c9d8e7f-1a2b-4c3d-8e5f-6a7b8c9d0e1f"
S_FOUNDING = "1e9e32c7-0d4b-4f7e-a8c2-5b6d7e8f9a01"
S_JIRA = "7a3f9c2e-64b1-4d8a-b0e3-c2d4e6f8a0b2"
S_CONFLUENCE = "d15ea5e0-9876-4fed-8cba-fedcba987654"
S_OPEN = "c0ffee00-1234-4abc-8def-0123456789ab"

LEGACY_TABLES = (
    "users",
    "identity_profile",
    "sessions",
    "session_summaries",
    "conversation_chunks",
    "facts",
    "global_knowledge",
    "hypotheses",
)
STORED_TS = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?$")
ALL_NAMES = [m.name for m in MIGRATIONS]


# -- helpers ------------------------------------------------------------------------------------
def build_legacy(path: Path, version: int) -> None:
    """Create a legacy database file from its SQL fixture, the way the old code left it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = apsw.Connection(str(path))
    try:
        conn.execute((FIXTURES / f"legacy_v{version}.sql").read_text(encoding="utf-8"))
    finally:
        conn.close()


def snapshot(path: Path) -> dict[str, Any]:
    """Every legacy table's rows (by id) and its DATETIME columns, read with plain apsw."""
    conn = apsw.Connection(str(path))
    try:
        out: dict[str, Any] = {}
        for table in LEGACY_TABLES:
            info = list(conn.execute(f"PRAGMA table_info({table})"))
            if not info:
                continue
            names = [r[1] for r in info]
            rows = {
                r[0]: dict(zip(names, r, strict=True))
                for r in conn.execute(f"SELECT {', '.join(names)} FROM {table}")
            }
            ts_cols = [r[1] for r in info if r[2].upper() == "DATETIME"]
            out[table] = {"columns": names, "rows": rows, "ts": ts_cols}
        return out
    finally:
        conn.close()


def instant(value: str) -> datetime:
    """The UTC instant a legacy timestamp names (naive ones are UTC, as the stored form is)."""
    dt = datetime.fromisoformat(value)
    return dt.astimezone(UTC).replace(tzinfo=None) if dt.tzinfo else dt


def fts_check(backend: SQLiteBackend, fts: str) -> None:
    """FTS5 integrity-check with rank 1: the index must match its content table."""
    with backend.transaction() as tx:
        tx.execute(f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)")


def one(backend: SQLiteBackend, sql: str, params: tuple[Any, ...] = ()) -> Any:
    rows = backend.query(sql, params)
    assert len(rows) == 1, rows
    return next(iter(rows[0].values()))


@pytest.fixture(params=LEGACY_VERSIONS, ids=lambda v: f"v{v}")
def legacy(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[int, Path, dict[str, Any]]:
    version: int = request.param
    path = tmp_path / "legacy" / f"memory_v{version}.db"
    build_legacy(path, version)
    return version, path, snapshot(path)


@pytest.fixture
def upgraded(legacy: tuple[int, Path, dict[str, Any]]) -> Any:
    version, path, before = legacy
    backend = connect(path)
    yield version, backend, before
    backend.close()


# -- (a) fresh database -------------------------------------------------------------------------
def test_migration_names_are_unique_and_ordered() -> None:
    assert len(set(ALL_NAMES)) == len(ALL_NAMES)
    assert sorted(ALL_NAMES) == ALL_NAMES  # applied() lists by name: names must sort in order
    assert len(MIGRATIONS) == SCHEMA_VERSION


def test_fresh_database_records_every_migration_once(db_path: Path) -> None:
    backend = connect(db_path)
    try:
        assert applied(backend) == ALL_NAMES
        assert len(applied(backend)) == SCHEMA_VERSION
        assert migrate(backend) == []
        assert one(backend, "SELECT count(*) FROM bigmind_migrations") == SCHEMA_VERSION
        for table in (*LEGACY_TABLES, "people", "focus_announcements", "token_saves"):
            assert backend.table_exists(table), table
        for fts, _base, _cols in FTS_TABLES:
            assert backend.table_exists(fts), fts
            fts_check(backend, fts)
        assert {"deprecated", "deprecation_reason", "importance", "content_hash"} <= (
            backend.columns("facts")
        )
    finally:
        backend.close()

    reopened = connect(db_path)  # a restart applies nothing and keeps the record
    try:
        assert migrate(reopened) == []
        assert applied(reopened) == ALL_NAMES
        assert one(reopened, "PRAGMA integrity_check") == "ok"
    finally:
        reopened.close()


# -- (b) upgrading the plan's databases ---------------------------------------------------------
def test_legacy_upgrade_records_every_migration(upgraded: Any) -> None:
    _version, backend, _before = upgraded
    assert applied(backend) == ALL_NAMES
    assert migrate(backend) == []
    assert one(backend, "PRAGMA integrity_check") == "ok"
    assert backend.query("PRAGMA foreign_key_check") == []


def test_legacy_upgrade_loses_no_row_and_no_value(upgraded: Any) -> None:
    version, backend, before = upgraded
    assert ("hypotheses" in before) == (version >= 3)
    for table, snap in before.items():
        after = {r["id"]: r for r in backend.query(f"SELECT * FROM {table}")}
        assert sorted(after) == sorted(snap["rows"]), table
        for rid, old in snap["rows"].items():
            new = after[rid]
            for col in snap["columns"]:
                if col in snap["ts"] and isinstance(old[col], str):
                    # Same instant, respelled in the stored form.
                    assert instant(new[col]) == instant(old[col]), (table, rid, col)
                else:
                    assert new[col] == old[col], (table, rid, col)
    if version < 3:
        assert backend.table_exists("hypotheses")
        assert one(backend, "SELECT count(*) FROM hypotheses") == 0


def test_legacy_upgrade_spot_checks(upgraded: Any) -> None:
    version, backend, _before = upgraded
    q = backend.query
    assert q("SELECT username, display_name, role FROM users WHERE id = ?", (PPLATE,)) == [
        {"username": "pplate", "display_name": "P. Plate", "role": "admin"}
    ]
    assert one(
        backend, "SELECT pinned_facts FROM identity_profile WHERE user_id = ?", (PPLATE,)
    ) == (
        "- Building pi_mcps suite: BigMind, Confluence, Jira, Bitbucket\n"
        "- Uses uv for Python package management\n"
        "- Works on macOS, VS Code + IntelliJ in parallel"
    )
    assert one(backend, "SELECT one_liner FROM sessions WHERE id = ?", (S_FOUNDING,)) == (
        "BigMind born: built, installed, debugged and named on day one"
    )
    assert one(backend, "SELECT ended_at FROM sessions WHERE id = ?", (S_OPEN,)) is None
    assert "stray print to stdout" in one(
        backend, "SELECT summary FROM session_summaries WHERE id = ?", (S_FOUNDING,)
    )
    assert q("SELECT role, seq, flag_reason FROM conversation_chunks WHERE id = 4") == [
        {"role": "assistant", "seq": 2, "flag_reason": "root cause and fix"}
    ]
    assert q("SELECT fact, confidence, source_session FROM facts WHERE id = 5") == [
        {
            "fact": "Jira client retries use exponential backoff with jitter, at most five attempts.",
            "confidence": 0.8,
            "source_session": S_JIRA,
        }
    ]
    assert q("SELECT title, status, importance FROM global_knowledge ORDER BY id") == [
        {"title": "MCP server layout", "status": "approved", "importance": 8},
        {"title": "Python version", "status": "pending", "importance": 6},
    ]
    if version >= 2:
        assert q("SELECT deprecated, deprecation_reason FROM facts WHERE id = 7") == [
            {"deprecated": 1, "deprecation_reason": "Switched to ruff format in March 2026."}
        ]
    if version >= 3:
        assert q("SELECT status, resolution FROM hypotheses WHERE id = 1") == [
            {
                "status": "confirmed",
                "resolution": "Confirmed: Jira sent Retry-After: 30 and the client ignored it.",
            }
        ]


def test_legacy_upgrade_normalises_every_timestamp(upgraded: Any) -> None:
    _version, backend, before = upgraded
    for table, snap in before.items():
        for col in snap["ts"]:
            for row in backend.query(f"SELECT {col} AS v FROM {table} WHERE {col} IS NOT NULL"):
                assert STORED_TS.match(row["v"]), (table, col, row["v"])
    ts = {
        # naive isoformat() with 'T'
        ("users", "last_seen", PPLATE): "2026-03-30 09:15:42.123456",
        ("sessions", "started_at", S_JIRA): "2026-03-29 14:05:00.000001",
        # aware isoformat() with '+00:00'
        ("sessions", "started_at", S_OPEN): "2026-03-30 09:15:42.123456",
        ("users", "created_at", JDOE): "2026-03-29 10:00:00",
        # a local time with an offset is converted to UTC
        ("sessions", "ended_at", S_JIRA): "2026-03-29 16:45:10",
        # str(aware datetime): space separator and '+00:00'
        ("sessions", "ended_at", S_CONFLUENCE): "2026-03-29 16:45:10.250000",
        # 'Z' suffix
        ("sessions", "started_at", S_CONFLUENCE): "2026-03-29 10:00:00",
        # already in the stored form: untouched
        ("sessions", "started_at", S_FOUNDING): "2026-03-28 08:02:11",
    }
    for (table, col, rid), want in ts.items():
        assert one(backend, f"SELECT {col} FROM {table} WHERE id = ?", (rid,)) == want
    assert backend.query("SELECT created_at, updated_at FROM facts WHERE id = 5") == [
        {"created_at": "2026-03-29 16:40:00", "updated_at": "2026-03-29 16:45:10.250000"}
    ]


def test_timestamp_normalisation_converts_offsets_and_leaves_non_iso_text(tmp_path: Path) -> None:
    path = tmp_path / "odd.db"
    build_legacy(path, 1)
    odd = {
        "a0000000-0000-4000-8000-000000000001": "2026-03-30T09:00:00-05:00",  # west of UTC
        "a0000000-0000-4000-8000-000000000002": "2026-03-31T01:30:00.5+05:30",  # day changes
        "a0000000-0000-4000-8000-000000000003": "Tuesday morning",  # has a 'T', is not ISO
        "a0000000-0000-4000-8000-000000000004": 1774861200,  # epoch seconds: not text
    }
    conn = apsw.Connection(str(path))
    try:
        for sid, started in odd.items():
            conn.execute(
                "INSERT INTO sessions(id, user_id, started_at, one_liner) VALUES (?, ?, ?, 'odd')",
                (sid, PPLATE, started),
            )
    finally:
        conn.close()
    backend = connect(path)
    try:
        got = {
            r["id"]: r["started_at"]
            for r in backend.query("SELECT id, started_at FROM sessions WHERE one_liner = 'odd'")
        }
    finally:
        backend.close()
    assert got == {
        "a0000000-0000-4000-8000-000000000001": "2026-03-30 14:00:00",
        "a0000000-0000-4000-8000-000000000002": "2026-03-30 20:00:00.500000",
        "a0000000-0000-4000-8000-000000000003": "Tuesday morning",
        "a0000000-0000-4000-8000-000000000004": 1774861200,
    }


def test_legacy_upgrade_adds_columns_with_defaults(upgraded: Any) -> None:
    version, backend, _before = upgraded
    facts = backend.query(
        "SELECT id, fact, deprecated, importance, access_count, content_hash FROM facts"
    )
    for f in facts:
        assert f["importance"] == 5
        assert f["access_count"] == 0
        assert f["deprecated"] == (1 if f["id"] == 7 else 0)
        assert f["content_hash"] == content_hash(f["fact"])
    assert len(facts) == (6 if version == 1 else 7)
    for s in backend.query("SELECT auto_closed, ide_hint, last_activity_at FROM sessions"):
        assert s == {"auto_closed": 0, "ide_hint": None, "last_activity_at": None}
    # Memories from before projects are global: no project's view loses them.
    assert {
        (r["project"], r["scope"]) for r in backend.query("SELECT project, scope FROM facts")
    } == {(None, "global")}
    for table in ("sessions", "conversation_chunks", "hypotheses"):
        assert {r["project"] for r in backend.query(f"SELECT project FROM {table}")} <= {None}


def test_legacy_upgrade_rebuilds_full_text_indexes(upgraded: Any) -> None:
    version, backend, _before = upgraded
    for fts, _base, _cols in FTS_TABLES:
        fts_check(backend, fts)
    for base in ("conversation_chunks", "facts", "session_summaries", "global_knowledge"):
        assert (
            one(
                backend,
                "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?",
                (base,),
            )
            == 3
        ), base
    assert backend.query(
        "SELECT rowid FROM global_knowledge_fts WHERE global_knowledge_fts MATCH 'fastmcp'"
    ) == [{"rowid": 1}]
    assert backend.query(
        "SELECT s.id FROM session_summaries_fts JOIN session_summaries s"
        " ON s.rowid = session_summaries_fts.rowid WHERE session_summaries_fts MATCH 'stdio'"
    ) == [{"id": S_FOUNDING}]

    store = Store(backend, "pplate")
    hits = keyword.hits(store, "fact", "How do we manage Python packages?")
    assert hits and hits[0].id == 4
    hits = keyword.hits(store, "fact", "What did we decide about retrying Jira requests?")
    assert hits and hits[0].id == 5
    hits = keyword.hits(store, "chunk", "Why did the Jira client hang on HTTP 429?")
    assert hits and hits[0].id == 3 and hits[0].session_id == S_JIRA
    hits = keyword.hits(store, "chunk", "What was the root cause of the endless retry loop?")
    assert hits and hits[0].id == 4
    assert keyword.hits(store, "chunk", "where does the SQLite database file live?")[0].id in (1, 2)
    # Another user's legacy rows stay invisible.
    assert keyword.hits(store, "chunk", "confluence offset pagination") == []
    assert keyword.hits(store, "fact", "confluence cursor pagination") == []
    jdoe = Store(backend, "jdoe")
    assert [h.id for h in keyword.hits(jdoe, "chunk", "Why is the Confluence export slow?")] == [6]
    assert [h.id for h in keyword.hits(jdoe, "fact", "how does the exporter paginate?")] == [6]
    if version >= 2:
        assert keyword.hits(store, "fact", "which formatter for Python code?")[0].id != 7
        deprecated = keyword.hits(store, "fact", "black formatter", include_deprecated=True)
        assert [h.id for h in deprecated if h.deprecated] == [7]


def test_every_full_text_index_deletes_securely(upgraded: Any, db_path: Path) -> None:
    """Migration 0014 (legacy files) and 0006 (new ones) switch on FTS5's secure-delete, kept
    in each index's config; fact_history exists with its unique version per fact."""
    _version, backend, _before = upgraded
    fresh = connect(db_path)
    try:
        for db in (backend, fresh):
            for fts, _base, _cols in FTS_TABLES:
                assert one(db, f"SELECT v FROM {fts}_config WHERE k = 'secure-delete'") == 1, fts
            assert db.columns("fact_history") >= {"fact_id", "version", "fact", "reason"}
            assert one(db, "PRAGMA secure_delete") == 1
    finally:
        fresh.close()


def test_legacy_user_keeps_memory_and_new_writes_work(upgraded: Any) -> None:
    version, backend, _before = upgraded
    store = Store(backend, "pplate")
    assert store.uid == PPLATE
    assert store.user.role == "admin" and store.user.display_name == "P. Plate"
    assert one(backend, "SELECT count(*) FROM users") == 2  # the legacy user was reused

    profile = store.get_profile()
    assert profile.role == "Principal Engineer — ADP PI MCP Platform"
    assert profile.preferences is not None and "FastMCP" in profile.preferences

    # Normalised timestamps make the legacy sessions sort chronologically.
    assert [s.id for s in store.list_sessions()] == [S_OPEN, S_JIRA, S_FOUNDING]
    assert [s.id for s in store.open_sessions()] == [S_OPEN]
    session, summary, chunks = store.session_detail(S_JIRA)
    assert session.one_liner == "Jira client: fixed the retry loop that hung on HTTP 429"
    assert summary is not None and "429 Too Many Requests" in summary.summary
    assert [c.id for c in chunks] == [3, 4]
    counts = store.counts()
    assert counts["sessions"] == 3 and counts["open_sessions"] == 1
    assert counts["summaries"] == 2 and counts["chunks"] == 5
    assert counts["facts"] == 5
    assert counts["deprecated_facts"] == (0 if version == 1 else 1)
    assert counts["hypotheses"] == (2 if version >= 3 else 0)
    assert counts["global_approved"] == 1
    assert [g.title for g in globalkb.top(store)] == ["MCP server layout"]

    # The filled content hashes catch a re-stated legacy fact.
    again, created, _ = store.store_fact("tooling", "uses uv for python package management")
    assert not created and again.id == 4

    last_legacy_id = one(backend, "SELECT max(id) FROM facts")
    fact, created, _ = store.store_fact(
        "decision", "BigMind stores every timestamp as UTC text.", importance=8
    )
    assert created and fact.id == last_legacy_id + 1
    assert [h.id for h in keyword.hits(store, "fact", "how are timestamps stored?")][:1] == [
        fact.id
    ]

    chunk, _ref = store.append_chunk(
        "Migrated the legacy database; every row survived.", session_id=S_OPEN
    )
    assert chunk.session_id == S_OPEN and chunk.seq == 2
    assert [h.id for h in keyword.hits(store, "chunk", "did every row survive the migration?")][
        :1
    ] == [chunk.id]

    closed, was_open = store.end_session(
        S_OPEN,
        "Moved BigMind to apsw",
        ["bigmind", "sqlite"],
        "sqlite-vec loads everywhere.",
        "Switched the driver to apsw so sqlite-vec loads on pyenv builds.",
    )
    assert was_open and closed.ended_at is not None and closed.has_tier2 == 1
    assert backend.query(
        "SELECT s.id FROM session_summaries_fts JOIN session_summaries s"
        " ON s.rowid = session_summaries_fts.rowid WHERE session_summaries_fts MATCH 'pyenv'"
    ) == [{"id": S_OPEN}]

    updated = store.update_profile(role="Staff Engineer")
    assert updated.role == "Staff Engineer" and updated.preferences == profile.preferences

    gone = store.deprecate_fact(3, "Some servers moved to a src/ layout with several modules.")
    assert gone.deprecated == 1
    assert all(h.id != 3 for h in keyword.hits(store, "fact", "FastMCP server entry point"))

    for fts, _base, _cols in FTS_TABLES:
        fts_check(backend, fts)
    assert one(backend, "PRAGMA integrity_check") == "ok"


def test_legacy_upgrade_survives_reopening(legacy: tuple[int, Path, dict[str, Any]]) -> None:
    _version, path, before = legacy
    connect(path).close()
    backend = connect(path)
    try:
        assert migrate(backend) == []
        assert applied(backend) == ALL_NAMES
        for table, snap in before.items():
            assert one(backend, f"SELECT count(*) FROM {table}") == len(snap["rows"]), table
    finally:
        backend.close()


# -- (c) a failing step rolls back ---------------------------------------------------------------
def _create_first(tx: Tx, dialect: str) -> None:
    tx.script("CREATE TABLE first_table (x INTEGER)")
    tx.execute("INSERT INTO first_table VALUES (1)")


def _half_then_fail(tx: Tx, dialect: str) -> None:
    tx.script("CREATE TABLE half_done (x INTEGER)")
    tx.execute("INSERT INTO half_done VALUES (1)")
    tx.script("ALTER TABLE no_such_table ADD COLUMN y TEXT")  # driver error: no such table


def _create_second(tx: Tx, dialect: str) -> None:
    tx.script("CREATE TABLE half_done (x INTEGER)")


def _bug_in_step(tx: Tx, dialect: str) -> None:
    tx.script("CREATE TABLE buggy (x INTEGER)")
    raise RuntimeError("a bug in the step itself")


def test_failing_step_rolls_back_and_is_not_recorded(db_path: Path) -> None:
    backend = SQLiteBackend(db_path)
    try:
        steps = [
            Migration("t0001_first", _create_first),
            Migration("t0002_second", _half_then_fail),
        ]
        with pytest.raises(BackendUnavailable, match="t0002_second") as info:
            migrate(backend, steps)
        assert isinstance(info.value.__cause__, backend.Error)
        assert "rolled back" in str(info.value)
        assert backend.table_exists("first_table")
        assert one(backend, "SELECT count(*) FROM first_table") == 1
        assert not backend.table_exists("half_done")
        assert applied(backend) == ["t0001_first"]

        # The connection is not left inside a transaction: the next run completes.
        fixed = [steps[0], Migration("t0002_second", _create_second)]
        assert migrate(backend, fixed) == ["t0002_second"]
        assert applied(backend) == ["t0001_first", "t0002_second"]
        assert backend.table_exists("half_done")
        assert one(backend, "SELECT count(*) FROM half_done") == 0
        assert migrate(backend, fixed) == []

        # The real migrations then run on the same file as usual.
        assert migrate(backend) == ALL_NAMES
        assert applied(backend) == sorted([*ALL_NAMES, "t0001_first", "t0002_second"])
    finally:
        backend.close()


def test_step_raising_a_python_error_also_rolls_back(db_path: Path) -> None:
    backend = SQLiteBackend(db_path)
    try:
        with pytest.raises(BackendUnavailable, match="t0001_buggy") as info:
            migrate(backend, [Migration("t0001_buggy", _bug_in_step)])
        assert isinstance(info.value.__cause__, RuntimeError)
        assert not backend.table_exists("buggy")
        assert applied(backend) == []
        assert migrate(backend) == ALL_NAMES
    finally:
        backend.close()


def test_failed_migration_of_a_legacy_file_leaves_its_data(tmp_path: Path) -> None:
    path = tmp_path / "legacy.db"
    build_legacy(path, 3)
    before = snapshot(path)
    backend = SQLiteBackend(path)
    try:
        broken = [*MIGRATIONS[:3], Migration("0004_broken", _half_then_fail)]
        with pytest.raises(BackendUnavailable, match="0004_broken"):
            migrate(backend, broken)
        assert applied(backend) == ALL_NAMES[:3]
    finally:
        backend.close()
    assert snapshot(path) == before  # steps 1-3 only create what is missing: nothing here
    upgraded = connect(path)
    try:
        assert applied(upgraded) == ALL_NAMES
    finally:
        upgraded.close()


# -- (d) concurrent migration of one fresh file --------------------------------------------------
@pytest.mark.timeout(60)
def test_concurrent_migrations_apply_each_step_once(db_path: Path) -> None:
    # No file yet: the four connections also race on creating it and switching it to WAL.
    n = 4
    barrier = threading.Barrier(n)
    results: dict[int, list[str]] = {}
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=30)  # open the empty file together
            backend = SQLiteBackend(db_path)
            try:
                barrier.wait(timeout=30)  # and migrate it together
                results[i] = migrate(backend)
            finally:
                backend.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert sorted(results) == list(range(n))
    done = [name for names in results.values() for name in names]
    assert sorted(done) == ALL_NAMES  # every step applied by exactly one connection

    backend = connect(db_path)
    try:
        assert applied(backend) == ALL_NAMES
        assert one(backend, "SELECT count(*) FROM bigmind_migrations") == SCHEMA_VERSION
        assert one(backend, "PRAGMA integrity_check") == "ok"
    finally:
        backend.close()
