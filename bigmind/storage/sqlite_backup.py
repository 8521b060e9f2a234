"""``bigmind backup``: a consistent copy of the SQLite memory in one file, taken while it is used.

Copying ``memory.db`` with ``cp`` misses what sits in ``memory.db-wal`` (everything written
since the last checkpoint, which on a busy memory can be most of it) and can catch a page
half-written. SQLite's online backup API reads one snapshot, WAL included, while other
processes go on writing. The copy is written beside its target under a temporary name, must
pass ``quick_check``, and only then takes its name (never replacing a file unless asked).
PostgreSQL has its own tools: the error says which.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bigmind.errors import BigMindError, DatabaseDamaged, InvalidInput
from bigmind.storage.db import SQLiteBackend

POSTGRES = (
    "This memory is in PostgreSQL (BIGMIND_DB_URL): back it up with PostgreSQL's own tools, "
    'e.g. `pg_dump --format=custom --file=bigmind.dump "$BIGMIND_DB_URL"` (restore with '
    "pg_restore), or your provider's snapshots. `bigmind export` writes one user's memory as "
    "JSON."
)


@dataclass(frozen=True, slots=True)
class Backup:
    source: Path
    target: Path
    pages: int
    bytes: int
    seconds: float


def backup(source: Path, target: Path, *, overwrite: bool = False, busy_ms: int = 10_000) -> Backup:
    """Copy the SQLite memory at ``source`` into ``target`` (see the module's docstring)."""
    if target.is_dir():
        raise InvalidInput(
            f"{target} is a folder; name the backup file, e.g. {target / 'memory.db'}."
        )
    if not target.parent.is_dir():
        raise InvalidInput(f"The folder {target.parent} does not exist; create it first.")
    if target.exists() and target.resolve() == source.resolve():
        raise InvalidInput(f"{target} is the database itself; name another file.")
    if target.exists() and not overwrite:
        raise InvalidInput(f"{target} already exists; pass --overwrite to replace it.")
    started = time.monotonic()
    db = SQLiteBackend(source, busy_timeout_ms=busy_ms, create=False)
    fd, tmp = tempfile.mkstemp(prefix=".bigmind-backup-", suffix=".db", dir=target.parent)
    os.close(fd)
    try:
        try:
            pages, verdict = db.copy_to(tmp)
        finally:
            db.close()
        if verdict != "ok":
            raise DatabaseDamaged(
                f"The copy failed SQLite's quick_check ({verdict[:200]}); nothing was written. "
                "Run `bigmind doctor`: the database itself may be damaged."
            )
        os.chmod(tmp, 0o600)  # memories are private, copies too
        if overwrite:
            os.replace(tmp, target)
        else:
            os.link(tmp, target)  # FileExistsError if another got there first
    except FileExistsError as exc:
        raise InvalidInput(f"{target} already exists; pass --overwrite to replace it.") from exc
    finally:
        for leftover in (tmp, tmp + "-journal"):
            Path(leftover).unlink(missing_ok=True)
    return Backup(source, target, pages, target.stat().st_size, time.monotonic() - started)


def refuse_postgres() -> BigMindError:
    return BigMindError(POSTGRES)
