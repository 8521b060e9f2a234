"""What is wrong with a SQLite file that fails, in words a person can act on.

SQLite says "unable to open database file" for a missing folder, a folder given as the file and
a permission problem alike, and "database disk image is malformed" wherever a damaged page is
read. These functions look at the file and the error and name the one fix that applies: a
damaged file (or one that is not a database) points to ``bigmind recover``, which copies what
is still readable into a new file (:mod:`bigmind.storage.sqlite_recover`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from bigmind.errors import BackendUnavailable, DatabaseDamaged

RECOVER = "`bigmind recover` copies what SQLite can still read into a new file and keeps this one"
TELL_THE_USER = "Tell the user: `bigmind doctor` and `bigmind recover` run in a terminal."


def is_damage(apsw: Any, exc: BaseException) -> bool:
    """Whether ``exc`` says the file itself is damaged. An FTS5 index that disagrees with its
    table (SQLITE_CORRUPT_VTAB) is not: rebuilding the index repairs it."""
    if isinstance(exc, apsw.NotADBError):
        return True
    return isinstance(exc, apsw.CorruptError) and (
        getattr(exc, "extendedresult", None) != apsw.SQLITE_CORRUPT_VTAB
    )


def damaged(apsw: Any, path: str | Path, exc: BaseException) -> DatabaseDamaged:
    """The error for a file SQLite found damaged while reading it."""
    if isinstance(exc, apsw.NotADBError):
        return not_a_database(path)
    return DatabaseDamaged(
        f"The memory database {path} is damaged ({exc}); {RECOVER}.",
        tool=TELL_THE_USER,
    )


def not_a_database(path: str | Path) -> DatabaseDamaged:
    return DatabaseDamaged(
        f"{path} is not a SQLite database, or its first page is damaged. If BIGMIND_DB_PATH "
        f"names the wrong file, correct it; if it is your memory, {RECOVER}.",
        tool=TELL_THE_USER,
    )


def check_folder(path: Path) -> None:
    """A database that does not exist yet could be made at ``path`` (a file where a folder
    should be is a setting to fix, not a memory to make later)."""
    folder = next(p for p in path.parents if p.exists())
    if not folder.is_dir():
        raise BackendUnavailable(
            f"Cannot use {path} for the database: {folder} is a file, not a folder. "
            "Set BIGMIND_DB_PATH to a writable location."
        )


def open_failure(apsw: Any, path: str | Path, exc: BaseException) -> BackendUnavailable:
    """The error for a SQLite file that would not open, with the fix for its cause: damage,
    a folder or a missing folder given as the path, permissions, a lock, a full disk."""
    p = Path(path)
    if is_damage(apsw, exc):
        return damaged(apsw, p, exc)
    if isinstance(exc, apsw.BusyError | apsw.LockedError):
        return BackendUnavailable(
            f"{p} is locked by another program (held past the busy timeout). Retry when it is "
            "done (a `bigmind migrate-db` or `bigmind recover`, or a tool holding it open), or "
            "raise BIGMIND_BUSY_TIMEOUT_MS."
        )
    if isinstance(exc, apsw.FullError):
        return BackendUnavailable(f"The disk holding {p} is full. Free some space and retry.")
    if p.is_dir():
        return BackendUnavailable(
            f"{p} is a folder, not a database file. Set BIGMIND_DB_PATH to a file in it, "
            f"such as {p / 'memory.db'}."
        )
    if not p.parent.is_dir():
        return BackendUnavailable(
            f"The folder {p.parent} does not exist. Create it, or set BIGMIND_DB_PATH to a "
            "file in a folder that exists."
        )
    if p.exists() and not os.access(p, os.R_OK | os.W_OK):
        return BackendUnavailable(
            f"BigMind may not read and write {p} (permission denied). Give your user access "
            f"(`chmod u+rw {p}`, or `chown` it if another user owns it), or set BIGMIND_DB_PATH "
            "to a file of your own."
        )
    if not os.access(p.parent, os.W_OK | os.X_OK):
        return BackendUnavailable(
            f"SQLite must create {p.name}-wal and {p.name}-shm beside the database, but the "
            f"folder {p.parent} is not writable. Give your user write access to it "
            f"(`chmod u+w {p.parent}`), or move the database to a folder of your own and set "
            "BIGMIND_DB_PATH."
        )
    if isinstance(exc, apsw.IOError):
        return BackendUnavailable(
            f"SQLite could not read or write {p} ({exc}). Check the disk (and the network "
            "share, if it is on one: SQLite needs local files), then retry."
        )
    return BackendUnavailable(f"Cannot open the SQLite database {p}: {exc}. Check BIGMIND_DB_PATH.")
