"""Operating one memory from the command line: its figures, a copy taken while in use, a
damaged file salvaged, a move to PostgreSQL, PostgreSQL's runtime role, stored secrets
redacted, and the database a server is about to use checked.

Each function opens what it needs and closes it. The lower modules are imported inside each
function: a command pays only for what it runs (``bigmind backup`` loads no search code).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bigmind.config import Settings
    from bigmind.errors import MigrationIncomplete
    from bigmind.memory.secret_sweep import ScanReport as ScanReport
    from bigmind.runtime import Runtime
    from bigmind.storage.migratedb import MigrationReport as MigrationReport
    from bigmind.storage.sqlite_backup import Backup as Backup
    from bigmind.storage.sqlite_recover import Recovery as Recovery

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Recovered:
    """What :func:`recover` did; ``kept``: where the damaged file went when the recovered one
    took its place (None: left where it was)."""

    done: Recovery
    kept: Path | None


@dataclass(frozen=True, slots=True)
class Migrated:
    """What :func:`migrate_db` copied: the report, the same in words, and the error to raise
    once it is shown when rows were left behind (a second run resumes)."""

    report: MigrationReport
    text: str
    failure: MigrationIncomplete | None


@dataclass(frozen=True, slots=True)
class Scanned:
    """What :func:`scan_secrets` found (and redacted, unless a dry run) in the database at
    ``location``."""

    report: ScanReport
    location: str


def stats(rt: Runtime) -> dict[str, Any]:
    """What ``memory_get_stats`` reports for the running call's user; the semantic part read
    from the vector tables, without loading the model."""
    from bigmind.memory import maintenance
    from bigmind.search.vectors import VectorStore

    data = maintenance.report(rt.store)
    vectors = VectorStore(rt.store.db)
    held = vectors.model() if vectors.available else None
    data["semantic"] = {
        "configured_model": rt.settings.embed_model,
        "sqlite_vec": vectors.available,
        "vector_model": held[0] if held else None,
        "vectors": sum(vectors.count().values()),
        "waiting": sum(vectors.backlog().values()) if vectors.available else None,
    }
    return data


def backup(settings: Settings, target: Path, *, overwrite: bool = False) -> Backup:
    """Copy the SQLite memory into ``target`` while it is in use (WAL included, checked).

    Raises:
        BigMindError: the memory is in PostgreSQL (its own backups apply).
        NoMemoryYet: there is no SQLite file to copy.
        InvalidInput: a folder, a missing folder, the database itself, or a file there
            already without ``overwrite``.
    """
    from bigmind.storage.sqlite_backup import backup as copy
    from bigmind.storage.sqlite_backup import refuse_postgres

    if settings.db_url:
        raise refuse_postgres()
    return copy(settings.db_path, target, overwrite=overwrite, busy_ms=settings.busy_timeout_ms)


def recover(
    source: Path,
    target: Path | None = None,
    *,
    replace: bool = False,
    progress: Progress | None = None,
) -> Recovered:
    """Copy what SQLite can read of the damaged file ``source`` into ``target`` (default:
    ``<name>.recovered-<time>.db`` beside it); with ``replace``, put it in ``source``'s place,
    the damaged file kept as ``<name>.corrupt-<time>``.

    Raises:
        DatabaseDamaged: nothing of ``source`` can be read.
    """
    from bigmind.storage import sqlite_recover as salvage

    target = target or salvage.default_target(source)
    done = salvage.recover(source, target, progress)
    kept = salvage.aside(source, target) if replace else None
    return Recovered(done, kept)


def migrate_db(source: Path, url: str, progress: Callable[[str], Progress]) -> Migrated:
    """Copy the SQLite memory at ``source`` (every user, tier and vector) into the
    PostgreSQL database at ``url``, what it lacks only, then verify; ``progress(label)``
    makes the progress callback of each step.

    Raises:
        BackendUnavailable: either database cannot be opened.
    """
    from bigmind.storage.connect import connect, connect_pg
    from bigmind.storage.migratedb import failure, migrate_database, render

    src = connect(source)
    try:
        tgt = connect_pg(url)
        try:
            report = migrate_database(src, tgt, progress)
        finally:
            tgt.close()
    finally:
        src.close()
    return Migrated(report, render(report), failure(report) if report.missing else None)


def runtime_grants(role: str) -> str:
    """The SQL that gives ``role`` what the gateway needs, for an operator to run.

    Raises:
        InvalidInput: not a role name.
    """
    from bigmind.storage.pgroles import runtime_grants as grants

    return grants(role)


def grant_runtime(settings: Settings, role: str) -> str:
    """Grant ``role`` what the gateway needs, as the tables' owner (BIGMIND_DB_OWNER_URL,
    else BIGMIND_DB_URL); the SQL run.

    Raises:
        InvalidInput: no such role, or one that row-level security would not bind.
    """
    from bigmind.storage.connect import open_database
    from bigmind.storage.pgroles import grant_runtime as grant

    db = open_database(settings, owner=True)
    try:
        with db.transaction() as tx:
            return grant(tx, role)
    finally:
        db.close()


def scan_secrets(settings: Settings, *, apply: bool, progress: Progress | None = None) -> Scanned:
    """Find the secrets stored in every user's memory (all tables, deprecated rows too) and,
    with ``apply``, redact them in place (their vectors dropped, made again later).

    Raises:
        NoMemoryYet: there is no database to scan (none is made).
    """
    from bigmind.memory.secret_sweep import scan
    from bigmind.storage.connect import open_database

    db = open_database(settings, create=False)
    try:
        # Every user's memory: the tables' owner role only, under row-level security.
        report = scan(db.maintenance(), apply=apply, progress=progress)
        return Scanned(report, db.location)
    finally:
        db.close()


def check_database(settings: Settings) -> None:
    """Open the configured PostgreSQL database and close it again, before a server answers
    anyone: a wrong or unreachable one fails now, not at the first tool call. A server for
    several users (team or enterprise mode) refuses a role that bypasses row-level security.

    Raises:
        BackendUnavailable: it cannot be reached, migrated or trusted.
    """
    from bigmind.storage.connect import open_database

    open_database(settings, serving=settings.mode != "personal").close()
