"""Opening the configured database with its schema up to date."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bigmind.storage.db import Backend, SQLiteBackend
from bigmind.storage.migrations import migrate

if TYPE_CHECKING:
    from bigmind.config import Settings
    from bigmind.storage.pg import PostgresBackend


def open_database(settings: Settings, *, create: bool = True) -> Backend:
    """The configured database, schema up to date: PostgreSQL when BIGMIND_DB_URL is set
    (enterprise mode), else the SQLite file at BIGMIND_DB_PATH. Never one for the other.

    Without ``create`` a SQLite file that does not exist raises :class:`NoMemoryYet` and
    nothing is made (read-only commands); an existing one is migrated as the server would.
    PostgreSQL's database is provisioned by its administrator: its tables are made either way.
    """
    if settings.db_url:
        return connect_pg(
            settings.db_url,
            busy_timeout_ms=settings.busy_timeout_ms,
            pool_size=settings.pool_size,
        )
    return connect(settings.db_path, busy_timeout_ms=settings.busy_timeout_ms, create=create)


def connect(
    db_path: Path | str, *, busy_timeout_ms: int = 10_000, create: bool = True
) -> SQLiteBackend:
    """Open the SQLite backend (without ``create``: an existing file only) and bring its
    schema up to date."""
    backend = SQLiteBackend(db_path, busy_timeout_ms=busy_timeout_ms, create=create)
    migrate(backend)
    backend.optimize()
    return backend


def connect_pg(url: str, *, busy_timeout_ms: int = 10_000, pool_size: int = 4) -> PostgresBackend:
    """Open the PostgreSQL backend and bring its schema up to date."""
    from bigmind.storage.pg import PostgresBackend  # psycopg only when PostgreSQL is used

    backend = PostgresBackend(url, busy_timeout_ms=busy_timeout_ms, pool_size=pool_size)
    try:
        migrate(backend)
    except BaseException:
        backend.close()
        raise
    return backend
