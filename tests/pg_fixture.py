"""Pytest plugin: a real PostgreSQL 16 + pgvector for the tests, one fresh database per test.

``BIGMIND_TEST_PG_URL`` (a role that may CREATE DATABASE) names an external server; otherwise
``pgserver`` from PyPI starts one in a temporary folder for the whole run (about 2 s). A
template database is migrated once, and each test gets ``CREATE DATABASE … TEMPLATE`` of it,
so a test starts from the current schema in ~100 ms and never sees another test's rows.

BigMind connects as :data:`APP_ROLE`, a plain role (no superuser, no BYPASSRLS) that owns the
test databases and their tables, as an operator sets it up (docs/privacy-postgres.md): a
superuser ignores row-level security, so through it the whole PostgreSQL lane runs under the
policies. ``pg_server_url`` stays the superuser's, for creating and dropping databases.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest

TEMPLATE = "bigmind_test_template"
APP_ROLE = "bigmind_app"
APP_PASSWORD = "bigmind-test"  # pgserver trusts local sockets; an external server may not
_counter = itertools.count()


def with_database(url: str, name: str) -> str:
    """The same server and credentials, another database."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def app_database(url: str, name: str) -> str:
    """Database ``name`` on the server of ``url``, through BigMind's role :data:`APP_ROLE`."""
    parts = urlsplit(with_database(url, name))
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{APP_ROLE}:{APP_PASSWORD}@{host}"))


def _admin(url: str):  # type: ignore[no-untyped-def]
    import psycopg

    return psycopg.connect(url, autocommit=True)


def _make_app_role(url: str) -> None:
    import psycopg

    with _admin(url) as conn:
        # An external server, or another worker, may have made it already.
        with contextlib.suppress(psycopg.errors.DuplicateObject):
            conn.execute(
                f"CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD '{APP_PASSWORD}'"
            )
        # What tests/memory/test_forget.py needs to look at the table files; nothing about rows.
        conn.execute(f"GRANT pg_checkpoint, pg_read_all_settings TO {APP_ROLE}")


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """The maintenance URL of the test server (external, or a pgserver started here)."""
    external = os.environ.get("BIGMIND_TEST_PG_URL")
    if external:
        _make_app_role(external)
        yield external
        return
    import pgserver

    folder = tempfile.mkdtemp(prefix="bigmind-pg-")
    server = pgserver.get_server(folder, cleanup_mode="delete")
    with _admin(server.get_uri()) as conn:
        # A server for this run only, never crashed by a test (the kill tests kill BigMind, not
        # PostgreSQL): nothing need wait for the disk. Each test's CREATE and DROP DATABASE and
        # every commit then cost CPU only, not a flush each.
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")
    _make_app_role(server.get_uri())
    yield server.get_uri()
    server.cleanup()


@pytest.fixture(scope="session")
def pg_template(pg_server_url: str) -> str:
    """A database migrated to the current schema, copied for each test."""
    from bigmind.storage.connect import connect_pg

    name = f"{TEMPLATE}_{uuid.uuid4().hex[:8]}"
    with _admin(pg_server_url) as conn:
        conn.execute(f'CREATE DATABASE "{name}" OWNER {APP_ROLE}')
    with _admin(with_database(pg_server_url, name)) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # a superuser's to create
    backend = connect_pg(app_database(pg_server_url, name))
    backend.close()
    return name


def make_database(server_url: str, template: str) -> str:
    """A new database copied from ``template``; returns its name."""
    name = f"bigmind_t{os.getpid()}_{next(_counter)}"
    with _admin(server_url) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" OWNER {APP_ROLE}')
    return name


# A test that asks for one of these (marker) fixtures gets a copy of a seeded database rather
# than an empty one: the session fixture named beside it returns (database name, ids…).
SEEDED = {
    "copies_the_web_world": "pg_world",  # conftest: the profile-page ``world``
    "copies_the_privacy_world": "pg_privacy_world",  # tests/test_privacy.py
}


@pytest.fixture
def pg_url(pg_server_url: str, pg_template: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh, migrated database for one test; dropped afterwards. A test that asks for a
    marker of :data:`SEEDED` gets a copy of that seeded database instead."""
    template = pg_template
    for marker, seeded in SEEDED.items():
        if marker in request.fixturenames:
            template = request.getfixturevalue(seeded)[0]
    name = make_database(pg_server_url, template)
    yield app_database(pg_server_url, name)
    with _admin(pg_server_url) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
