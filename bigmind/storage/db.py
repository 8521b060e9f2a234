"""Database access behind a narrow interface, so the store never sees the driver.

SQLite is reached through apsw, because Python's own ``sqlite3`` is often built
without ``enable_load_extension`` (pyenv, many macOS builds) and then cannot load
sqlite-vec. One connection per process, guarded by a lock: FastMCP runs sync
tools in a thread pool, and SQLite transactions must not interleave on one
connection. Writes use ``BEGIN IMMEDIATE`` so concurrent processes queue on the
busy timeout instead of failing with "database is locked" on lock upgrade.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from bigmind.errors import BackendUnavailable, NoMemoryYet
from bigmind.storage import sqlitefile

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

Row = dict[str, Any]
Params = Sequence[Any]


class Tx(Protocol):
    """A unit of work inside one write transaction."""

    dialect: str

    def execute(self, sql: str, params: Params = ()) -> list[Row]: ...
    def script(self, sql: str) -> None: ...
    def columns(self, table: str) -> set[str]: ...
    def table_exists(self, name: str) -> bool: ...
    def lock_shared(self) -> None: ...  # also writes shared rows (users, people…)


class Backend(Protocol):
    """What the store needs from a database: reads, write transactions, a dialect."""

    dialect: str
    location: str
    Error: type[Exception]  # the driver's base error class
    statements: int  # SQL statements run on this connection so far (reads and writes)
    transactions: int  # write transactions begun so far

    def query(self, sql: str, params: Params = ()) -> list[Row]: ...
    def stream(self, sql: str, params: Params, size: int) -> Iterator[list[tuple[Any, ...]]]: ...
    def reader(self) -> Backend: ...  # a second connection for long reads
    def transaction(self) -> Any: ...  # context manager yielding a Tx
    def trial(self) -> Any: ...  # like transaction(), but always rolled back
    def close(self) -> None: ...
    def file_size(self) -> int: ...
    def scrub(self, rewrite: Sequence[str], tidy: Sequence[str] = ()) -> str: ...
    def columns(self, table: str) -> set[str]: ...
    def table_exists(self, name: str) -> bool: ...
    def for_user(self, user_id: str) -> Backend: ...  # acting for one user (PostgreSQL RLS)
    def maintenance(self) -> Backend: ...  # across users (migrations, embedder, copier)


_PRAGMAS = (
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA temp_store=MEMORY",
    "PRAGMA cache_size=-32000",
    "PRAGMA mmap_size=67108864",  # 64 MB: reads of hot pages without copying
    # Deleted rows are overwritten with zeros, in the file and its WAL: a forgotten memory's
    # bytes do not linger in free space (bigmind.memory.erasure).
    "PRAGMA secure_delete=ON",
)


def _load_apsw() -> Any:
    try:
        import apsw
    except ImportError as exc:  # pragma: no cover - apsw is a hard dependency
        raise BackendUnavailable(
            "The SQLite driver 'apsw' is not installed; run: pip install apsw"
        ) from exc
    return apsw


class SQLiteBackend:
    """SQLite through apsw: WAL, busy timeout, foreign keys, FTS5 and sqlite-vec."""

    dialect = "sqlite"

    def __init__(
        self, path: Path | str, *, busy_timeout_ms: int = 10_000, create: bool = True
    ) -> None:
        """Open (with ``create``: make the folder and the file if missing) the database at
        ``path``. Without ``create`` a missing file raises :class:`NoMemoryYet`, and nothing
        is made: SQLite is asked not to create the file either."""
        apsw = _load_apsw()
        self._apsw = apsw
        self.Error: type[Exception] = apsw.Error
        self.location = str(path)
        self._busy_timeout_ms = busy_timeout_ms
        self._lock = threading.RLock()
        self.statements = 0
        self.transactions = 0
        in_memory = str(path) == ":memory:"
        flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
        if not in_memory and not create and not Path(path).exists():
            sqlitefile.check_folder(Path(path))
            raise NoMemoryYet(str(path))
        if not in_memory and create:
            p = Path(path)
            try:
                p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            except OSError as exc:
                raise BackendUnavailable(
                    f"Cannot create the folder for the database {p.parent}: {exc.strerror}. "
                    "Set BIGMIND_DB_PATH to a writable location."
                ) from exc
        fresh = create and not in_memory and not Path(path).exists()
        try:
            self._conn = apsw.Connection(str(path), flags=flags)
            self._conn.set_busy_timeout(busy_timeout_ms)
            # journal_mode=WAL needs a write lock the first time; the busy timeout covers it.
            self._enable_wal(busy_timeout_ms)
            for pragma in _PRAGMAS:  # one by one: apsw stops a script at its first result row
                self._conn.execute(pragma).fetchall()
        except apsw.Error as exc:
            if getattr(self, "_conn", None) is not None:
                self._conn.close()
            if not create and not Path(path).exists():  # removed since the check above
                raise NoMemoryYet(str(path)) from exc
            raise sqlitefile.open_failure(apsw, path, exc) from exc
        if not in_memory and fresh:
            try:
                os.chmod(path, 0o600)  # memories are private by default
            except OSError:
                log.warning("could not restrict permissions of %s", path)
        self.vec_version: str | None = self._load_sqlite_vec()

    def optimize(self) -> None:
        """Refresh the query planner's statistics where they are missing or stale (bounded cost).

        Without statistics SQLite may pick a user_id index over a primary key and scan a whole
        user's rows; PK lookups also carry a ``+user_id`` that keeps such indexes out.
        """
        with self._lock, self._damage_said():
            self._conn.execute("PRAGMA analysis_limit=400").fetchall()
            self._conn.execute("PRAGMA optimize=0x10002").fetchall()

    def _enable_wal(self, busy_timeout_ms: int) -> None:
        """Switch to WAL, retrying: on a brand-new file, several openers racing for the switch
        get SQLITE_BUSY at once (the busy handler is not consulted for it)."""
        deadline = time.monotonic() + busy_timeout_ms / 1000
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode=WAL").fetchall()
                return
            except self._apsw.BusyError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.005)

    def _load_sqlite_vec(self) -> str | None:
        """Load sqlite-vec; return its version, or None (with the reason logged) if it can't."""
        try:
            import sqlite_vec
        except ImportError:
            log.warning("sqlite-vec is not installed (pip install sqlite-vec); vectors disabled")
            return None
        try:
            self._conn.enable_load_extension(True)
            self._conn.load_extension(sqlite_vec.loadable_path())
            self._conn.enable_load_extension(False)
            row = self._conn.execute("SELECT vec_version()").fetchone()
        except self._apsw.Error as exc:
            log.warning("sqlite-vec failed to load (%s); vectors disabled", exc)
            return None
        return str(row[0]) if row else None

    # -- reads -----------------------------------------------------------------------------
    def _run(self, sql: str, params: Params) -> list[Row]:
        self.statements += 1
        cur = self._conn.cursor()
        try:  # inline, not _damage_said(): this is every statement's path
            it = cur.execute(sql, tuple(params))
            try:
                names = [d[0] for d in cur.getdescription()]
            except self._apsw.ExecutionCompleteError:
                return []
            return [dict(zip(names, row, strict=True)) for row in it]
        except (self._apsw.CorruptError, self._apsw.NotADBError) as exc:
            self._if_damage(exc)
            raise

    @contextmanager
    def _damage_said(self) -> Iterator[None]:
        """A damaged page met while reading becomes :class:`DatabaseDamaged`, which names the
        fix (``bigmind recover``), instead of SQLite's "database disk image is malformed"."""
        try:
            yield
        except (self._apsw.CorruptError, self._apsw.NotADBError) as exc:
            self._if_damage(exc)
            raise

    def _if_damage(self, exc: Exception) -> None:
        if sqlitefile.is_damage(self._apsw, exc):
            raise sqlitefile.damaged(self._apsw, self.location, exc) from exc

    def query(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a read and return rows as dicts."""
        with self._lock:
            try:
                return self._run(sql, params)
            except self._apsw.BusyError as exc:
                raise BackendUnavailable(
                    "The database stayed locked past the busy timeout; "
                    "retry, or raise BIGMIND_BUSY_TIMEOUT_MS."
                ) from exc

    def stream(self, sql: str, params: Params, size: int) -> Iterator[list[tuple[Any, ...]]]:
        """Run a long read and yield its rows (tuples) ``size`` at a time. Holds this
        connection for the whole read: use it on a :meth:`reader`."""
        with self._lock, self._damage_said():
            block: list[tuple[Any, ...]] = []
            for row in self._conn.cursor().execute(sql, tuple(params)):
                block.append(row)
                if len(block) >= size:
                    yield block
                    block = []
            if block:
                yield block

    def for_user(self, user_id: str) -> SQLiteBackend:
        """The same connection: privacy is the store's queries' (PostgreSQL adds policies)."""
        return self

    def maintenance(self) -> SQLiteBackend:
        return self

    def reader(self) -> SQLiteBackend:
        """Another connection to the same file (WAL: it reads while this one writes)."""
        return SQLiteBackend(self.location, busy_timeout_ms=self._busy_timeout_ms)

    # -- writes ----------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[_SQLiteTx]:
        """BEGIN IMMEDIATE … COMMIT; rolls back on any exception."""
        with self._lock:
            self.transactions += 1
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except self._apsw.BusyError as exc:
                raise BackendUnavailable(
                    "Another process held the database write lock past the busy timeout; "
                    "retry, or raise BIGMIND_BUSY_TIMEOUT_MS."
                ) from exc
            try:
                yield _SQLiteTx(self)
            except BaseException:
                # SQLite may already have rolled back by itself (I/O error, disk full).
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    @contextmanager
    def trial(self) -> Iterator[_SQLiteTx]:
        """A transaction that is always rolled back: for checks spelled as writes (FTS5's
        'integrity-check' is an INSERT that changes nothing). It may wait for the write lock."""
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                yield _SQLiteTx(self)
            finally:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- introspection (dialect-specific, used by migrations and health checks) ----------
    def columns(self, table: str) -> set[str]:
        return {r["name"] for r in self._run(f"PRAGMA table_info({table})", ())}

    def table_exists(self, name: str) -> bool:
        rows = self._run("SELECT 1 AS x FROM sqlite_master WHERE name = ?", (name,))
        return bool(rows)

    def scrub(self, rewrite: Sequence[str], tidy: Sequence[str] = ()) -> str:
        """After rows were deleted (``secure_delete`` zeroed them in the pages): copy the WAL
        into the file and truncate it, so no older page image holding them stays in the WAL.
        The tables do not matter here (the WAL is the whole file's). Returns what was done."""
        if self.location == ":memory:":
            return "in memory: nothing on disk"
        with self._lock:
            busy, frames, _done = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            return (
                "WAL not truncated: another connection was reading; the next checkpoint after"
                f" it finishes clears the older page images ({frames} frames)"
            )
        return "WAL checkpointed and truncated"

    def copy_to(self, path: str) -> tuple[int, str]:
        """Copy the whole database, what its WAL holds included, into a new SQLite file at
        ``path`` with SQLite's online backup API, in one step: one consistent snapshot, while
        other connections go on writing (WAL readers block no writer). The copy is left in
        rollback-journal mode, one self-contained file. Returns its page count and what
        ``quick_check`` says of it ("ok")."""
        with self._lock, self._damage_said():
            target = self._apsw.Connection(path)
            try:
                with target.backup("main", self._conn, "main") as step:
                    step.step(-1)
                    pages = int(step.pagecount)
                target.execute("PRAGMA journal_mode=DELETE").fetchall()
                verdict = "; ".join(str(r[0]) for r in target.execute("PRAGMA quick_check"))
            finally:
                target.close()
        return pages, verdict

    def file_size(self) -> int:
        if self.location == ":memory:":
            return 0
        total = 0
        for suffix in ("", "-wal", "-shm"):
            try:
                total += os.path.getsize(self.location + suffix)
            except OSError:
                continue
        return total


class _SQLiteTx:
    dialect = "sqlite"

    def __init__(self, backend: SQLiteBackend) -> None:
        self._b = backend

    def execute(self, sql: str, params: Params = ()) -> list[Row]:
        return self._b._run(sql, params)

    def script(self, sql: str) -> None:
        with self._b._damage_said():
            for _row in self._b._conn.execute(sql):  # drain: apsw runs a script as rows are read
                pass

    def columns(self, table: str) -> set[str]:
        return self._b.columns(table)

    def table_exists(self, name: str) -> bool:
        return self._b.table_exists(name)

    def lock_shared(self) -> None:
        """One writer at a time already (BEGIN IMMEDIATE)."""
