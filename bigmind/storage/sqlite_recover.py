"""``bigmind recover``: copy what SQLite can still read of a damaged memory into a new file.

SQLite's own recovery API (``sqlite3_recover_*``, behind the ``sqlite3`` shell's ``.recover``)
reads pages one by one through the ``sqlite_dbpage`` table. apsw binds neither, and the shell
apsw ships (``apsw.sqlite_extra``) is built without ``.recover``; Debian's ``sqlite3`` package
has it but is not ours to require. So the salvage is done with SQL, in two steps:

1. ``VACUUM INTO`` a new file: a complete copy, vectors included, when every page in use is
   readable (damage in free pages only, or none). It copies indexes and full-text tables page
   by page as they are, so damage there stops it too.
2. Otherwise (a table's own pages are damaged, and VACUUM stops at the first one) the new file
   gets the old schema and every table is copied in rowid order. At a damaged page the read
   jumps to the first rowid it can read again: a doubling search, then a binary one, over
   rowids (a seek goes down the table's interior pages, so it lands past a damaged leaf), so
   only the rows on damaged pages are lost. Indexes and full-text indexes are built afresh
   from the rows, so damage there loses nothing. Vectors are left behind (their vec0 tables
   need sqlite-vec to be created): the server embeds the memories again.

The damaged file is never opened: it and its WAL are copied to a scratch folder beside the new
file and read there, so the file stays byte for byte as it was. The new file is then opened as
BigMind opens any database (migrations run), its full-text indexes are rebuilt, SQLite's
``quick_check`` and each index's integrity check must pass, and only then does it take its
name. If even the list of tables is unreadable, nothing is written and the error says so.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw

from bigmind.errors import BackendUnavailable, DatabaseDamaged, InvalidInput, NotFound
from bigmind.storage import upkeep
from bigmind.storage.connect import connect
from bigmind.storage.db import Row
from bigmind.storage.schema import vector_store

Progress = Callable[[int, int], None]
# The vector store: rows that mean something only beside their vec0 tables, which the salvage
# does not copy (the server embeds the memories again).
VECTOR_TABLES = vector_store()
FIRST_ROWID = -(2**63)
LAST_ROWID = 2**63 - 1
SIDE_FILES = ("-wal", "-shm")


@dataclass(slots=True)
class TableCopy:
    """One table of the recovered file."""

    table: str
    rows: int  # rows in the recovered file
    gaps: int = 0  # damaged stretches skipped while reading it (0: read to its end)
    lost: str | None = None  # why nothing of it could be read


@dataclass(slots=True)
class Recovery:
    """What ``bigmind recover`` did."""

    source: str
    target: str
    method: str  # "vacuum": every row; "salvage": row by row around damaged pages
    tables: list[TableCopy] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return all(t.gaps == 0 and t.lost is None for t in self.tables)

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "complete": self.complete}


def recover(source: Path, target: Path, progress: Progress | None = None) -> Recovery:
    """Copy what is readable of ``source`` into the new file ``target``; ``source`` is left
    as it was. Raises DatabaseDamaged when nothing can be read."""
    started = time.monotonic()
    source, target = source.expanduser(), target.expanduser()
    _check_paths(source, target)
    scratch = Path(tempfile.mkdtemp(prefix=".bigmind-recover-", dir=target.parent))
    try:
        copy = scratch / "damaged.db"
        shutil.copyfile(source, copy)
        if Path(f"{source}-wal").is_file():  # committed rows not yet in the file itself
            shutil.copyfile(f"{source}-wal", f"{copy}-wal")
        fresh = scratch / "recovered.db"
        done = Recovery(str(source), str(target), "vacuum")
        _copy(copy, fresh, done, progress)
        _finish(fresh, done)
        os.chmod(fresh, source.stat().st_mode & 0o777)  # as private as the memory it holds
        os.replace(fresh, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    done.seconds = time.monotonic() - started
    return done


def aside(source: Path, recovered: Path) -> Path:
    """Put ``recovered`` in the place of ``source``; ``source`` (with its WAL and shared-memory
    files, which must not meet the new file) becomes ``<name>.corrupt-<time>``. Returns it."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    kept = source.with_name(f"{source.name}.corrupt-{stamp}")
    os.replace(source, kept)
    for side in SIDE_FILES:
        if Path(f"{source}{side}").exists():
            os.replace(f"{source}{side}", f"{kept}{side}")
    os.replace(recovered, source)
    return kept


def default_target(source: Path) -> Path:
    """``memory.db`` → ``memory.recovered-<time>.db`` beside it (``-2``… if that is taken)."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    name, n = f"{source.stem}.recovered-{stamp}", 1
    while (target := source.with_name(f"{name}{f'-{n}' if n > 1 else ''}{source.suffix}")).exists():
        n += 1
    return target


def _check_paths(source: Path, target: Path) -> None:
    if not source.is_file():
        raise NotFound(
            f"No database file at {source}.",
            cli="Name the damaged file with --from, or set BIGMIND_DB_PATH.",
        )
    if target.exists() or Path(f"{target}-wal").exists():
        raise InvalidInput(f"{target} already exists.", cli="Choose another file with --to.")
    if not target.parent.is_dir():
        raise InvalidInput(f"The folder {target.parent} does not exist; create it first.")


# -- copying ----------------------------------------------------------------------------------
def _copy(copy: Path, fresh: Path, done: Recovery, progress: Progress | None) -> None:
    """VACUUM INTO ``fresh``; at damage, the row-by-row salvage instead."""
    try:
        src = apsw.Connection(str(copy))
    except apsw.Error as exc:
        raise _unreadable(done.source, exc) from exc
    try:
        try:
            src.execute("VACUUM INTO ?", (str(fresh),))
            return
        except (apsw.CorruptError, apsw.NotADBError) as exc:
            done.notes.append(f"VACUUM INTO stopped at a damaged page ({exc})")
        for leftover in (fresh, Path(f"{fresh}-journal")):
            leftover.unlink(missing_ok=True)
        done.method = "salvage"
        _salvage(src, fresh, done, progress)
    finally:
        src.close()


def _salvage(src: apsw.Connection, fresh: Path, done: Recovery, progress: Progress | None) -> None:
    """The old schema in ``fresh``, every readable row of every table, then the indexes, the
    full-text tables and the triggers (vec0 tables and their rows stay behind)."""
    try:
        schema = [
            Entry(*r) for r in src.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
        ]
        user_version = int(src.execute("PRAGMA user_version").get or 0)
    except (apsw.CorruptError, apsw.NotADBError) as exc:
        raise _unreadable(done.source, exc) from exc
    virtual = {e.name for e in schema if e.type == "table" and _is_virtual(e.sql)}
    tables = [e for e in schema if e.type == "table" and _plain(e.name, e.sql, virtual)]
    names = {e.name for e in tables}
    later = [e for e in schema if e.type == "index" and e.sql and e.table in names]
    later += [e for e in schema if e.type == "table" and _is_fulltext(e.sql)]
    later += [e for e in schema if e.type == "trigger" and e.table in names]
    dst = apsw.Connection(str(fresh))
    try:
        with dst:  # one transaction: a failure leaves no half-written file behind
            for e in tables:
                dst.execute(str(e.sql))
            for i, e in enumerate(tables, start=1):
                copied = TableCopy(e.name, 0)
                if e.name not in VECTOR_TABLES:
                    copied = _copy_table(src, dst, e.name)
                done.tables.append(copied)
                if progress:
                    progress(i, len(tables))
            _copy_sequences(src, dst)
            for e in later:
                _create(dst, e, done)
            dst.execute(f"PRAGMA user_version={user_version}")
    finally:
        dst.close()
    done.notes.append(
        "vectors left behind: the server embeds the memories again in the background "
        "(or run `bigmind reindex`)"
    )


@dataclass(frozen=True, slots=True)
class Entry:
    """A row of ``sqlite_master``."""

    type: str
    name: str
    table: str
    sql: str | None


def _create(dst: apsw.Connection, e: Entry, done: Recovery) -> None:
    """An index, trigger or full-text table of the old schema; one that salvaged rows break
    (a unique index over rows that now collide) is noted, not fatal."""
    try:
        dst.execute(str(e.sql))
    except apsw.ConstraintError as exc:
        done.notes.append(f"{e.name} not rebuilt: {exc}")


def _copy_table(src: apsw.Connection, dst: apsw.Connection, table: str) -> TableCopy:
    """Every readable row of ``table`` in rowid order, jumping over damaged pages."""
    q = _quote(table)
    try:
        columns = [r[1] for r in src.execute(f"PRAGMA table_info({q})")]
    except (apsw.CorruptError, apsw.NotADBError, apsw.SQLError) as exc:
        return TableCopy(table, 0, lost=str(exc))
    cols = ", ".join(_quote(c) for c in columns)
    read = f"SELECT rowid, {cols} FROM {q} WHERE rowid >= ? ORDER BY rowid"
    write = f"INSERT INTO {q}(rowid, {cols}) VALUES ({', '.join('?' * (len(columns) + 1))})"
    out = TableCopy(table, 0)
    start: int | None = FIRST_ROWID
    while start is not None:
        try:
            for row in src.execute(read, (start,)):
                dst.execute(write, row)
                out.rows += 1
                start = row[0] + 1
            return out
        except (apsw.CorruptError, apsw.NotADBError):
            out.gaps += 1
            start = _next_readable(src, read + " LIMIT 1", start)
    return out


def _next_readable(src: apsw.Connection, probe: str, failed: int) -> int | None:
    """The smallest rowid above ``failed`` from which ``probe`` reads again (None: none): a
    doubling search for a readable point, then a binary search back towards the damage. A
    seek fails exactly while it lands on a damaged page, so readability only grows with the
    rowid."""

    def readable(at: int) -> bool:
        try:
            src.execute(probe, (at,)).fetchall()
        except (apsw.CorruptError, apsw.NotADBError):
            return False
        return True

    low, step = failed, 1
    while True:
        high = min(failed + step, LAST_ROWID)
        if readable(high):
            break
        if high == LAST_ROWID:
            return None
        low, step = high, step * 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if readable(mid) else (mid, high)
    return high


def _copy_sequences(src: apsw.Connection, dst: apsw.Connection) -> None:
    """AUTOINCREMENT counters: an id once given (a forgotten fact's) is never given again."""
    try:
        rows = src.execute("SELECT name, seq FROM sqlite_sequence").fetchall()
    except (apsw.CorruptError, apsw.NotADBError, apsw.SQLError):
        return
    for name, seq in rows:
        dst.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", (seq, name))


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _is_virtual(sql: str | None) -> bool:
    return bool(sql) and str(sql).lstrip().upper().startswith("CREATE VIRTUAL")


def _is_fulltext(sql: str | None) -> bool:
    return _is_virtual(sql) and "USING FTS5" in " ".join(str(sql).upper().split())


def _plain(name: str, sql: str | None, virtual: set[str]) -> bool:
    """An ordinary table: not SQLite's own, not virtual, not a virtual table's storage."""
    return (
        not name.startswith("sqlite_")
        and name not in virtual
        and not any(name.startswith(f"{v}_") for v in virtual)
        and not _is_virtual(sql)
    )


def _unreadable(source: str, exc: BaseException) -> DatabaseDamaged:
    what = (
        "it is not a SQLite database, or its first page is damaged"
        if isinstance(exc, apsw.NotADBError)
        else f"even its list of tables is damaged ({exc})"
    )
    return DatabaseDamaged(
        f"Nothing can be read from {source}: {what}. "
        "SQLite's own shell reads page by page and may find more: "
        f"`sqlite3 {source} .recover | sqlite3 NEW.db`, then set BIGMIND_DB_PATH to NEW.db; "
        "else restore a backup "
        "(`bigmind import` reads a file `bigmind export` wrote)."
    )


# -- the new file -----------------------------------------------------------------------------
def _finish(fresh: Path, done: Recovery) -> None:
    """Open ``fresh`` as BigMind does (migrations), rebuild its full-text indexes, check it,
    and count its rows."""
    db = connect(fresh)
    try:
        with db.transaction() as tx:
            upkeep.rebuild_fts(tx)
        verdict = upkeep.quick_check(db)
        broken = {k: v for k, v in upkeep.fts_problems(db).items() if v}
        if verdict != "ok" or broken:
            raise BackendUnavailable(
                f"The recovered copy fails its checks (quick_check: {verdict}; "
                f"{broken or 'full-text indexes consistent'}); nothing was written."
            )
        counted = _counts(db.query("SELECT type, name, sql FROM sqlite_master"), db.query)
        salvaged = {t.table: t for t in done.tables}
        done.tables = [
            TableCopy(name, n, salvaged[name].gaps, salvaged[name].lost)
            if name in salvaged
            else TableCopy(name, n)
            for name, n in counted.items()
        ]
        db.scrub([])  # the WAL into the file, truncated: the file alone is the database
    finally:
        db.close()
    wal = Path(f"{fresh}-wal")
    if wal.exists() and wal.stat().st_size:
        raise BackendUnavailable(f"The recovered copy's WAL {wal} was not checkpointed; retry.")
    for side in SIDE_FILES:
        Path(f"{fresh}{side}").unlink(missing_ok=True)


def _counts(schema: list[Row], query: Callable[[str], list[Row]]) -> dict[str, int]:
    rows = [(str(r["type"]), str(r["name"]), r["sql"]) for r in schema]
    virtual = {n for t, n, sql in rows if t == "table" and _is_virtual(sql)}
    plain = sorted(n for t, n, sql in rows if t == "table" and _plain(n, sql, virtual))
    return {n: int(query(f"SELECT count(*) AS n FROM {_quote(n)}")[0]["n"]) for n in plain}
