"""The PostgreSQL backend itself: SQL translation, clear failures, settings, concurrent writers.

Everything the store and the tools do is tested on PostgreSQL by the rest of the suite (the
``db_kind`` parametrisation in conftest.py); this file covers what only PostgreSQL has.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import psycopg
import pytest
from fastmcp import Client
from mcp_calls import BIGMIND, refused
from pg_fixture import with_database

from bigmind.cli.main import main
from bigmind.config import Settings
from bigmind.errors import BackendUnavailable
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime
from bigmind.search import keyword, pgtext
from bigmind.storage.connect import connect_pg
from bigmind.storage.migrations import MIGRATIONS, applied
from bigmind.storage.pg import HNSW_EF_SEARCH, PostgresBackend, hnsw_settings, redact, translate
from bigmind.storage.store import Store

UNREACHABLE = "postgresql://bigmind:s3cret-pw@127.0.0.1:1/memory"


@pytest.mark.parametrize(
    ("sqlite", "postgres"),
    [
        ("SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = %s AND b = %s"),
        ("SELECT '?' AS q, ? AS p", "SELECT '?' AS q, %s AS p"),  # quoted ? is text
        ("SELECT 1 WHERE x LIKE '%a%' OR y LIKE ?", "SELECT 1 WHERE x LIKE '%%a%%' OR y LIKE %s"),
        (
            "UPDATE t SET n = n + 1 WHERE id = ? AND +user_id = ?",
            "UPDATE t SET n = n + 1 WHERE id = %s AND user_id = %s",
        ),
        ("SELECT 'it''s ?' AS a, ?", "SELECT 'it''s ?' AS a, %s"),
    ],
)
def test_sqlite_spelling_is_translated(sqlite: str, postgres: str) -> None:
    assert translate(sqlite) == postgres


def test_passwords_never_appear_in_messages() -> None:
    assert redact(UNREACHABLE) == "postgresql://bigmind:***@127.0.0.1:1/memory"
    assert redact("postgresql://me@db/x") == "postgresql://me@db/x"


def test_an_unreachable_server_names_the_setting_without_the_password() -> None:
    with pytest.raises(BackendUnavailable) as err:  # refused at once; connect_timeout otherwise
        PostgresBackend(UNREACHABLE)
    message = str(err.value)
    assert "BIGMIND_DB_URL" in message and "s3cret-pw" not in message
    assert "127.0.0.1:1" in message


def test_enterprise_mode_needs_a_url_and_a_url_must_be_postgresql(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match="BIGMIND_MODE=enterprise needs BIGMIND_DB_URL"):
        Settings(mode="enterprise")
    with pytest.raises(ValueError, match="must be a PostgreSQL URL"):
        Settings(db_url="mysql://x@y/z")
    assert Settings(mode="enterprise", db_url=UNREACHABLE).database == redact(UNREACHABLE)
    monkeypatch.setenv("BIGMIND_MODE", "enterprise")
    code = main(["stats"])
    assert code != 0  # the CLI says it in one line (checked below for serve)


@pytest.mark.e2e
def test_serve_fails_at_start_on_an_unreachable_database() -> None:
    env = {"BIGMIND_DB_URL": UNREACHABLE, "BIGMIND_MODE": "enterprise", "PATH": "/usr/bin:/bin"}
    r = subprocess.run(
        [str(BIGMIND), "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode != 0 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "BIGMIND_DB_URL" in lines[0] and "s3cret-pw" not in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.anyio
async def test_a_tool_on_an_unreachable_database_is_a_clear_error() -> None:
    settings = Settings(db_url=UNREACHABLE, mode="enterprise", user="alice")
    rt = Runtime(settings)
    async with Client(build_server(settings, rt)) as client:
        message = await refused(client, "memory_start_session")
    assert "BIGMIND_DB_URL" in message and "s3cret-pw" not in message


def _concurrently(n: int, work: Callable[[int], None]) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def run(i: int) -> None:
        start.wait()
        try:
            work(i)
        except BaseException as exc:  # noqa: BLE001 - the test reports whatever a worker raised
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return errors


def test_writers_racing_on_an_empty_database_migrate_once_and_lose_nothing(
    pg_server_url: str,
) -> None:
    name = f"bigmind_race_{time.monotonic_ns()}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = with_database(pg_server_url, name)
    per_writer = 60

    def write(i: int) -> None:
        backend = connect_pg(url)  # every writer migrates the empty database at once
        try:
            store = Store(backend, f"user{i}", mode="enterprise")
            session = store.start_session().session
            for k in range(per_writer):
                store.store_fact("codebase", f"writer {i} fact {k}")
                store.append_chunk(f"writer {i} chunk {k}", session_id=session.id)
        finally:
            backend.close()

    try:
        assert _concurrently(4, write) == []
        check = connect_pg(url)
        try:
            assert applied(check) == sorted(m.name for m in MIGRATIONS)
            counts = check.query(
                "SELECT u.username, count(DISTINCT f.id) AS facts, count(DISTINCT c.id) AS chunks"
                " FROM users u JOIN facts f ON f.user_id = u.id"
                " JOIN conversation_chunks c ON c.user_id = u.id GROUP BY u.username"
                " ORDER BY u.username"
            )
            assert [(r["username"], r["facts"], r["chunks"]) for r in counts] == [
                (f"user{i}", per_writer, per_writer) for i in range(4)
            ]
        finally:
            check.close()
    finally:
        with psycopg.connect(pg_server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_numeric_aggregates_come_back_as_numbers(pg_url: str) -> None:
    backend = connect_pg(pg_url)
    try:
        row = backend.query("SELECT sum(x) AS s, avg(x) AS a FROM (VALUES (1), (2)) AS t(x)")[0]
        assert (row["s"], row["a"]) == (3, 1.5)
        assert isinstance(row["a"], float)
    finally:
        backend.close()


def test_big_tables_are_planned_from_statistics_not_counts(
    pg_url: str, pg_server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pg_stats hides a table under row-level security from a role bound by it (its most common
    # lexemes are other users' words): only a role that bypasses RLS plans from statistics.
    monkeypatch.setattr(pgtext, "STATS_MIN_ROWS", 100)
    backend = connect_pg(with_database(pg_server_url, urlsplit(pg_url).path.lstrip("/")))
    try:
        store = Store(backend, "alice")
        for i in range(300):
            store.append_chunk(f"the service handled request {i}")
        store.append_chunk("the service crashed on a kafka rebalance")
        backend.query("ANALYZE conversation_chunks")
        text = keyword.text_search(store.db)
        assert isinstance(text, pgtext.PgTextSearch)
        text.budget = 50
        stats = text.stats("conversation_chunks_fts")
        assert stats is not None and stats.freqs["servic"] == pytest.approx(1.0)
        question = "why did the service crash during the kafka rebalance"
        plan = text.plan("conversation_chunks_fts", question)
        assert plan is not None and "service" in plan.dropped and "kafka" in plan.used
        assert "kafka rebalance" in keyword.hits(store, "chunk", question)[0].text.replace("**", "")
        # Words found nowhere ("pick", "runner") are probed absent, not guessed rare: they
        # must not crowd out the terms that match.
        odd = "which runner did we pick for the kafka rebalance"
        text.budget = 2  # room for two rare terms: the absent ones must not take it
        plan = text.plan("conversation_chunks_fts", odd)
        assert plan is not None and {"kafka", "rebalance"} <= set(plan.used)
        assert "kafka rebalance" in keyword.hits(store, "chunk", odd)[0].text.replace("**", "")
        text.budget = 50
        # One common term: ranked among the most recent ~budget matches, read off the ids.
        hits = keyword.hits(store, "chunk", "request", limit=5)
        assert len(hits) == 5 and min(h.id for h in hits) >= 240
        assert "most recent matches" in hits[0].why
        # All terms common: AND-ed (estimated as independent, probed non-empty).
        for i in range(60):
            store.append_chunk(f"the service request {i} timed out")
        backend.query("ANALYZE conversation_chunks")
        text._stats.clear()  # statistics are re-read every few minutes
        both = text.plan("conversation_chunks_fts", "service request timed")
        assert both is not None and both.conjunctive
    finally:
        backend.close()


def test_hnsw_searches_may_return_more_than_forty_neighbours(pg_url: str) -> None:
    backend = connect_pg(pg_url)
    try:
        assert backend.query("SHOW hnsw.ef_search")[0]["hnsw.ef_search"] == "200"
    finally:
        backend.close()


@pytest.mark.parametrize(
    ("version", "iterative"), [(None, False), ("0.6.2", False), ("0.7.4", False), ("0.8.0", True)]
)
def test_hnsw_scans_go_on_past_other_users_rows_where_pgvector_can(
    version: str | None, iterative: bool
) -> None:
    settings = hnsw_settings(version)
    assert settings[0] == f"SET hnsw.ef_search = {HNSW_EF_SEARCH}"
    assert ("SET hnsw.iterative_scan = strict_order" in settings) is iterative
