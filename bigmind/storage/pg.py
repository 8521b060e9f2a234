"""PostgreSQL behind the same narrow interface as SQLite (``query`` / ``transaction`` / ``dialect``).

The store writes one SQL text for both databases, in SQLite's spelling where they differ
trivially; :func:`translate` turns it into PostgreSQL's: ``?`` placeholders become ``%s``
(and a literal ``%`` becomes ``%%``), and SQLite's planner hint ``+column`` (which keeps an
index out of a primary-key lookup) is dropped. What differs for real — full-text search,
vectors, integrity checks — lives in dialect-specific modules (:mod:`bigmind.search.pgtext`, the
PostgreSQL branches of :mod:`bigmind.search.vectors` and :mod:`bigmind.storage.migrations`).

Connections come from a pool (psycopg 3). Reads run in autocommit; a write transaction takes
one transaction-scoped advisory lock first, so writers queue exactly as SQLite's single
writer does (every "look, then insert" in the store stays race-free), while reads never wait.
``BIGMIND_BUSY_TIMEOUT_MS`` bounds the wait for that lock.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from bigmind.config import redact as redact
from bigmind.errors import BackendUnavailable

log = logging.getLogger(__name__)

Row = dict[str, Any]
Params = Sequence[Any]

WRITE_LOCK_KEY = 0x6269676D  # "bigm": the one advisory lock every write transaction takes
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
        _shared: PostgresBackend | None = None,
    ) -> None:
        psycopg = _psycopg()
        self._psycopg = psycopg
        self.Error: type[Exception] = psycopg.Error
        self.url = url
        self.location = redact(url)
        self._busy_timeout_ms = busy_timeout_ms
        self.statements = 0
        self.transactions = 0
        if _shared is not None:  # a reader(): the same pool, and close() leaves it open
            self._pool: Any = _shared._pool
            self.vec_version: str | None = _shared.vec_version
            self._owns_pool = False
            return
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
        # pgvector's HNSW returns at most ef_search rows (default 40); searches ask for 50.
        conn.execute(f"SET hnsw.ef_search = {HNSW_EF_SEARCH}")
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
                yield conn
        except PoolTimeout as exc:
            raise self._unavailable(exc) from exc
        except self._psycopg.OperationalError as exc:
            raise self._unavailable(exc) from exc

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
        """The same pool (a stream holds one of its connections while it runs)."""
        return PostgresBackend(self.url, busy_timeout_ms=self._busy_timeout_ms, _shared=self)

    # -- writes ----------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[_PostgresTx]:
        """BEGIN; the write lock; … COMMIT — rolled back on any exception."""
        errors = self._psycopg.errors
        self.transactions += 1
        with self._connection() as conn:
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
                    yield _PostgresTx(self, conn)
            except (errors.LockNotAvailable, errors.QueryCanceled) as exc:
                raise BackendUnavailable(
                    "Another client held the database write lock past the busy timeout; "
                    "retry, or raise BIGMIND_BUSY_TIMEOUT_MS."
                ) from exc

    @contextmanager
    def trial(self) -> Iterator[_PostgresTx]:
        """A transaction that is always rolled back (checks that must change nothing)."""
        with self._connection() as conn, conn.transaction(force_rollback=True):
            yield _PostgresTx(self, conn)

    def close(self) -> None:
        if self._owns_pool:
            self._pool.close()

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

    def script(self, sql: str) -> None:
        self._conn.execute(sql)  # no parameters: several statements may run at once

    def columns(self, table: str) -> set[str]:
        return {r["name"] for r in self.execute(_COLUMNS, (table,))}

    def table_exists(self, name: str) -> bool:
        return bool(self.execute(_EXISTS, (name,))[0]["x"])
