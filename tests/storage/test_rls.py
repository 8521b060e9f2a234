"""PostgreSQL enforces privacy and roles itself (docs/privacy-postgres.md): row-level security
keyed on ``bigmind.user_id``, role checks in triggers, per-user write locks.

Every connection here uses BigMind's own connection string (a plain role that owns the tables,
as tests/pg_fixture.py sets up), never a superuser, which would ignore the policies.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cli_run import run_cli
from privacy_world import MARKER, PENDING, Settings_for, World, embedded, open_world

from bigmind.errors import Forbidden
from bigmind.memory.users import add_user
from bigmind.models import now_ts
from bigmind.storage import schema
from bigmind.storage.connect import connect_pg
from bigmind.storage.pg import (
    SHARED_LOCK_KEY,
    USER_LOCK_CLASS,
    WRITE_LOCK_KEY,
    PostgresBackend,
)
from bigmind.storage.pgpolicies import unguarded
from bigmind.storage.store import Store

pytestmark = pytest.mark.usefixtures("pg_url")
async_test = pytest.mark.anyio
OWNED = schema.names("owned")
PRIVATE = (*OWNED, *schema.names("belonging"), *schema.names("vectors"))


@pytest.fixture
def settings_for(pg_url: str, tmp_path: Path) -> Settings_for:
    from bigmind.config import Settings

    def make(user: str) -> Settings:
        return Settings(db_path=tmp_path / "unused.db", db_url=pg_url, user=user)

    return make


@pytest.fixture
async def world(
    settings_for: Settings_for, tmp_path: Path, model_dir: Path
) -> AsyncIterator[World]:
    """Alice's memory in every private table (vectors too), bob's beside it."""
    async with open_world(settings_for, tmp_path, model_dir) as w:
        embedded(w)
        w.alice_rt.flush_usage()
        w.bob_rt.flush_usage()
        store = w.alice_rt.store  # two of her facts linked, one used
        with store.db.transaction() as tx:
            tx.execute(
                "INSERT INTO fact_links(user_id, fact_id, other_id, kind, created_at)"
                " VALUES (?, ?, ?, 'conflict', ?)",
                (store.uid, w.a.fact, w.a.old_fact, now_ts()),
            )
            tx.execute(
                "INSERT INTO memory_usage(kind, item_id, user_id, access_count)"
                " VALUES ('fact', ?, ?, 1)",
                (str(w.a.fact), store.uid),
            )
        yield w


def _vec_tables(conn: psycopg.Connection[Any]) -> list[str]:
    rows = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        " AND tablename LIKE 'vec\\_%'"
    ).fetchall()
    return [r[0] for r in rows]


def _count(conn: psycopg.Connection[Any], table: str, where: str = "true") -> int:
    return int(conn.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()[0])  # type: ignore[index]


def _as(conn: psycopg.Connection[Any], uid: str) -> None:
    conn.execute("SELECT set_config('bigmind.user_id', %s, false)", (uid,))


@pytest.fixture
def pg(pg_url: str) -> Iterator[PostgresBackend]:
    backend = connect_pg(pg_url)
    yield backend
    backend.close()


@pytest.fixture
def alice(pg: PostgresBackend) -> Store:
    """The first user (personal mode): the owner, an admin."""
    return Store(pg, "alice")


@pytest.fixture
def raw(pg_url: str) -> Iterator[psycopg.Connection[Any]]:
    """A plain session on BigMind's connection string: no setting made."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        yield conn


@async_test
async def test_a_session_without_the_setting_sees_no_private_row(
    world: World, raw: psycopg.Connection[Any], pg_url: str
) -> None:
    everyone = connect_pg(pg_url).maintenance()
    try:
        tables = [*PRIVATE, *_vec_tables(raw)]
        assert len(tables) > len(PRIVATE)  # the model made vector tables
        for table in tables:
            assert everyone.query(f"SELECT count(*) AS n FROM {table}")[0]["n"] > 0, table
            mine = "user_id <> ''" if table == "embeddings" or table.startswith("vec_") else "true"
            assert _count(raw, table, mine) == 0, table
    finally:
        everyone.close()
    # Shared rows are readable: people, the users' directory fields, approved company knowledge.
    assert _count(raw, "people") >= 1
    assert {r[0] for r in raw.execute("SELECT username FROM users")} >= {"alice", "bob"}
    statuses = {r[0] for r in raw.execute("SELECT status FROM global_knowledge")}
    assert statuses == {"approved"}  # alice's pending entry is hers and the curators'
    assert _count(raw, "embeddings", "user_id = ''") > 0  # vectors of shared rows


@async_test
async def test_nothing_private_can_be_written_without_the_setting(
    world: World, raw: psycopg.Connection[Any]
) -> None:
    uid = world.a.uid
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        raw.execute(
            "INSERT INTO sessions(id, user_id, started_at, one_liner) VALUES ('x', %s, 'now', 'x')",
            (uid,),
        )
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        raw.execute("INSERT INTO facts(user_id, category, fact) VALUES (%s, 'x', 'forged')", (uid,))
    # Updates and deletes meet no row at all.
    for table in PRIVATE:
        assert raw.execute(f"DELETE FROM {table}").rowcount == 0, table
    assert raw.execute("UPDATE facts SET fact = 'changed'").rowcount == 0
    _as(raw, uid)
    assert _count(raw, "facts", f"fact LIKE '%{MARKER}%'") > 0  # all still there


@async_test
async def test_a_user_sees_only_their_own_rows(world: World, raw: psycopg.Connection[Any]) -> None:
    a, b = world.a.uid, world.alice_rt.store_of("bob").uid
    _as(raw, a)
    for table in OWNED:
        owners = {r[0] for r in raw.execute(f"SELECT DISTINCT user_id FROM {table}")}
        assert owners <= {a}, table
    assert _count(raw, "facts") > 0 and _count(raw, "session_summaries") > 0
    assert _count(raw, "global_knowledge", f"content LIKE '%{PENDING}%'") == 1  # her own
    _as(raw, b)
    for table in OWNED:
        owners = {r[0] for r in raw.execute(f"SELECT DISTINCT user_id FROM {table}")}
        assert owners <= {b}, table
    assert _count(raw, "facts", f"fact LIKE '%{MARKER}%'") == 0
    assert _count(raw, "session_summaries", f"summary LIKE '%{MARKER}%'") == 0
    assert _count(raw, "global_knowledge", f"content LIKE '%{PENDING}%'") == 0
    # Bob's setting cannot write a row as alice's either.
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        raw.execute("INSERT INTO facts(user_id, category, fact) VALUES (%s, 'x', 'y')", (a,))


def test_a_member_cannot_approve_or_give_roles_even_in_raw_sql(
    alice: Store, pg: PostgresBackend, raw: psycopg.Connection[Any]
) -> None:
    store = alice
    bob = Store(pg, "bob")  # alice came first (the owner, an admin); bob is a member
    assert (store.user.role, bob.user.role) == ("admin", "member")
    with store.db.transaction() as tx:
        tx.execute(
            "INSERT INTO global_knowledge(category, title, content, status, promoted_by)"
            " VALUES ('standard', 't', 'c', 'pending', ?)",
            (bob.uid,),
        )
    _as(raw, bob.uid)
    refusals = [
        "UPDATE global_knowledge SET status = 'approved', approved_by = %(me)s",
        "INSERT INTO global_knowledge(category, title, content, status, promoted_by)"
        " VALUES ('x', 'x', 'x', 'approved', %(me)s)",
        "UPDATE users SET role = 'admin' WHERE id = %(me)s",
        "INSERT INTO users(id, username, role) VALUES ('m2', 'mallory', 'curator')",
    ]
    for sql in refusals:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            raw.execute(sql, {"me": bob.uid})
    # Another user's row is not his to touch at all; his own last_seen is.
    assert raw.execute("UPDATE users SET last_seen = 'x' WHERE id = %s", (store.uid,)).rowcount == 0
    assert raw.execute("UPDATE users SET last_seen = 'x' WHERE id = %s", (bob.uid,)).rowcount == 1
    # Through BigMind the refusal is a Forbidden, one line.
    with pytest.raises(Forbidden, match="PostgreSQL refused: Only an admin"):
        add_user(bob.db, "mallory", "admin")
    # An admin may: alice approves and grants.
    _as(raw, store.uid)
    assert raw.execute("UPDATE global_knowledge SET status = 'approved'").rowcount == 1
    assert raw.execute("UPDATE users SET role = 'curator' WHERE id = %s", (bob.uid,)).rowcount == 1


def test_the_first_admin_is_makeable_by_anyone_who_reaches_the_database(
    pg_url: str, raw: psycopg.Connection[Any]
) -> None:
    raw.execute("INSERT INTO users(id, username, role) VALUES ('u1', 'first', 'admin')")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        raw.execute("INSERT INTO users(id, username, role) VALUES ('u2', 'second', 'admin')")


def _cli(*args: str, user: str, url: str) -> subprocess.CompletedProcess[str]:

    return run_cli(*args, BIGMIND_USER=user, BIGMIND_DB_URL=url)


def test_the_cli_administers_as_bigmind_user(alice: Store, pg_url: str) -> None:
    assert _cli("user", "add", "bob", user="alice", url=pg_url).returncode == 0
    for who in ("bob", "mallory"):  # a member, and a name the database does not know
        r = _cli("user", "set-role", "bob", "admin", user=who, url=pg_url)
        assert r.returncode == 4, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "Only an admin" in lines[0] and "Traceback" not in r.stderr
    r = _cli("user", "set-role", "bob", "curator", user="alice", url=pg_url)
    assert r.returncode == 0 and "bob: member → curator." in r.stdout


# -- per-user write locks --------------------------------------------------------------------
def _advisory(conn: psycopg.Connection[Any]) -> list[tuple[int, int, str, bool]]:
    return [
        (int(r[0]), int(r[1]), str(r[2]), bool(r[3]))
        for r in conn.execute(
            "SELECT classid::bigint, objid::bigint, mode, granted FROM pg_locks"
            " WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database"
            " WHERE datname = current_database())"
        )
    ]


def _wait_for(check: Any) -> None:
    """Until ``check()`` holds (polled on the server's state, not timed)."""
    import time

    for _ in range(2000):
        if check():
            return
        time.sleep(0.005)
    raise AssertionError("the expected lock state never came")


def test_two_users_write_at_once_and_one_users_writers_queue(
    alice: Store, pg: PostgresBackend, raw: psycopg.Connection[Any]
) -> None:
    store, bob = alice, Store(pg, "bob")
    held = threading.Event()
    release = threading.Event()
    second_done = threading.Event()

    def hold(s: Store) -> None:
        with s.db.transaction() as tx:
            tx.execute("SELECT 1 AS x")
            held.set()
            release.wait(30)

    def write(s: Store, done: threading.Event) -> None:
        with s.db.transaction() as tx:
            tx.execute("SELECT 1 AS x")
        done.set()

    first = threading.Thread(target=hold, args=(store,))
    first.start()
    held.wait(30)
    # Bob's writer runs to its end while alice's transaction holds her lock.
    bob_done = threading.Event()
    write(bob, bob_done)
    assert bob_done.is_set()
    # Alice's second writer waits for her first: an ungranted lock on her key.
    second = threading.Thread(target=write, args=(store, second_done))
    second.start()
    _wait_for(lambda: any(not g for *_, g in _advisory(raw)))
    locks = _advisory(raw)
    waiting = [(c, o) for c, o, _m, g in locks if not g]
    assert len(waiting) == 1 and waiting[0][0] == USER_LOCK_CLASS
    assert not second_done.is_set()
    # The global key is held shared (maintenance would wait), never the shared one.
    assert any(o == WRITE_LOCK_KEY and m == "ShareLock" and g for _c, o, m, g in locks)
    assert not any(o == SHARED_LOCK_KEY for _c, o, _m, _g in locks)
    release.set()
    first.join(30)
    second.join(30)
    assert second_done.is_set()


def test_stores_sharing_one_pool_each_see_their_own_rows(alice: Store, pg: PostgresBackend) -> None:
    """Connections change hands between users: each carries the setting of its latest user."""
    bob, carol = Store(pg, "bob"), Store(pg, "carol")
    for n, s in enumerate((alice, bob, carol), start=1):
        for i in range(n):
            s.store_fact("decision", f"{s.user.username} decided {i}")
    for _ in range(10):
        for n, s in enumerate((alice, bob, carol), start=1):
            assert s.facts.count("active") == n
            assert len(s.db.query("SELECT id FROM facts")) == n  # no WHERE: the policy's
    assert pg.query("SELECT count(*) AS n FROM facts")[0]["n"] == 0  # the pool's own scope


def test_every_table_of_the_migrated_schema_is_guarded_or_left_out_on_purpose(
    pg: PostgresBackend,
) -> None:
    """A migration that adds a table without naming it in pgpolicies' lists fails here."""
    with pg.transaction() as tx:
        assert unguarded(tx) == []
        tx.execute("CREATE TABLE forgot_its_policy (id INTEGER PRIMARY KEY)")
        assert unguarded(tx) == ["forgot_its_policy"]
        tx.execute("DROP TABLE forgot_its_policy")
