"""Rewriting the free-text columns of every memory table with their secrets redacted.

New text is redacted before it is written (``limits.stored_text``); this module serves what
was written before that existed: ``bigmind scan-secrets`` (``memory/secret_sweep.py``) and the
migration ``0013_redact_stored_secrets``. It reads every user's rows, page by page in id order,
and rewrites a row whose text changed: the full-text indexes follow (SQLite's triggers,
PostgreSQL's generated ``tsv``), a fact's content hash is recomputed, and the row's vectors
are dropped so the semantic index embeds the redacted text, not the secret.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bigmind import redact
from bigmind.models import content_hash
from bigmind.storage.chunks_table import following_any
from bigmind.storage.db import Params, Row, Tx
from bigmind.storage.fact_files_table import file_name
from bigmind.storage.schema import entry, with_text
from bigmind.storage.vector_tables import CONTEXT_TURNS, VectorTables

Run = Callable[[str, Params], list[Row]]
PAGE = 500


@dataclass(slots=True)
class Page:
    """One page of a table read: where it ended (None: the table is done), the secrets found
    (kind → count) and the ids of the rows holding them."""

    last: object | None
    found: Counter[str] = field(default_factory=Counter)
    rows: list[object] = field(default_factory=list)


def redact_row(row: Row, table: str) -> tuple[dict[str, str], Counter[str]]:
    """A row's free-text columns (of ``table``) that hold secrets, redacted, and what was
    found in them."""
    changes: dict[str, str] = {}
    found: Counter[str] = Counter()
    spec = entry(table)
    for col in spec.text:
        value = row.get(col)
        if isinstance(value, str) and value:
            r = _redact_list(value) if col in spec.path_lists else redact.redact(value)
            if r.changed:
                changes[col] = r.text
                found.update(r.found)
    return changes, found


def _redact_list(value: str) -> redact.Redacted:
    """The JSON text of a list of paths, each path redacted (the list stays valid JSON)."""
    try:
        paths = json.loads(value)
    except ValueError:
        return redact.redact(value)
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return redact.redact(value)
    found: Counter[str] = Counter()
    out = []
    for path in paths:
        r = redact.redact(path)
        out.append(r.text)
        found.update(r.found)
    return redact.Redacted(json.dumps(out) if found else value, found)


def sweep_page(
    run: Run, tx: Tx | None, table: str, after: object | None, limit: int = PAGE
) -> Page:
    """Read ``limit`` rows of ``table`` past id ``after`` and find their secrets; with ``tx``,
    rewrite the rows redacted in it (without, only report: a dry run)."""
    cols = entry(table).text
    where = "" if after is None else " WHERE id > ?"
    params: tuple[object, ...] = () if after is None else (after,)
    rows = run(
        f"SELECT id, {', '.join(cols)} FROM {table}{where} ORDER BY id LIMIT ?", (*params, limit)
    )
    page = Page(rows[-1]["id"] if len(rows) == limit else None)
    for row in rows:
        changes, found = redact_row(row, table)
        if not changes:
            continue
        page.found.update(found)
        page.rows.append(row["id"])
        if tx is not None:
            _rewrite(tx, table, row["id"], changes)
    if tx is not None and page.rows:
        forget_vectors(tx, table, page.rows)
    return page


def _rewrite(tx: Tx, table: str, row_id: object, changes: dict[str, str]) -> None:
    values: dict[str, object] = dict(changes)
    if table == "facts" and "fact" in changes:
        values["content_hash"] = content_hash(changes["fact"])
    if table == "fact_files" and "path" in changes:
        values["name"] = file_name(changes["path"])
        same = tx.execute(
            "SELECT 1 FROM fact_files o JOIN fact_files f ON f.fact_id = o.fact_id"
            " WHERE f.id = ? AND o.path = ? AND o.id <> f.id",
            (row_id, changes["path"]),
        )
        if same:  # the fact is already bound to the redacted path
            tx.execute("DELETE FROM fact_files WHERE id = ?", (row_id,))
            return
    sets = ", ".join(f"{c} = ?" for c in values)
    tx.execute(f"UPDATE {table} SET {sets} WHERE id = ?", (*values.values(), row_id))


def forget_vectors(tx: Tx, table: str, ids: Sequence[object]) -> None:
    """Drop the vectors made from these rows' old text (and, for exchanges, the context
    vectors of the exchanges that follow them, which embed their text too)."""
    for kind in entry(table).vectors:
        VectorTables.forget(tx, kind, ids)
    if table == "conversation_chunks":
        VectorTables.forget(tx, "chunk_context", following_any(tx, ids, CONTEXT_TURNS))


def sweep_all(tx: Tx) -> Counter[str]:
    """Redact every stored secret in one transaction (the upgrade's migration). Returns what
    was found, as ``table:kind`` → count. Tables a later migration creates are skipped (they
    are empty then, and written through the redactor since)."""
    total: Counter[str] = Counter()
    for table in with_text():
        if not tx.table_exists(table):
            continue
        after: object | None = None
        while True:
            page = sweep_page(tx.execute, tx, table, after)
            total.update({f"{table}:{k}": n for k, n in page.found.items()})
            if page.last is None:
                break
            after = page.last
    return total
