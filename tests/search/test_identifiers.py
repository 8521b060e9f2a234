"""Identifiers (``test_response``, ``foo_bar.py``) are found whole, on both backends alike.

PostgreSQL indexes each identifier as one lexeme besides its words (migration 0025,
:mod:`bigmind.storage.pgtsv`) and looks it up whole; SQLite's FTS5 matches it as the phrase of
its words. The same query finds the same memory on both.
"""

from __future__ import annotations

import time

import psycopg
import pytest
from pg_fixture import APP_ROLE, app_database, with_database

from bigmind.search import keyword, pgtext
from bigmind.storage.connect import connect_pg
from bigmind.storage.migrations import MIGRATIONS, migrate
from bigmind.storage.pg import PostgresBackend
from bigmind.storage.store import Store

FACTS = [
    "the test_response fixture leaks a socket in every integration test",
    "a test of the response time of the billing service",
    "the response to the test plan came back on Monday",
    "bigmind/storage/pg.py opens the connection pool lazily",
    "the helper my_foo_bar_baz retries three times",
]


def fact_hits(store: Store, query: str) -> list[str]:
    return [h.text.replace("**", "") for h in keyword.hits(store, "fact", query, 10)]


def test_an_identifier_is_found_whole_on_either_backend(store: Store) -> None:
    for text in FACTS:
        store.store_fact("codebase", text)
    # The identifier alone: the fact naming it, not the ones holding its words apart.
    assert fact_hits(store, "test_response") == [FACTS[0]]
    assert fact_hits(store, "why does test_response leak")[0] == FACTS[0]
    # A file named without its folder.
    assert fact_hits(store, "pg.py") == [FACTS[3]]
    # Held whole by no row, only inside a longer identifier: matched by its words, as before.
    assert fact_hits(store, "foo_bar") == [FACTS[4]]


def test_postgres_looks_an_identifier_up_whole(pg_url: str) -> None:
    backend = connect_pg(pg_url)
    try:
        store = Store(backend, "alice")
        for text in FACTS:
            store.store_fact("codebase", text)
        text = keyword.text_search(store.db)
        assert isinstance(text, pgtext.PgTextSearch)
        plan = text.plan("facts_fts", "test_response")
        assert plan is not None
        # Whole: one lexeme, no phrase to recheck; absent whole: as the parser reads it.
        assert text._spell("facts_fts", plan.expression) == '"test_response"'
        text.plan("facts_fts", "foo_bar")
        assert text._spell("facts_fts", '"foo_bar"') == '"foo_bar "'
        rows = store.db.query(
            "SELECT count(*) AS n FROM facts WHERE tsv @@ CAST('test_response' AS tsquery)"
        )
        assert rows[0]["n"] == 1
    finally:
        backend.close()


def test_migration_0025_indexes_identifiers_of_existing_rows(pg_server_url: str) -> None:
    name = f"bigmind_ident_{time.monotonic_ns()}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" OWNER {APP_ROLE}')
    with psycopg.connect(with_database(pg_server_url, name), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # a superuser's to create
    backend = PostgresBackend(app_database(pg_server_url, name))  # under row-level security
    try:
        migrate(backend, MIGRATIONS[:24])  # the schema before identifiers were indexed whole
        store = Store(backend, "alice")
        session = store.start_session().session
        store.store_fact("codebase", FACTS[0])
        store.append_chunk("see src/app/foo_bar.py for the retry", session_id=session.id)
        store.end_session(session.id, "closed", None, None, "moved parse_config into the loader")
        owner = backend.maintenance()
        probes = {
            "facts": "test_response",
            "conversation_chunks": "foo_bar.py",
            "session_summaries": "parse_config",
        }

        def found() -> dict[str, int]:
            return {
                table: owner.query(
                    f"SELECT count(*) AS n FROM {table} WHERE tsv @@ CAST(? AS tsquery)",
                    (f"'{word}'",),
                )[0]["n"]
                for table, word in probes.items()
            }

        assert found() == dict.fromkeys(probes, 0)
        assert migrate(backend, MIGRATIONS[:25]) == ["0025_identifiers_whole"]
        assert found() == dict.fromkeys(probes, 1)
        # The GIN index came back with the new column, and new rows get identifiers too.
        assert backend.table_exists("idx_facts_tsv")
        store.store_fact("codebase", "the load_balancer drops idle sockets")
        assert fact_hits(store, "load_balancer") == ["the load_balancer drops idle sockets"]
    finally:
        backend.close()
        with psycopg.connect(pg_server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.parametrize(
    ("term", "whole"),
    [("test_response", True), ("foo_bar.py", True), ("a/b.py", True), ("pre-commit", True),
     ("v1.2", True), ("getusername", False), ("don't", False), ("test", False)],
)  # fmt: skip
def test_what_counts_as_an_identifier(term: str, whole: bool) -> None:
    from bigmind.storage.pgfulltext import is_identifier

    assert is_identifier(term) is whole
