"""``bigmind migrate-db``: copy a personal SQLite memory into PostgreSQL (enterprise mode).

Every table travels, every user, with its ids: parents before children, in blocks of up to
1,000 rows, each block one ``INSERT … ON CONFLICT DO NOTHING`` in one transaction. A second
run (or a run after an interruption) inserts only what is missing. Identity sequences are
moved past the copied ids, so rows the server adds later never collide. A bulk copy of
vectors drops a table's HNSW index and builds it once at the end (much faster than growing
it row by row).

Users are matched by username: a user the target already knows keeps the target's id, and
every user reference of the copied rows is rewritten to it. Vectors are copied only when the
target has none yet or holds the same model and dimension; otherwise they are left behind and
the server embeds the copied memories in the background. Generated columns (PostgreSQL's
``tsv``) are computed by the target, never copied.

At the end every source row is looked up in the target by its key (and a few identifying
columns, so a different row that happens to hold the same id does not count as copied): the
counts per table are printed, and rows that are missing make the command fail.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from typing import Any

from bigmind.errors import InvalidInput, MigrationIncomplete
from bigmind.models import now_ts
from bigmind.storage import directory_table, schema
from bigmind.storage.db import SQLiteBackend
from bigmind.storage.migrations import MIGRATIONS, renumber_after_explicit_ids
from bigmind.storage.pg import PostgresBackend
from bigmind.storage.vector_tables import SELECTS, VectorTables

Progress = Callable[[int, int], None]
ProgressFactory = Callable[[str], Progress]

BLOCK = 1_000  # rows per INSERT (and per transaction), and per verification lookup


@dataclass(frozen=True, slots=True)
class Spec:
    """One table copied and checked, as its registry entry's :class:`~bigmind.storage.schema.Copy`
    says (key, identifying columns, user-id columns)."""

    name: str
    key: tuple[str, ...]
    same: tuple[str, ...]
    users: tuple[str, ...]
    vectors: bool  # belongs to the vector store (copied only when the model matches)


def _specs() -> tuple[Spec, ...]:
    """The registry's copied tables, in its order (parents before children, the vector store
    last), each ``vec_<kind>`` table by name."""
    out: list[Spec] = []
    for t in schema.TABLES:
        if isinstance(t.copy, schema.Copy):
            names = [f"vec_{k}" for k in SELECTS] if t.name == schema.VECTORS else [t.name]
            c = t.copy
            out += [Spec(n, c.key, c.same, c.users, t.vector_store) for n in names]
    return tuple(out)


TABLES = _specs()
# Tables not copied: made again on the target from what was copied (the directory).
REMADE = tuple(t.name for t in schema.TABLES if isinstance(t.copy, schema.Skipped))
VECTOR_COLUMNS = ("rowid", "user_id", "embedding")  # not embedding_bin: SQLite's quantisation


@dataclass(slots=True)
class TableReport:
    table: str
    source: int  # rows in the source
    copied: int = 0  # inserted by this run
    target: int = 0  # source rows found in the target afterwards
    target_total: int = 0  # all rows of the table in the target
    conflicts: int = 0  # source keys held by a different row in the target
    skipped: bool = False  # not copied on purpose (vectors of another model)
    error: str | None = None  # first insert error, if rows were refused

    @property
    def missing(self) -> int:
        return 0 if self.skipped else max(0, self.source - self.target)


@dataclass(slots=True)
class MigrationReport:
    source: str
    target: str
    vectors: str  # what happened to the vectors, in words
    vectors_copied: bool
    tables: list[TableReport] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def missing(self) -> int:
        return sum(t.missing for t in self.tables)

    @property
    def copied(self) -> int:
        return sum(t.copied for t in self.tables)

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "vectors": self.vectors,
            "vectors_copied": self.vectors_copied,
            "copied": self.copied,
            "missing": self.missing,
            "seconds": round(self.seconds, 3),
            "notes": self.notes,
            "tables": {
                t.table: {k: v for k, v in asdict(t).items() if k != "table"}
                | {"missing": t.missing}
                for t in self.tables
            },
        }


# -- planning ----------------------------------------------------------------------------------
def _check_schema(src: SQLiteBackend) -> None:

    known = {m.name for m in MIGRATIONS}
    newer = sorted(
        r["name"]
        for r in src.query("SELECT name FROM bigmind_migrations")
        if r["name"] not in known
    )
    if newer:
        raise InvalidInput(
            f"The source database was written by a newer BigMind (migration {newer[0]}); "
            "upgrade bigmind before migrating it."
        )


def _user_map(src: SQLiteBackend, tgt: PostgresBackend) -> dict[str, str]:
    """Source user id → the target's id for the same username, where the two differ."""
    theirs = {r["username"]: r["id"] for r in tgt.query("SELECT id, username FROM users")}
    out = {}
    for r in src.query("SELECT id, username FROM users"):
        other = theirs.get(r["username"])
        if other is not None and other != r["id"]:
            out[str(r["id"])] = str(other)
    return out


def _vector_plan(src: SQLiteBackend, tgt: PostgresBackend) -> tuple[tuple[str, int] | None, str]:
    """The (model, dimension) whose vectors are copied, or None; and what happens, in words."""
    model = VectorTables(src).model()
    if model is None:
        return None, "the source holds no vectors"
    name, dim = model
    later = "the server embeds the copied memories in the background"
    if not src.vec_version:
        return None, f"not copied: sqlite-vec cannot be loaded here to read them; {later}"
    if not tgt.vec_version:
        return None, f"not copied: the target has no pgvector extension; {later}"
    tables = VectorTables(tgt)
    have = tables.model()
    if have is None:
        tables.adopt(name, dim)
    elif have != model:
        return None, (
            f"not copied: the target holds vectors of {have[0]} ({have[1]} d), the source of "
            f"{name} ({dim} d); {later}"
        )
    return model, f"copied ({name}, {dim} d)"


def _target_types(tgt: PostgresBackend, table: str) -> tuple[dict[str, str], set[str]]:
    """The target table's stored columns with their types, and its generated columns."""
    rows = tgt.query(
        "SELECT attname AS name, format_type(atttypid, NULL) AS type, attgenerated AS g"
        " FROM pg_attribute WHERE attrelid = CAST(? AS regclass) AND attnum > 0"
        " AND NOT attisdropped",
        (table,),
    )
    return {r["name"]: str(r["type"]) for r in rows if not r["g"]}, {
        r["name"] for r in rows if r["g"]
    }


def _columns(
    src: SQLiteBackend, spec: Spec, types: dict[str, str], generated: set[str]
) -> tuple[list[str], list[str]]:
    """Columns to copy (both sides have them; not generated), and source columns left behind."""
    if spec.name.startswith("vec_"):
        ours = set(VECTOR_COLUMNS)
    else:
        ours = src.columns(spec.name) - generated
    return sorted(ours & types.keys()), sorted(ours - types.keys())


# -- copying -----------------------------------------------------------------------------------
def _as_text(v: Any) -> Any:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def _as_int(v: Any) -> Any:
    return int(v) if isinstance(v, float) and v.is_integer() else v


def _as_float(v: Any) -> Any:
    return float(v) if isinstance(v, int) else v


def _as_vector(v: Any) -> Any:
    if isinstance(v, bytes | bytearray | memoryview):
        import numpy as np

        return np.frombuffer(bytes(v), dtype=np.float32)
    return v


# SQLite stores what it is given; PostgreSQL's arrays want one type per column.
_CONVERT: dict[str, Callable[[Any], Any]] = {
    "text": _as_text,
    "integer": _as_int,
    "bigint": _as_int,
    "smallint": _as_int,
    "double precision": _as_float,
    "real": _as_float,
    "vector": _as_vector,
}


class _Rows:
    """Source tuples as target values: user ids merged, types made uniform, vectors as arrays."""

    def __init__(
        self,
        spec: Spec,
        columns: Sequence[str],
        users: dict[str, str],
        types: Sequence[str] | None = None,
    ) -> None:
        self.users = users
        self.user_at = [i for i, c in enumerate(columns) if c in spec.users] if users else []
        self.convert = [(i, _CONVERT[t]) for i, t in enumerate(types or ()) if t in _CONVERT]

    def __call__(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        out = list(row)
        for i in self.user_at:
            out[i] = self.users.get(out[i], out[i])
        for i, fn in self.convert:
            out[i] = fn(out[i])
        return tuple(out)


def _find(
    tgt: PostgresBackend,
    spec: Spec,
    select: Sequence[str],
    types: dict[str, str],
    keys: list[tuple[Any, ...]],
) -> list[dict[str, Any]]:
    """Rows of the target with these keys (one array parameter per key column)."""
    arrays = ", ".join(f"CAST(? AS {types[k]}[])" for k in spec.key)
    return tgt.query(
        f"SELECT {', '.join(select)} FROM {spec.name} WHERE ({', '.join(spec.key)})"
        f" IN (SELECT * FROM unnest({arrays}))",
        [[k[i] for k in keys] for i in range(len(spec.key))],
    )


def _insert(
    tgt: PostgresBackend,
    table: str,
    columns: Sequence[str],
    types: Sequence[str],
    rows: list[tuple[Any, ...]],
) -> int:
    """Insert rows that are not there yet; returns how many were. One array parameter per
    column (``unnest``) keeps the statement short however many rows it carries; vectors go
    one parameter each, so they travel in pgvector's binary form."""
    arrays: list[str] = []
    params: list[Any] = []
    for i, kind in enumerate(types):
        values = [r[i] for r in rows]
        if kind == "vector":
            arrays.append(f"CAST(ARRAY[{', '.join('?' * len(rows))}] AS vector[])")
            params.extend(values)
        else:
            arrays.append(f"CAST(? AS {kind}[])")
            params.append(values)
    sql = (
        f"WITH ins AS (INSERT INTO {table} ({', '.join(columns)})"
        f" SELECT * FROM unnest({', '.join(arrays)}) ON CONFLICT DO NOTHING RETURNING 1)"
        " SELECT count(*) AS n FROM ins"
    )
    with tgt.transaction() as tx:
        return int(tx.execute(sql, params)[0]["n"])


def _copy(
    src: SQLiteBackend,
    tgt: PostgresBackend,
    spec: Spec,
    columns: list[str],
    types: dict[str, str],
    users: dict[str, str],
    report: TableReport,
    bar: Progress | None,
) -> None:
    kinds = [types[c] for c in columns]
    convert = _Rows(spec, columns, users, kinds)
    at = [columns.index(k) for k in spec.key]
    done = 0
    for block in src.stream(f"SELECT {', '.join(columns)} FROM {spec.name}", (), BLOCK):
        rows = [convert(r) for r in block]
        # Rows already there (a repeated or resumed run) are not sent again: cheaper than
        # letting the target compute their generated columns and index entries to refuse them.
        there = _find(tgt, spec, spec.key, types, [tuple(r[i] for i in at) for r in rows])
        have = {tuple(r[k] for k in spec.key) for r in there}
        rows = [r for r in rows if tuple(r[i] for i in at) not in have]
        try:
            if rows:
                report.copied += _insert(tgt, spec.name, columns, kinds, rows)
        except tgt.Error:
            # One bad row (a dangling reference in an old file, a NUL in a text) must not
            # keep the rest of its block out: insert row by row, and remember the first error.
            for row in rows:
                try:
                    report.copied += _insert(tgt, spec.name, columns, kinds, [row])
                except tgt.Error as exc:
                    if report.error is None:
                        detail = " ".join(str(exc).split())
                        report.error = f"{spec.name}: {detail}"
        done += len(block)
        if bar is not None:
            bar(done, report.source)


@contextmanager
def _bulk_vectors(
    tgt: PostgresBackend, spec: Spec, model: tuple[str, int], rows: int
) -> Iterator[None]:
    """Copying many vectors: drop the HNSW index first and build it once at the end, which is
    several times faster than growing it row by row. The index is re-created by the same DDL
    the vector store uses (``CREATE … IF NOT EXISTS``), also when a run is repeated."""
    kind = spec.name.removeprefix("vec_")
    have = int(tgt.query(f"SELECT count(*) AS n FROM {spec.name}")[0]["n"])
    if rows - have < BLOCK or have > rows - have:
        yield  # a few rows, or mostly there already: keep the index
        return
    with tgt.transaction() as tx:
        tx.script(f"DROP INDEX IF EXISTS {spec.name}_hnsw")
    try:
        yield
    except BaseException:
        with suppress(Exception):  # the copy's own error is the one to report
            _build_index(tgt, kind, model[1], rows)
        raise
    _build_index(tgt, kind, model[1], rows)


def _build_index(tgt: PostgresBackend, kind: str, dim: int, rows: int) -> None:
    # Room for the graph in memory (else pgvector builds it on disk, much slower); capped.
    want = min(1 << 30, max(64 << 20, rows * (dim * 4 + 256) * 2))
    with tgt.transaction() as tx:
        current = tx.execute("SELECT pg_size_bytes(current_setting('maintenance_work_mem')) AS b")
        if want > int(current[0]["b"]):
            tx.script(f"SET LOCAL maintenance_work_mem = '{want // (1 << 20)}MB'")
        tx.script(VectorTables(tgt).table_ddl(kind, dim))  # the vector store's own DDL


def _advance_sequences(tgt: PostgresBackend, table: str) -> None:
    """Move identity sequences past the highest id (never back: ids handed out stay used)."""
    identity = tgt.query(
        "SELECT column_name AS name FROM information_schema.columns WHERE table_schema ="
        " current_schema() AND table_name = ? AND is_identity = 'YES'",
        (table,),
    )
    for r in identity:
        with tgt.transaction() as tx:
            renumber_after_explicit_ids(tx, table, r["name"])


# -- verification ------------------------------------------------------------------------------
def _verify(
    src: SQLiteBackend,
    tgt: PostgresBackend,
    spec: Spec,
    types: dict[str, str],
    users: dict[str, str],
    report: TableReport,
    tick: Callable[[int], None],
) -> None:
    """Count the source rows present in the target (key and identifying columns equal)."""
    cols = [*spec.key, *spec.same]
    nkey = len(spec.key)
    convert = _Rows(spec, cols, users, [types[c] for c in cols])
    for block in src.stream(f"SELECT {', '.join(cols)} FROM {spec.name}", (), BLOCK):
        rows = [convert(r) for r in block]
        found = _find(tgt, spec, cols, types, [r[:nkey] for r in rows])
        there = {tuple(r[c] for c in cols) for r in found}
        there_keys = {t[:nkey] for t in there}
        for row in rows:
            if row in there:
                report.target += 1
            elif row[:nkey] in there_keys:
                report.conflicts += 1
        tick(len(block))
    report.target_total = int(tgt.query(f"SELECT count(*) AS n FROM {spec.name}")[0]["n"])


# -- the whole run -----------------------------------------------------------------------------
def migrate_database(
    src: SQLiteBackend, tgt: PostgresBackend, progress: ProgressFactory | None = None
) -> MigrationReport:
    """Copy everything of ``src`` that ``tgt`` lacks, then verify; see the module doc."""
    started = time.monotonic()
    _check_schema(src)
    tgt = tgt.maintenance()  # every user's rows: the tables' owner role only (pgpolicies)
    users = _user_map(src, tgt)
    model, vectors = _vector_plan(src, tgt)
    report = MigrationReport(src.location, tgt.location, vectors, model is not None)
    if users:
        report.notes.append(
            f"{len(users)} user(s) already existed in the target under another id; "
            "their memories were attached to the target's user."
        )
    checked: list[tuple[Spec, TableReport, dict[str, str]]] = []
    for spec in TABLES:
        if not src.table_exists(spec.name):
            continue
        count = int(src.query(f"SELECT count(*) AS n FROM {spec.name}")[0]["n"])
        table = TableReport(spec.name, count)
        report.tables.append(table)
        if spec.vectors and model is None:
            table.skipped = True
            continue
        if not tgt.table_exists(spec.name):
            table.error = f"{spec.name}: the target has no such table"
            continue
        types, generated = _target_types(tgt, spec.name)
        columns, left = _columns(src, spec, types, generated)
        if left:
            report.notes.append(
                f"{spec.name}: column(s) {', '.join(left)} exist only in the source; not copied."
            )
        if count:
            bar = progress(f"Copying {spec.name}") if progress else None
            if spec.name.startswith("vec_") and model is not None:
                with _bulk_vectors(tgt, spec, model, count):
                    _copy(src, tgt, spec, columns, types, users, table, bar)
            else:
                _copy(src, tgt, spec, columns, types, users, table, bar)
            _advance_sequences(tgt, spec.name)
        checked.append((spec, table, types))
    total = sum(t.source for _, t, _ in checked)
    bar = progress("Verifying") if progress and total else None
    done = 0

    def tick(rows: int) -> None:
        nonlocal done
        done += rows
        if bar is not None:
            bar(done, total)

    for spec, table, types in checked:
        _verify(src, tgt, spec, types, users, table, tick)
    with tgt.transaction() as tx:  # the directory is made from what was copied, hidden kept
        directory_table.rebuild(tx, now_ts())
        directory_table.hide_users(tx, [users.get(u, u) for u in directory_table.hidden_users(src)])
    report.seconds = time.monotonic() - started
    return report


def render(report: MigrationReport) -> str:
    """The counts table and the outcome, for people."""
    width = max(len(t.table) for t in report.tables) if report.tables else 5
    lines = [f"{'table':<{width}}  {'source':>8}  {'target':>8}  {'copied':>8}  {'missing':>8}"]
    for t in report.tables:
        if t.skipped:
            lines.append(f"{t.table:<{width}}  {t.source:>8}  {'skipped':>8}")
            continue
        mark = "  ← missing" if t.missing else ""
        lines.append(
            f"{t.table:<{width}}  {t.source:>8}  {t.target:>8}  {t.copied:>8}  {t.missing:>8}{mark}"
        )
    lines.append(f"Vectors: {report.vectors}.")
    lines.extend(report.notes)
    lines.append(
        f"Copied {report.copied:,} new rows from {report.source} to {report.target} "
        f"in {report.seconds:.1f} s."
    )
    return "\n".join(lines)


def failure(report: MigrationReport) -> MigrationIncomplete:
    tables = [t for t in report.tables if t.missing]
    names = ", ".join(f"{t.table} ({t.missing})" for t in tables)
    conflicts = sum(t.conflicts for t in tables)
    why = next((t.error for t in tables if t.error), None)
    if why is None and conflicts:
        why = (
            f"{conflicts} row(s) have the id of a different row already in the target; "
            "migrate into an empty database"
        )
    cause = f" First error: {why}." if why else ""
    return MigrationIncomplete(
        f"{report.missing} source row(s) are not in the target: {names}.{cause} "
        "Fix the cause and run the same command again: it copies only what is missing."
    )
