"""PostgreSQL roles (docs/privacy-postgres.md): a server for several users refuses a role that
ignores row-level security; the owner role migrates and maintains, a runtime role serves; and
every row of the doc's "what each connection string reaches" table holds."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2
import psycopg
import pytest
from conftest import free_port
from gateway_world import mcp_session, running, text
from pg_fixture import with_database

from bigmind.cli.main import main
from bigmind.config import Settings
from bigmind.errors import BackendUnavailable, InvalidInput
from bigmind.memory import api_tokens
from bigmind.runtime import Runtime
from bigmind.storage.connect import connect_pg, open_database
from bigmind.storage.pg import PostgresBackend
from bigmind.storage.store import Store

pytestmark = pytest.mark.timeout(120)
RUNTIME_ROLE = "bigmind_runtime"
RUNTIME_PASSWORD = "bigmind-runtime-test"
ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "privacy-postgres.md"
Conn = psycopg.Connection[Any]


def _superuser_url(pg_server_url: str, pg_url: str) -> str:
    """The test's database through the server's superuser."""
    return with_database(pg_server_url, urlsplit(pg_url).path.lstrip("/"))


# -- 1. a server for several users refuses a role that bypasses row-level security ---------
def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``bigmind ARGS`` in a process of its own (this checkout's code: ``-m`` from its root)."""
    return subprocess.run(
        [sys.executable, "-m", "bigmind", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "BIGMIND_EMBED_MODEL": "off", **env},
        stdin=subprocess.DEVNULL,
        timeout=90,
    )


def test_the_gateway_refuses_a_superuser(pg_url: str, pg_server_url: str) -> None:
    url = _superuser_url(pg_server_url, pg_url)
    port = str(free_port())
    r = _run("serve", "--http", "--port", port, BIGMIND_DB_URL=url, BIGMIND_MODE="enterprise")
    role = urlsplit(pg_server_url).username
    assert r.returncode == 5, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("bigmind:")]
    assert len(lines) == 1, r.stderr
    assert f"Refusing to serve as PostgreSQL role '{role}'" in lines[0]
    assert "BIGMIND_ALLOW_UNSAFE_DB_ROLE=1" in lines[0] and "NOBYPASSRLS" in lines[0]


@pytest.mark.parametrize("mode", ["team", "enterprise"])
def test_serve_for_a_team_refuses_a_superuser(pg_url: str, pg_server_url: str, mode: str) -> None:
    url = _superuser_url(pg_server_url, pg_url)
    r = _run("serve", BIGMIND_DB_URL=url, BIGMIND_MODE=mode, BIGMIND_WEB="0")
    assert r.returncode == 5 and "Refusing to serve as PostgreSQL role" in r.stderr


def test_bypassrls_is_refused_and_the_override_is_loud(
    pg_url: str,
    pg_server_url: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    role = "bigmind_bypass"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        with contextlib.suppress(psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation):
            conn.execute(f"CREATE ROLE {role} LOGIN BYPASSRLS PASSWORD 'x'")
        conn.execute(f"GRANT bigmind_app TO {role}")  # the tables' owner, as the app role
    parts = urlsplit(pg_url)
    url = urlunsplit(parts._replace(netloc=f"{role}:x@{parts.netloc.rpartition('@')[2]}"))
    settings = Settings(db_path=tmp_path / "unused.db", db_url=url, user="alice")
    rt = Runtime(settings, serves_many=True)
    with pytest.raises(BackendUnavailable, match=f"role '{role}'"):
        _ = rt.store
    rt.close()
    # The override serves, and says so in the log and in doctor.
    allowed = settings.model_copy(update={"allow_unsafe_db_role": True})
    rt = Runtime(allowed, serves_many=True)
    with caplog.at_level(logging.WARNING, logger="bigmind"):
        rt.store.store_fact("decision", "served anyway")
    rt.close()
    assert any("row-level security is NOT enforced" in r.message for r in caplog.records)
    assert any("BIGMIND_ALLOW_UNSAFE_DB_ROLE=1" in r.message for r in caplog.records)
    monkeypatch.setenv("BIGMIND_DB_URL", url)
    monkeypatch.setenv("BIGMIND_ALLOW_UNSAFE_DB_ROLE", "1")
    main(["doctor", "--quick", "--json", "--project", str(tmp_path)])
    out = capsys.readouterr().out
    assert "BIGMIND_ALLOW_UNSAFE_DB_ROLE=1: the gateway serves anyway" in out


def test_a_single_user_server_and_commands_still_open(pg_url: str, pg_server_url: str) -> None:
    """Personal mode over stdio and one-shot commands are not refused (doctor warns)."""
    url = _superuser_url(pg_server_url, pg_url)
    r = _run("stats", "--json", BIGMIND_DB_URL=url)
    assert r.returncode == 0, r.stderr


# -- 2. the owner role and the runtime role -----------------------------------------------
@pytest.fixture
def runtime_url(
    pg_url: str, pg_server_url: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> str:
    """A runtime role granted through `bigmind db grant-runtime` (run as the owner)."""
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        with contextlib.suppress(psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation):
            conn.execute(
                f"CREATE ROLE {RUNTIME_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS"
                f" PASSWORD '{RUNTIME_PASSWORD}'"
            )
    monkeypatch.setenv("BIGMIND_DB_URL", pg_url)
    assert main(["db", "grant-runtime", RUNTIME_ROLE]) == 0
    assert "Granted bigmind_runtime" in capsys.readouterr().out
    parts = urlsplit(pg_url)
    host = parts.netloc.rpartition("@")[2]
    url = urlunsplit(parts._replace(netloc=f"{RUNTIME_ROLE}:{RUNTIME_PASSWORD}@{host}"))
    monkeypatch.setenv("BIGMIND_DB_URL", url)
    monkeypatch.setenv("BIGMIND_DB_OWNER_URL", pg_url)
    return url


@dataclass
class Reach:
    owner_url: str
    runtime_url: str
    alice: str  # user ids
    bob: str
    token_id: str  # alice's token

    @contextlib.contextmanager
    def connect(self, who: str) -> Iterator[Conn]:
        with psycopg.connect(
            self.runtime_url if who == "runtime" else self.owner_url, autocommit=True
        ) as conn:
            yield conn


@pytest.fixture
def reach(runtime_url: str, pg_url: str) -> Iterator[Reach]:
    """Alice's and bob's facts stored through the runtime role (owner for maintenance),
    alice's token made through the owner."""
    db = connect_pg(runtime_url, owner_url=pg_url)
    try:
        alice, bob = Store(db, "alice"), Store(db, "bob")
        alice.store_fact("decision", "alice-secret: payments use RabbitMQ")
        bob.store_fact("decision", "bob-secret: billing uses Kafka")
        owner = connect_pg(pg_url)
        try:
            made = api_tokens.create(owner, "alice")
        finally:
            owner.close()
        yield Reach(pg_url, runtime_url, alice.uid, bob.uid, made.token.id)
    finally:
        db.close()


def _facts(conn: Conn) -> set[str]:
    return {r[0].split(":")[0] for r in conn.execute("SELECT fact FROM facts")}


def _as(conn: Conn, uid: str, *, maintenance: bool = False) -> None:
    conn.execute(
        "SELECT set_config('bigmind.user_id', %s, false),"
        " set_config('bigmind.maintenance', %s, false)",
        (uid, "on" if maintenance else ""),
    )


def _refused(conn: Conn, sql: str, *args: Any) -> bool:
    try:
        conn.execute(sql, args)
    except psycopg.errors.InsufficientPrivilege:
        return True
    return False


def _runtime_any_user(r: Reach) -> None:
    with r.connect("runtime") as conn:
        _as(conn, r.alice)
        assert _facts(conn) == {"alice-secret"}
        conn.execute("UPDATE facts SET importance = 9 WHERE user_id = %s", (r.alice,))
        _as(conn, r.bob)
        assert _facts(conn) == {"bob-secret"}


def _runtime_nothing_unset(r: Reach) -> None:
    with r.connect("runtime") as conn:
        assert _facts(conn) == set()
        assert _refused(conn, "INSERT INTO facts(user_id, category, fact) VALUES (%s, 'x', 'y')",
                        r.alice)  # fmt: skip


def _runtime_no_maintenance(r: Reach) -> None:
    with r.connect("runtime") as conn:
        _as(conn, "", maintenance=True)
        assert _facts(conn) == set()
        _as(conn, r.bob, maintenance=True)
        assert _facts(conn) == {"bob-secret"}
        assert conn.execute("SELECT bigmind_maintenance()").fetchone() == (False,)


def _runtime_no_schema(r: Reach) -> None:
    with r.connect("runtime") as conn:
        assert _refused(conn, "ALTER TABLE facts NO FORCE ROW LEVEL SECURITY")
        assert _refused(conn, "ALTER TABLE facts DISABLE ROW LEVEL SECURITY")
        assert _refused(conn, "DROP POLICY bigmind_owner ON facts")
        assert _refused(conn, "DROP TABLE facts")
        assert _refused(conn, "TRUNCATE facts")
        assert _refused(conn, "CREATE TABLE mine (x int)")


def _runtime_no_minting(r: Reach) -> None:
    with r.connect("runtime") as conn:
        assert _refused(
            conn,
            "INSERT INTO api_tokens(id, user_id, token_hash, created_at) VALUES ('x', %s, 'h', 'now')",
            r.bob,
        )


def _runtime_no_reviving(r: Reach) -> None:
    with r.connect("owner") as conn:
        conn.execute("UPDATE api_tokens SET revoked_at = 'then' WHERE id = %s", (r.token_id,))
    with r.connect("runtime") as conn:
        for change in ("revoked_at = NULL", "expires_at = NULL", "user_id = user_id",
                       "token_hash = 'h'"):  # fmt: skip
            assert _refused(conn, f"UPDATE api_tokens SET {change} WHERE id = %s", r.token_id)
        assert _refused(conn, "DELETE FROM api_tokens")
        assert conn.execute("SELECT count(*) FROM api_tokens").fetchone() == (1,)


def _runtime_marks_use(r: Reach) -> None:
    with r.connect("runtime") as conn:
        cur = conn.execute(
            "UPDATE api_tokens SET last_used_at = 'now' WHERE id = %s", (r.token_id,)
        )
        assert cur.rowcount == 1


def _runtime_migrations_read_only(r: Reach) -> None:
    with r.connect("runtime") as conn:
        assert conn.execute("SELECT count(*) FROM bigmind_migrations").fetchone()[0] > 0  # type: ignore[index]
        assert _refused(conn, "DELETE FROM bigmind_migrations")


def _owner_everything(r: Reach) -> None:
    with r.connect("owner") as conn:
        assert _facts(conn) == set()  # FORCEd: bound like anyone without a setting
        _as(conn, "", maintenance=True)
        assert _facts(conn) == {"alice-secret", "bob-secret"}
        conn.execute(
            "INSERT INTO api_tokens(id, user_id, token_hash, created_at) VALUES ('x', %s, 'h', 'n')",
            (r.bob,),
        )
        conn.execute("UPDATE api_tokens SET revoked_at = NULL")
        with conn.transaction(force_rollback=True):
            conn.execute("ALTER TABLE facts NO FORCE ROW LEVEL SECURITY")


CHECKS: dict[tuple[str, str], Callable[[Reach], None]] = {
    ("runtime", "can"): _runtime_any_user,
    ("runtime", "cannot (no setting)"): _runtime_nothing_unset,
    ("runtime", "cannot (maintenance)"): _runtime_no_maintenance,
    ("runtime", "cannot (schema)"): _runtime_no_schema,
    ("runtime", "cannot (mint)"): _runtime_no_minting,
    ("runtime", "cannot (revive)"): _runtime_no_reviving,
    ("runtime", "can (mark used)"): _runtime_marks_use,
    ("runtime", "cannot (migrations)"): _runtime_migrations_read_only,
    ("owner", "can"): _owner_everything,
}


def doc_rows() -> list[tuple[str, str]]:
    """The (holder, verdict) keys of the doc's table, e.g. ("runtime", "cannot (mint)")."""
    text_ = DOC.read_text(encoding="utf-8")
    table = text_.split("## What each connection string reaches", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in table.splitlines():
        m = re.match(r"\| (runtime|owner) \| (can[^|]*?) \|", line)
        if m:
            rows.append((m[1], m[2].strip()))
    return rows


def test_the_doc_table_and_the_checks_are_the_same_rows() -> None:
    assert sorted(doc_rows()) == sorted(CHECKS)


@pytest.mark.parametrize("row", sorted(CHECKS), ids=lambda r: f"{r[0]}-{r[1]}")
def test_each_row_of_the_doc_table_holds(reach: Reach, row: tuple[str, str]) -> None:
    CHECKS[row](reach)


def test_migrations_and_maintenance_use_the_owner(runtime_url: str, pg_url: str) -> None:
    db = connect_pg(runtime_url, owner_url=pg_url)
    try:
        me = "SELECT current_user AS u"
        assert db.query(me)[0]["u"] == RUNTIME_ROLE
        assert db.for_user("x").query(me)[0]["u"] == RUNTIME_ROLE
        assert db.maintenance().query(me)[0]["u"] == "bigmind_app"
        assert db.maintenance().for_user("x").query(me)[0]["u"] == "bigmind_app"
    finally:
        db.close()
    # Without the owner, the runtime role cannot migrate (or even record migrations).
    with pytest.raises(BackendUnavailable, match="set BIGMIND_DB_OWNER_URL"):
        connect_pg(runtime_url).close()


def test_grant_runtime_refuses_the_owner_and_unknown_roles(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BIGMIND_DB_URL", pg_url)
    assert main(["db", "grant-runtime", "bigmind_app"]) == 2
    assert "owns BigMind's tables" in capsys.readouterr().err
    assert main(["db", "grant-runtime", "nobody_here"]) == 2
    assert "No PostgreSQL role 'nobody_here'" in capsys.readouterr().err
    assert main(["db", "grant-runtime", 'x"; DROP TABLE facts; --']) == 2
    assert main(["db", "grant-runtime", "r1", "--sql"]) == 0
    out = capsys.readouterr().out
    assert 'GRANT UPDATE (last_used_at) ON api_tokens TO "r1";' in out
    with pytest.raises(InvalidInput):
        from bigmind.storage.pgroles import runtime_grants

        runtime_grants("a b")


def test_token_commands_use_the_owner(runtime_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["token", "create", "alice"]) == 0
    secret = capsys.readouterr().out.splitlines()[0]
    assert main(["token", "revoke", "alice"]) == 0
    owner = open_database(Settings(), owner=True)
    try:
        assert owner.query("SELECT current_user AS u")[0]["u"] == "bigmind_app"
        assert api_tokens.check(owner, secret) is None
    finally:
        owner.close()


@pytest.mark.anyio
async def test_the_gateway_serves_through_the_runtime_role(
    runtime_url: str, pg_url: str, tmp_path: Path
) -> None:
    settings = Settings(
        db_path=tmp_path / "unused.db", db_url=runtime_url, db_owner_url=pg_url, user="gateway"
    )
    owner = connect_pg(pg_url)
    try:
        alice, bob = (
            api_tokens.create(owner, "alice").secret,
            api_tokens.create(owner, "bob").secret,
        )
        with running(settings, free_port()) as gw:
            assert isinstance(gw.rt.store.db, PostgresBackend)
            async with mcp_session(gw.url, alice) as a:
                stored = await a.call_tool(
                    "memory_store_fact", {"category": "decision", "fact": "Payments use RabbitMQ"}
                )
                assert "Stored fact" in text(stored)
                found = await a.call_tool("memory_search_facts", {"query": "RabbitMQ"})
                assert "Payments use RabbitMQ" in text(found)
            async with mcp_session(gw.url, bob) as b:
                found = await b.call_tool("memory_search_facts", {"query": "RabbitMQ"})
                assert text(found).startswith("No facts match")
            gw.rt.flush_usage()  # the usage flusher writes through the owner
            bad = httpx2.post(f"{gw.url}/mcp", json={}, headers={"Authorization": "Bearer bm_x"})
            assert bad.status_code == 401
        used = {t.username: t.last_used_at for t in api_tokens.listed(owner)}
        assert used["alice"] is not None and used["bob"] is not None
    finally:
        owner.close()
