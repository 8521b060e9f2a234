"""``bigmind migrate-db``: copy a personal SQLite memory into PostgreSQL (enterprise mode).

Every table travels, every user, with its ids: parents before children, in blocks of up to
1,000 rows, each block one ``INSERT … ON CONFLICT DO NOTHING`` in one transaction. A second
run (or a run after an interruption) inserts only what is missing. Identity sequences are
moved past the copied ids, so rows the server adds later never collide.

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

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bigmind.db import SQLiteBackend
from bigmind.errors import BigMindError, InvalidInput, NotFound
from bigmind.pg import PostgresBackend, redact
from bigmind.vectors import SOURCES, VectorStore

Progress = Callable[[int, int], None]
ProgressFactory = Callable[[str], Progress]

BLOCK = 1_000  # rows per INSERT (and per transaction)
MAX_PARAMS = 60_000  # PostgreSQL allows 65,535 parameters per statement


class MigrationIncomplete(BigMindError):
    """Rows of the source are not in the target after the copy; a second run resumes."""

    exit_code = 7


@dataclass(frozen=True, slots=True)
class Spec:
    """How one table is copied and checked."""

    name: str
    key: tuple[str, ...] = ("id",)  # primary key: what ON CONFLICT and verification match on
    same: tuple[str, ...] = ()  # must also be equal for a present key to count as this row
    users: tuple[str, ...] = ()  # columns holding a user id (rewritten when a user is merged)
    vectors: bool = False  # belongs to the vector store (copied only when the model matches)


# Parents before children (foreign keys); the vector store last.
TABLES: tuple[Spec, ...] = (
    Spec("bigmind_migrations", ("name",)),
    Spec("users", same=("username",), users=("id",)),
    Spec("sessions", same=("user_id", "started_at"), users=("user_id",)),
    Spec("session_summaries"),
    Spec("identity_profile", same=("user_id",), users=("id", "user_id")),
    Spec(
        "global_knowledge",
        same=("title", "created_at"),
        users=("promoted_by", "approved_by", "reviewed_by"),
    ),
    Spec("facts", same=("user_id", "created_at"), users=("user_id",)),
    Spec("conversation_chunks", same=("session_id", "seq"), users=("user_id",)),
    Spec("hypotheses", same=("user_id", "created_at"), users=("user_id",)),
    Spec("people", same=("username",), users=("added_by",)),
    Spec("focus_announcements", same=("session_id", "created_at"), users=("user_id",)),
    Spec("token_saves", same=("user_id", "created_at"), users=("user_id",)),
    Spec("memory_usage", ("kind", "item_id", "user_id"), users=("user_id",)),
    Spec("embedding_state", ("key",), vectors=True),
    Spec("embeddings", same=("kind", "item_id"), users=("user_id",), vectors=True),
    *(
        Spec(f"vec_{kind}", ("rowid",), same=("user_id",), users=("user_id",), vectors=True)
        for kind in SOURCES
    ),
)
VECTOR_COLUMNS = ("rowid", "user_id", "embedding")


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
    from bigmind.migrations import MIGRATIONS

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


def _vector_plan(src: SQLiteBackend, tgt: PostgresBackend) -> tuple[bool, str]:
    """Whether to copy the vectors, and why (not)."""
    model = VectorStore(src).model()
    if model is None:
        return False, "the source holds no vectors"
    name, dim = model
    later = "the server embeds the copied memories in the background"
    if not src.vec_version:
        return False, f"not copied: sqlite-vec cannot be loaded here to read them; {later}"
    if not tgt.vec_version:
        return False, f"not copied: the target has no pgvector extension; {later}"
    store = VectorStore(tgt)
    have = store.model()
    if have is None:
        store.adopt(name, dim)
    elif have != model:
        return False, (
            f"not copied: the target holds vectors of {have[0]} ({have[1]} d), the source of "
            f"{name} ({dim} d); {later}"
        )
    return True, f"copied ({name}, {dim} d)"


def _columns(src: SQLiteBackend, tgt: PostgresBackend, spec: Spec) -> tuple[list[str], list[str]]:
    """Columns to copy (both sides have them; not generated), and source columns left behind."""
    if spec.name.startswith("vec_"):
        return list(VECTOR_COLUMNS), []
    rows = tgt.query(
        "SELECT column_name AS name, is_generated AS g FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = ?",
        (spec.name,),
    )
    theirs = {r["name"] for r in rows if r["g"] != "ALWAYS"}
    generated = {r["name"] for r in rows if r["g"] == "ALWAYS"}
    ours = src.columns(spec.name) - generated
    return sorted(ours & theirs), sorted(ours - theirs)


# -- copying -----------------------------------------------------------------------------------
class _Rows:
    """Turns source tuples into target tuples: user ids merged, vectors as float32 arrays."""

    def __init__(self, spec: Spec, columns: Sequence[str], users: dict[str, str]) -> None:
        self.user_at = [i for i, c in enumerate(columns) if c in spec.users] if users else []
        self.vector_at = columns.index("embedding") if "embedding" in columns else -1
        self.users = users

    def __call__(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        if not self.user_at and self.vector_at < 0:
            return row
        out = list(row)
        for i in self.user_at:
            out[i] = self.users.get(out[i], out[i])
        if self.vector_at >= 0:
            import numpy as np

            value = out[self.vector_at]
            if isinstance(value, bytes | bytearray | memoryview):
                out[self.vector_at] = np.frombuffer(bytes(value), dtype=np.float32)
        return tuple(out)


def _insert(
    tgt: PostgresBackend, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]
) -> int:
    one = "(" + ", ".join("?" * len(columns)) + ")"
    sql = (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([one] * len(rows))}"
        " ON CONFLICT DO NOTHING RETURNING 1 AS x"
    )
    with tgt.transaction() as tx:
        return len(tx.execute(sql, [v for row in rows for v in row]))


def _copy(
    src: SQLiteBackend,
    tgt: PostgresBackend,
    spec: Spec,
    columns: list[str],
    convert: _Rows,
    report: TableReport,
    bar: Progress | None,
) -> None:
    size = max(1, min(BLOCK, MAX_PARAMS // len(columns)))
    done = 0
    for block in src.stream(f"SELECT {', '.join(columns)} FROM {spec.name}", (), size):
        rows = [convert(r) for r in block]
        try:
            report.copied += _insert(tgt, spec.name, columns, rows)
        except tgt.Error:
            # One bad row (a dangling reference in an old file, a NUL in a text) must not
            # keep the rest of its block out: insert row by row, and remember the first error.
            for row in rows:
                try:
                    report.copied += _insert(tgt, spec.name, columns, [row])
                except tgt.Error as exc:
                    if report.error is None:
                        detail = " ".join(str(exc).split())
                        report.error = f"{spec.name}: {detail}"
        done += len(block)
        if bar is not None:
            bar(done, report.source)


def _advance_sequences(tgt: PostgresBackend, table: str) -> None:
    """Move identity sequences past the highest id (never back: ids handed out stay used)."""
    identity = tgt.query(
        "SELECT column_name AS name FROM information_schema.columns WHERE table_schema ="
        " current_schema() AND table_name = ? AND is_identity = 'YES'",
        (table,),
    )
    for r in identity:
        col = r["name"]
        with tgt.transaction() as tx:
            tx.execute(
                "SELECT setval(s, m) FROM (SELECT CAST(pg_get_serial_sequence(?, ?) AS regclass)"
                f" AS s, (SELECT max({col}) FROM {table}) AS m) x"
                " WHERE m IS NOT NULL AND m > coalesce(pg_sequence_last_value(s), 0)",
                (table, col),
            )


# -- verification ------------------------------------------------------------------------------
def _verify(
    src: SQLiteBackend, tgt: PostgresBackend, spec: Spec, users: dict[str, str], report: TableReport
) -> int:
    """Count the source rows present in the target (key and identifying columns equal)."""
    cols = [*spec.key, *spec.same]
    nkey = len(spec.key)
    convert = _Rows(spec, cols, users)
    one = "(" + ", ".join("?" * nkey) + ")"
    seen = 0
    for block in src.stream(f"SELECT {', '.join(cols)} FROM {spec.name}", (), BLOCK):
        rows = [convert(r) for r in block]
        keys = [r[:nkey] for r in rows]
        found = tgt.query(
            f"SELECT {', '.join(cols)} FROM {spec.name} WHERE ({', '.join(spec.key)})"
            f" IN ({', '.join([one] * len(keys))})",
            [v for k in keys for v in k],
        )
        there = {tuple(r[c] for c in cols) for r in found}
        there_keys = {t[:nkey] for t in there}
        for row in rows:
            if row in there:
                report.target += 1
            elif row[:nkey] in there_keys:
                report.conflicts += 1
        seen += len(block)
    report.target_total = int(tgt.query(f"SELECT count(*) AS n FROM {spec.name}")[0]["n"])
    return seen


# -- the whole run -----------------------------------------------------------------------------
def migrate_database(
    src: SQLiteBackend, tgt: PostgresBackend, progress: ProgressFactory | None = None
) -> MigrationReport:
    """Copy everything of ``src`` that ``tgt`` lacks, then verify; see the module doc."""
    started = time.monotonic()
    _check_schema(src)
    users = _user_map(src, tgt)
    copy_vectors, vectors = _vector_plan(src, tgt)
    report = MigrationReport(src.location, tgt.location, vectors, copy_vectors)
    if users:
        report.notes.append(
            f"{len(users)} user(s) already existed in the target under another id; "
            "their memories were attached to the target's user."
        )
    checked: list[tuple[Spec, TableReport]] = []
    for spec in TABLES:
        if not src.table_exists(spec.name):
            continue
        count = int(src.query(f"SELECT count(*) AS n FROM {spec.name}")[0]["n"])
        table = TableReport(spec.name, count)
        report.tables.append(table)
        if spec.vectors and not copy_vectors:
            table.skipped = True
            continue
        if not tgt.table_exists(spec.name):
            table.error = f"{spec.name}: the target has no such table"
            continue
        columns, left = _columns(src, tgt, spec)
        if left:
            report.notes.append(
                f"{spec.name}: column(s) {', '.join(left)} exist only in the source; not copied."
            )
        if count:
            bar = progress(f"Copying {spec.name}") if progress else None
            _copy(src, tgt, spec, columns, _Rows(spec, columns, users), table, bar)
            _advance_sequences(tgt, spec.name)
        checked.append((spec, table))
    total = sum(t.source for _, t in checked)
    bar = progress("Verifying") if progress and total else None
    done = 0
    for spec, table in checked:
        done += _verify(src, tgt, spec, users, table)
        if bar is not None:
            bar(done, total)
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


# -- the command -------------------------------------------------------------------------------
def migrate_db_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--to", required=True, metavar="URL", help="the PostgreSQL database (postgresql://…)"
    )
    sp.add_argument(
        "--from",
        dest="source",
        metavar="PATH",
        help="the SQLite file to copy (default: BIGMIND_DB_PATH)",
    )


def cmd_migrate_db(args: argparse.Namespace) -> int:
    """Copy a SQLite memory into PostgreSQL, verify it, print the counts."""
    from bigmind.cli import load_settings, progress, setup_logging
    from bigmind.db import connect
    from bigmind.pg import connect_pg

    url = str(args.to).strip()
    if not url.startswith(("postgresql://", "postgres://")):
        raise InvalidInput(
            f"--to must be a PostgreSQL URL (postgresql://user:password@host:5432/db), "
            f"got {redact(url)!r}."
        )
    if args.source:
        path = Path(args.source).expanduser()
        setup_logging("WARNING")
    else:
        settings = load_settings()
        setup_logging(settings.log_level)
        path = settings.db_path
    if not path.is_file():
        raise NotFound(
            f"No SQLite database at {path}: nothing to migrate (nothing was created). "
            "Pass --from PATH, or set BIGMIND_DB_PATH."
        )
    src = connect(path)
    try:
        tgt = connect_pg(url)
        try:
            report = migrate_database(src, tgt, progress)
        finally:
            tgt.close()
    finally:
        src.close()
    if args.json:
        print(json.dumps(report.as_json(), indent=1))
    else:
        print(render(report))
    sys.stdout.flush()
    if report.missing:
        raise failure(report)
    return 0
