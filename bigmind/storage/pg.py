"""PostgreSQL behind the same narrow interface as SQLite (``query`` / ``transaction`` / ``dialect``).

The store writes one SQL text for both databases, in SQLite's spelling where they differ
trivially; :func:`translate` turns it into PostgreSQL's: ``?`` placeholders become ``%s``
(and a literal ``%`` becomes ``%%``), and SQLite's planner hint ``+column`` (which keeps an
index out of a primary-key lookup) is dropped. What differs for real — full-text search,
vectors, integrity checks — lives in dialect-specific modules (:mod:`bigmind.search.pgtext`, the
PostgreSQL branches of :mod:`bigmind.search.vectors` and :mod:`bigmind.storage.migrations`).

Connections come from a pool (psycopg 3). Every backend has a scope: the user whose rows it may
see (:meth:`PostgresBackend.for_user`, the ``bigmind.user_id`` setting the row-level security
policies of :mod:`bigmind.storage.pgpolicies` read), the cross-user maintenance scope
(:meth:`PostgresBackend.maintenance`), or neither (shared rows only). Views share one pool; a
connection handed out carries its view's settings, set when it last carried another's (one
statement, skipped while one user's calls reuse the pool).

Reads run in autocommit; a write transaction takes transaction-scoped advisory locks first, so
every "look, then insert" stays race-free, while reads never wait: a user's writes take that
user's lock (two users' writers run side by side, one user's queue), writes outside a user
take the shared key, and a maintenance transaction takes the global key exclusively, which
every other writer holds shared — always in the order global, user, shared, so no two
transactions wait for each other. ``BIGMIND_BUSY_TIMEOUT_MS`` bounds the wait for a lock.
"""

from __future__ import annotations

import functools
import logging
import re
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from bigmind.config import redact as redact
from bigmind.errors import BackendUnavailable, Forbidden
from bigmind.storage.pgpolicies import MAINTENANCE_SETTING, USER_SETTING

log = logging.getLogger(__name__)

Row = dict[str, Any]
Params = Sequence[Any]

WRITE_LOCK_KEY = 0x6269676D  # "bigm": held shared by writers, exclusively by maintenance
USER_LOCK_CLASS = 0x62696775  # "bigu": (class, hashtext(user id)) keys one user's writers
SHARED_LOCK_KEY = 0x62696773  # "bigs": writes outside any one user's rows (users, people…)
CONNECT_TIMEOUT_S = 10
HNSW_EF_SEARCH = 200
REWRITE_MAX_ROWS = 100_000  # a bigger table is not rewritten after a forget (seconds of lock)
_COLUMNS = (
    "SELECT column_name AS name FROM information_schema.columns"
    " WHERE table_schema = current_schema() AND table_name = ?"
)
_EXISTS = "SELECT to_regclass(?) IS NOT NULL AS x"
_HINT = re.compile(r"(?<=[\s(,])\+(?=[A-Za-z_])")
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def hnsw_settings(vec_version: str | None) -> list[str]:
    """What every connection sets for pgvector's HNSW searches (docs/postgres-search.md).

    HNSW returns at most ``hnsw.ef_search`` rows (default 40; searches ask for 50) and finds
    more of the true neighbours the higher it is. The user filter is applied after the index
    scan, so from pgvector 0.8 on the scan goes on until enough rows pass it (iterative scan,
    in distance order)."""
    out = [f"SET hnsw.ef_search = {HNSW_EF_SEARCH}"]
    parts = re.findall(r"\d+", vec_version or "")
    if len(parts) >= 2 and (int(parts[0]), int(parts[1])) >= (0, 8):
        out.append("SET hnsw.iterative_scan = strict_order")
    return out


def _ident(name: str) -> str:
    """A table name for a statement that takes no parameters (VACUUM): plain identifiers only."""
    if not _NAME.match(name):
        raise ValueError(f"not a table name: {name!r}")
    return name


@functools.lru_cache(maxsize=2048)
def translate(sql: str) -> str:
    """SQLite-spelled SQL as PostgreSQL SQL: ``?`` → ``%s``, ``%`` → ``%%``, no ``+col`` hints.

    ``?`` inside a quoted string is left alone; ``%`` is doubled everywhere, as psycopg reads
    the whole text for placeholders.
    """
    out: list[str] = []
    quoted = False
    for ch in _HINT.sub("", sql):
        if ch == "'":
            quoted = not quoted
        if ch == "%":
            out.append("%%")
        elif ch == "?" and not quoted:
            out.append("%s")
        else:
            out.append(ch)
    return "".join(out)


def _psycopg() -> Any:
    try:
        import psycopg
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise BackendUnavailable(
            "PostgreSQL support is not installed; run: pip install 'bigmind[postgres]' "
            "(psycopg, psycopg-pool, pgvector)."
        ) from exc
    return psycopg


class PostgresBackend:
    """PostgreSQL 14+ through a psycopg connection pool; pgvector when the server has it."""

    dialect = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        busy_timeout_ms: int = 10_000,
        pool_size: int = 4,
        owner: PostgresBackend | None = None,
        _shared: PostgresBackend | None = None,
    ) -> None:
        psycopg = _psycopg()
        self._psycopg = psycopg
        self.Error: type[Exception] = psycopg.Error
        self.url = url
        self.location = redact(url)
        self._busy_timeout_ms = busy_timeout_ms
        self.user_id = ""  # whose rows this view reads and writes ('': nobody's)
        self.maintaining = False  # the cross-user maintenance scope (pgpolicies)
        if _shared is not None:  # a view: the same pool, and close() leaves it open
            self._root: PostgresBackend = _shared._root
            self._pool: Any = _shared._pool
            self.vec_version: str | None = _shared.vec_version
            self._owns_pool = False
            self.user_id, self.maintaining = _shared.user_id, _shared.maintaining
            return
        self._root = self
        self._owner = owner  # the tables' owner role: migrations and maintenance (pgroles)
        self._statements = 0
        self._transactions = 0
        # What each pooled connection has in force: (user id, maintenance).
        self._scopes: weakref.WeakKeyDictionary[Any, tuple[str, bool]] = weakref.WeakKeyDictionary()
        self.vec_version = self._prepare()
        from psycopg_pool import ConnectionPool

        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max(2, pool_size),
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
            configure=self._configure,
            name="bigmind",
            open=True,
        )
        self._owns_pool = True

    # -- counters (shared by the views of one pool) ----------------------------------------
    @property
    def statements(self) -> int:
        return self._root._statements

    @statements.setter
    def statements(self, n: int) -> None:
        self._root._statements = n

    @property
    def transactions(self) -> int:
        return self._root._transactions

    @transactions.setter
    def transactions(self, n: int) -> None:
        self._root._transactions = n

    # -- scopes ----------------------------------------------------------------------------
    def _view(self, user_id: str, maintaining: bool) -> PostgresBackend:
        view = PostgresBackend(self.url, busy_timeout_ms=self._busy_timeout_ms, _shared=self)
        view.user_id, view.maintaining = user_id, maintaining
        return view

    def for_user(self, user_id: str) -> PostgresBackend:
        """The same pool, acting for ``user_id``: its private rows, the shared ones, its
        write lock."""
        return self if self.user_id == user_id else self._view(user_id, False)

    def maintenance(self) -> PostgresBackend:
        """The same pool, across users (migrations, the copier, the embedder, the usage
        flusher). PostgreSQL honours it only for a role that owns the tables: the owner
        backend's pool when there is one (BIGMIND_DB_OWNER_URL)."""
        if self._root._owner is not None:
            return self._root._owner.maintenance()
        return self if self.maintaining else self._view("", True)

    # -- connections -----------------------------------------------------------------------
    def _prepare(self) -> str | None:
        """Check the DSN with one direct connection (clear errors), create pgvector if it can."""
        psycopg = self._psycopg
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.Error as exc:
            detail = " ".join(str(exc).split())
            raise BackendUnavailable(
                f"Cannot connect to PostgreSQL at {self.location}: {detail}. "
                "Check BIGMIND_DB_URL (postgresql://user:password@host:port/database)."
            ) from exc
        with conn:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as exc:
                log.warning("pgvector is not available (%s); vectors disabled", exc)
            row = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
        return str(row[0]) if row else None

    def _configure(self, conn: Any) -> None:
        from psycopg.types.numeric import FloatLoader

        # sum() and avg() return numeric: floats here, like SQLite's REAL.
        conn.adapters.register_loader("numeric", FloatLoader)
        conn.execute(f"SET lock_timeout = {int(self._busy_timeout_ms)}")
        for setting in hnsw_settings(self.vec_version):
            conn.execute(setting)
        if self.vec_version:
            from pgvector.psycopg import register_vector

            register_vector(conn)

    def _run(self, conn: Any, sql: str, params: Params) -> list[Row]:
        self.statements += 1
        cur = conn.execute(translate(sql), tuple(params))
        if cur.description is None:
            return []
        names = [d.name for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def _unavailable(self, exc: Exception) -> BackendUnavailable:
        detail = " ".join(str(exc).split())
        return BackendUnavailable(f"PostgreSQL at {self.location} is unavailable: {detail}")

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection(timeout=CONNECT_TIMEOUT_S) as conn:
                self._scope(conn)
                yield conn
        except PoolTimeout as exc:
            raise self._unavailable(exc) from exc
        except self._psycopg.OperationalError as exc:
            raise self._unavailable(exc) from exc

    def _scope(self, conn: Any) -> None:
        """Put this view's settings in force on ``conn`` (session-wide, set outside any
        transaction so a rollback cannot undo them) unless they already are."""
        want = (self.user_id, self.maintaining)
        scopes = self._root._scopes
        if scopes.get(conn, ("", False)) != want:
            conn.execute(
                "SELECT set_config(%s, %s, false), set_config(%s, %s, false)",
                (USER_SETTING, want[0], MAINTENANCE_SETTING, "on" if want[1] else ""),
            )
            scopes[conn] = want

    # -- reads -----------------------------------------------------------------------------
    def query(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a read (autocommit) and return rows as dicts."""
        with self._connection() as conn:
            return self._run(conn, sql, params)

    def stream(self, sql: str, params: Params, size: int) -> Iterator[list[tuple[Any, ...]]]:
        """Run a long read on a server-side cursor and yield its rows ``size`` at a time."""
        with self._connection() as conn, conn.transaction():
            with conn.cursor(name="bigmind_stream") as cur:
                cur.itersize = size
                cur.execute(translate(sql), tuple(params))
                while block := cur.fetchmany(size):
                    yield block

    def reader(self) -> PostgresBackend:
        """The same pool and scope (a stream holds one of its connections while it runs)."""
        return self._view(self.user_id, self.maintaining)

    # -- writes ----------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[_PostgresTx]:
        """BEGIN; the write lock; … COMMIT — rolled back on any exception."""
        errors = self._psycopg.errors
        self.transactions += 1
        with self._connection() as conn:
            try:
                with conn.transaction():
                    conn.execute(*self._locks())
                    yield _PostgresTx(self, conn)
            except (errors.LockNotAvailable, errors.QueryCanceled) as exc:
                raise BackendUnavailable(
                    "Another client held the database write lock past the busy timeout; "
                    "retry, or raise BIGMIND_BUSY_TIMEOUT_MS."
                ) from exc
            except errors.InsufficientPrivilege as exc:
                raise Forbidden(f"PostgreSQL refused: {exc.diag.message_primary or exc}") from exc

    def _locks(self) -> tuple[str, tuple[Any, ...]]:
        """The advisory locks a write transaction takes first, in the one order (global,
        user, shared): maintenance holds the global key alone; a user's writers hold it
        shared and their user's key; writers outside any user, the shared key."""
        if self.maintaining:
            return "SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,)
        if self.user_id:
            return (
                "SELECT pg_advisory_xact_lock_shared(%s), pg_advisory_xact_lock(%s, hashtext(%s))",
                (WRITE_LOCK_KEY, USER_LOCK_CLASS, self.user_id),
            )
        return (
            "SELECT pg_advisory_xact_lock_shared(%s), pg_advisory_xact_lock(%s)",
            (WRITE_LOCK_KEY, SHARED_LOCK_KEY),
        )

    @contextmanager
    def trial(self) -> Iterator[_PostgresTx]:
        """A transaction that is always rolled back (checks that must change nothing)."""
        with self._connection() as conn, conn.transaction(force_rollback=True):
            yield _PostgresTx(self, conn)

    def close(self) -> None:
        if self._owns_pool:
            self._pool.close()
            if self._owner is not None:
                self._owner.close()

    # -- introspection ---------------------------------------------------------------------
    def columns(self, table: str) -> set[str]:
        return {r["name"] for r in self.query(_COLUMNS, (table,))}

    def table_exists(self, name: str) -> bool:
        return bool(self.query(_EXISTS, (name,))[0]["x"])

    def file_size(self) -> int:
        return int(self.query("SELECT pg_database_size(current_database()) AS n")[0]["n"])

    def scrub(self, rewrite: Sequence[str], tidy: Sequence[str] = ()) -> str:
        """After rows were deleted: ``VACUUM FULL`` the ``rewrite`` tables (a new file without
        the dead rows, indexes rebuilt: their bytes leave the table's files; it locks the table
        while it runs, ~1 s per 20k exchanges) and plain ``VACUUM`` the ``tidy`` ones. Outside
        any transaction. A table of more than REWRITE_MAX_ROWS rows, or one that stays locked
        past the busy timeout, gets a plain VACUUM instead (its dead rows' bytes stay in free
        space until reused), and the answer says so. Returns what was done."""
        errors = self._psycopg.errors
        full: list[str] = []
        plain: list[str] = []
        with self._connection() as conn:
            for name in dict.fromkeys(rewrite):
                rows = conn.execute(
                    "SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)", (name,)
                ).fetchone()
                if rows and rows[0] > REWRITE_MAX_ROWS:
                    conn.execute(f"VACUUM {_ident(name)}")
                    plain.append(f"{name} (~{int(rows[0]):,} rows: plain, run VACUUM FULL later)")
                    continue
                try:
                    conn.execute(f"VACUUM (FULL) {_ident(name)}")
                    full.append(name)
                except (errors.LockNotAvailable, errors.QueryCanceled):
                    log.warning("VACUUM FULL %s: the table stayed locked; plain VACUUM", name)
                    conn.execute(f"VACUUM {_ident(name)}")
                    plain.append(f"{name} (locked: plain)")
            for name in dict.fromkeys(tidy):
                conn.execute(f"VACUUM {_ident(name)}")
                plain.append(name)
        done = [f"VACUUM FULL {', '.join(full)}"] if full else []
        done += [f"VACUUM {', '.join(plain)}"] if plain else []
        return "; ".join(done) or "nothing to vacuum"


class _PostgresTx:
    dialect = "postgresql"

    def __init__(self, backend: PostgresBackend, conn: Any) -> None:
        self._b = backend
        self._conn = conn

    def execute(self, sql: str, params: Params = ()) -> list[Row]:
        return self._b._run(self._conn, sql, params)

    def lock_shared(self) -> None:
        """This transaction also writes shared rows (users, people, company knowledge): take
        the shared key after the user's, so their "look, then insert" stays race-free."""
        if self._b.user_id and not self._b.maintaining:
            self._b._run(self._conn, "SELECT pg_advisory_xact_lock(?) AS x", (SHARED_LOCK_KEY,))

    def script(self, sql: str) -> None:
        self._conn.execute(sql)  # no parameters: several statements may run at once

    def columns(self, table: str) -> set[str]:
        return {r["name"] for r in self.execute(_COLUMNS, (table,))}

    def table_exists(self, name: str) -> bool:
        return bool(self.execute(_EXISTS, (name,))[0]["x"])
