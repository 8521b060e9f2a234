"""The registry (bigmind/storage/schema.py) names every table of the migrated schema, on both
backends, and every column an entry names is a column of its table: a table a migration adds
without an entry, or an entry left behind by a renamed column, fails here."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from bigmind.memory.erasure import KINDS
from bigmind.storage import schema
from bigmind.storage.db import Backend
from bigmind.storage.migrations import FTS_TABLES
from bigmind.storage.vector_tables import SELECTS, VectorTables


def live_tables(db: Backend) -> dict[str, set[str]]:
    """Every table of the database's schema with its columns, as the catalogue lists them
    (SQLite: the virtual tables too, not the shadow tables behind them nor its own)."""
    out: dict[str, set[str]] = {}
    if db.dialect == "sqlite":
        rows = db.query(
            "SELECT name, type FROM pragma_table_list WHERE schema = 'main'"
            " AND type IN ('table', 'virtual') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        )
        virtual = {str(r["name"]) for r in rows if r["type"] == "virtual"}
        for r in rows:
            name = str(r["name"])
            if name not in virtual and any(name.startswith(f"{v}_") for v in virtual):
                continue  # a virtual table's storage (vec0 keeps some as plain tables)
            cols = db.query(f"SELECT name FROM pragma_table_info('{name}')")
            out[name] = {str(c["name"]) for c in cols}
        return out
    found = db.query(
        "SELECT c.relname AS t, a.attname AS c FROM pg_attribute a"
        " JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0"
        " AND NOT a.attisdropped"
    )
    for r in found:
        out.setdefault(str(r["t"]), set()).add(str(r["c"]))
    return out


def named_columns(t: schema.Entry) -> set[str]:
    """Every column an entry names."""
    cols = {*t.text, *t.labels, *t.not_text, *t.path_lists}
    cols |= {c for c in (t.owner, t.parent[1] if t.parent else None) if c}
    if isinstance(t.export, schema.Export):
        e = t.export
        cols |= {*e.key, *e.required, *e.order, *([e.session] if e.session else [])}
    if isinstance(t.copy, schema.Copy):
        cols |= {*t.copy.key, *t.copy.same, *t.copy.users}
    if t.forget.cut or t.forget.rebuilt:
        cols.add(t.forget.key)
    return cols


def problems(live: dict[str, set[str]], tables: Sequence[schema.Entry]) -> list[str]:
    """What the registry ``tables`` gets wrong about the schema ``live``, one line each."""
    fulltext = {fts for fts, _base, _cols in FTS_TABLES}
    out: list[str] = []
    by_name = {t.name: t for t in tables}
    seen: set[str] = set()
    for name, cols in sorted(live.items()):
        if name in fulltext:
            continue  # a table's full-text index (SQLite): its base table's entry covers it
        key = schema.VECTORS if name.startswith("vec_") else name
        if key == schema.VECTORS and name.removeprefix("vec_") not in SELECTS:
            out.append(f"{name}: a vector table of no kind of storage/vector_tables.py")
        t = by_name.get(key)
        if t is None:
            out.append(f"{name}: a table of the schema without a registry entry")
            continue
        seen.add(key)
        missing = named_columns(t) - cols
        if missing:
            out.append(f"{name}: the entry names columns the table lacks: {sorted(missing)}")
    out += [f"{n}: an entry without a table in the schema" for n in by_name if n not in seen]
    return out


def test_every_table_has_an_entry_and_every_entry_its_columns(backend: Backend) -> None:
    VectorTables(backend).adopt("test-model", 8)  # the vec_<kind> tables exist from here
    live = live_tables(backend)
    assert {f"vec_{k}" for k in SELECTS} <= live.keys()
    assert problems(live, schema.TABLES) == []


def test_the_check_sees_a_missing_entry_and_a_missing_column(backend: Backend) -> None:
    live = live_tables(backend)
    without = [t for t in schema.TABLES if t.name not in ("reminders", schema.VECTORS)]
    assert problems(live, without) == ["reminders: a table of the schema without a registry entry"]
    renamed = [
        dataclasses.replace(t, text=("body",)) if t.name == "reminders" else t
        for t in schema.TABLES
        if t.name != schema.VECTORS
    ]
    assert problems(live, renamed) == [
        "reminders: the entry names columns the table lacks: ['body']"
    ]
    live["reminders_archive"] = {"id"}
    assert "reminders_archive: a table of the schema without a registry entry" in problems(
        live, schema.TABLES
    )


def test_the_entries_agree_with_themselves() -> None:
    """Paths are free text; a row without an owner column names its parent; the vectors and
    the kinds of memory named exist; a purge deals with every table it matches one way."""
    names = {t.name for t in schema.TABLES}
    assert len(names) == len(schema.TABLES)
    for t in schema.TABLES:
        assert set(t.path_lists) <= set(t.text), t.name
        assert (t.privacy == "belonging") == (t.parent is not None), t.name
        assert t.parent is None or t.parent[0] in names, t.name
        assert set(t.vectors) <= SELECTS.keys(), t.name
        kinds = {*t.forget.deleted_with, *t.forget.unlinked_by, t.forget.kind or "fact"}
        assert kinds <= set(KINDS), t.name
        ways = [w for w in (t.forget.kind, t.forget.cut, t.forget.rebuilt or None) if w]
        assert len(ways) == (1 if t.matched else 0), (t.name, ways)
        if t.forget.cut or t.forget.rebuilt:
            assert t.owner is not None, t.name  # a purge scopes its rows by their owner
