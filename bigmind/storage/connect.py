"""Opening the configured database with its schema up to date."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bigmind.errors import BackendUnavailable, Forbidden
from bigmind.storage.db import Backend, SQLiteBackend
from bigmind.storage.migrations import migrate
from bigmind.storage.pgroles import refuse_unsafe_role

if TYPE_CHECKING:
    from bigmind.config import Settings
    from bigmind.storage.pg import PostgresBackend


def open_database(
    settings: Settings, *, create: bool = True, serving: bool = False, owner: bool = False
) -> Backend:
    """The configured database, schema up to date: PostgreSQL when BIGMIND_DB_URL is set
    (enterprise mode), else the SQLite file at BIGMIND_DB_PATH. Never one for the other.

    Without ``create`` a SQLite file that does not exist raises :class:`NoMemoryYet` and
    nothing is made (read-only commands); an existing one is migrated as the server would.
    PostgreSQL's database is provisioned by its administrator: its tables are made either way.
    With BIGMIND_DB_OWNER_URL, migrations and the maintenance scope use it; ``owner`` opens
    only it (commands that write ``api_tokens``). ``serving`` (a server for several users)
    refuses a role that bypasses row-level security (:func:`pgroles.refuse_unsafe_role`).
    """
    if settings.db_url:
        backend = connect_pg(
            (settings.db_owner_url if owner else None) or settings.db_url,
            owner_url=None if owner else settings.db_owner_url,
            busy_timeout_ms=settings.busy_timeout_ms,
            pool_size=settings.pool_size,
        )
        if serving:
            try:
                refuse_unsafe_role(backend, allow=settings.allow_unsafe_db_role)
            except BaseException:
                backend.close()
                raise
        return backend
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


def connect_pg(
    url: str,
    *,
    owner_url: str | None = None,
    busy_timeout_ms: int = 10_000,
    pool_size: int = 4,
) -> PostgresBackend:
    """Open the PostgreSQL backend and bring its schema up to date. With ``owner_url`` (the
    role owning the tables) migrations and :meth:`PostgresBackend.maintenance` use that
    role's connections, everything else ``url``'s."""
    from bigmind.storage.pg import PostgresBackend  # psycopg only when PostgreSQL is used

    owner = None
    if owner_url and owner_url != url:
        owner = PostgresBackend(owner_url, busy_timeout_ms=busy_timeout_ms, pool_size=pool_size)
    try:
        backend = PostgresBackend(
            url, busy_timeout_ms=busy_timeout_ms, pool_size=pool_size, owner=owner
        )
    except BaseException:
        if owner is not None:
            owner.close()
        raise
    try:
        migrate(backend)
    except Forbidden as exc:
        backend.close()
        raise BackendUnavailable(
            f"Cannot bring BigMind's tables up to date as this role ({exc}): BIGMIND_DB_URL "
            "may be a runtime role; set BIGMIND_DB_OWNER_URL to the DSN of the role that owns "
            "the tables (docs/privacy-postgres.md)."
        ) from exc
    except BaseException:
        backend.close()
        raise
    return backend
