"""Whole-database upkeep: integrity checks and full-text index housekeeping."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from bigmind.storage.db import Backend, Tx
from bigmind.storage.migrations import FTS_TABLES, secure_fts_deletes
from bigmind.storage.table import marks


def quick_check(db: Backend) -> str:
    """SQLite's own page check: 'ok' or what is wrong."""
    rows = db.query("PRAGMA quick_check")
    return str(next(iter(rows[0].values()))) if rows else "ok"


def fts_problems(db: Backend) -> dict[str, str | None]:
    """Each FTS5 index checked against its content table: None when consistent, else the
    error. The check is spelled as an INSERT that changes nothing, in a transaction that is
    always rolled back."""
    out: dict[str, str | None] = {}
    for fts, _base, _cols in FTS_TABLES:
        try:
            with db.trial() as tx:
                tx.execute(f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)")
            out[fts] = None
        except db.Error as exc:
            out[fts] = str(exc)
    return out


def rebuild_fts(tx: Tx) -> None:
    """Build each FTS5 index again from its content table (after a recovery)."""
    for fts, _base, _cols in FTS_TABLES:
        tx.execute(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")


def optimize_fts(tx: Tx) -> None:
    """Merge each FTS5 index's segments (after deleting many rows)."""
    for fts, _base, _cols in FTS_TABLES:
        tx.execute(f"INSERT INTO {fts}({fts}) VALUES ('optimize')")


@contextmanager
def bulk_deletes(tx: Tx) -> Iterator[None]:
    """Many rows deleted in ``tx`` (memory_vacuum): on SQLite, FTS5 only records the deletions
    meanwhile (secure-delete, ~2 ms a row, is off), then every index is merged into one segment,
    which drops the deleted rows' terms just the same, and secure-delete is on again."""
    if tx.dialect != "sqlite":
        yield
        return
    for fts, _base, _cols in FTS_TABLES:
        secure_fts_deletes(tx, fts, on=False)
    yield
    optimize_fts(tx)
    for fts, _base, _cols in FTS_TABLES:
        secure_fts_deletes(tx, fts)


def drop_samples(tx: Tx, tables: Sequence[str]) -> None:
    """SQLite: forget the planner's sampled index keys of these tables (``sqlite_stat4``,
    written by a full ANALYZE), which may quote a deleted row's text; the row counts in
    ``sqlite_stat1`` stay. Nothing to do where no full ANALYZE ever ran."""
    if tx.dialect == "sqlite" and tables and tx.table_exists("sqlite_stat4"):
        tx.execute(f"DELETE FROM sqlite_stat4 WHERE tbl IN ({marks(tables)})", tuple(tables))


def invalid_pg_indexes(db: Backend) -> list[str]:
    """PostgreSQL indexes left invalid (a failed concurrent build)."""
    rows = db.query(
        "SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = current_schema() AND NOT i.indisvalid"
    )
    return [str(r["name"]) for r in rows]
