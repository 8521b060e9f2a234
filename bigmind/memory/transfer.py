"""Export one user's memory to a JSON file, and merge such a file back in.

Export writes every row the user owns, all columns, atomically. Import holds every row of the
file to the rules a tool call is held to (:mod:`bigmind.memory.importcheck`) and checks every
session it names before anything is written; a bad row refuses the whole file. It then writes
in batches (:data:`BATCH_SECONDS`, :data:`BATCH_ROWS`), one transaction each, so other windows'
writes get the lock between them. Rows are re-owned by the importing user and matched on a natural key, so
importing the same file twice adds nothing and an import killed mid-way, run again, completes
with every row once. Integer ids are kept where they are free, so export → import into an
empty database reproduces every row.

Links between facts (conflicts, supersessions, merges) are not exported: imported facts are
marked unchecked, and the server checks them against the memory they joined once its model
is ready (:mod:`bigmind.memory.dedup`), merging duplicates and linking rivals there.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bigmind import __version__, limits, redact
from bigmind.errors import ExportError, InvalidInput
from bigmind.memory import globalkb
from bigmind.memory.exportpath import EXPORT_FORMAT
from bigmind.memory.importcheck import SESSION_REFS, check_row
from bigmind.models import content_hash, now_ts
from bigmind.storage.db import Row, SQLiteBackend, Tx
from bigmind.storage.migrations import GENERATED_COLUMNS, applied, renumber_after_explicit_ids
from bigmind.storage.secrets import TEXT_COLUMNS, redact_row
from bigmind.storage.store import Store
from bigmind.storage.transfer import Transfer

EXPORT_VERSION = 1
PROGRESS_EVERY = 500  # rows between progress reports on import
# Rows are written in batches, one transaction each, so the write lock is free between them:
# a batch ends after this long or this many rows (the row cap bounds a transaction of large
# chunks), whichever comes first, then a pause lets a waiting writer in (SQLite's busy handler
# retries every 100 ms at most). Figures in docs/reliability.md.
BATCH_SECONDS = 0.5
BATCH_ROWS = 5_000
BATCH_PAUSE_S = 0.1
# A file's session whose id another user's session has is imported under an id made from it
# and the importer's (the same on every run, so a re-run still finds it).
# Session references without a foreign key: one that is not in the file nor the importer's is
# dropped (in the source database its session may have been forgotten), not refused.
_LOOSE_REFS = ("global_knowledge",)
_FRESH = uuid.UUID("6f1d3a52-8f0e-4c1e-9a57-2b8c0e4d7a10")
Progress = Callable[[int, int], None]
_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class Table:
    """How one table travels: its natural key, required columns, and user-reference columns."""

    name: str
    key: tuple[str, ...]
    required: tuple[str, ...]
    owner: tuple[str, ...] = ("user_id",)
    int_id: bool = True


# Parents before children (foreign keys).
TABLES = (
    Table("sessions", ("id",), ("id", "started_at"), int_id=False),
    Table("session_summaries", ("id",), ("id", "summary"), owner=(), int_id=False),
    Table("facts", ("content_hash", "created_at"), ("category", "fact")),
    # A fact's earlier versions travel with it: imported for the facts an import adds.
    Table("fact_history", ("fact_id", "version"), ("fact_id", "version", "category", "fact")),
    # The files a fact is bound to travel with it the same way.
    Table("fact_files", ("fact_id", "path"), ("fact_id", "path", "name")),
    Table("conversation_chunks", ("session_id", "seq"), ("session_id", "role", "content", "seq")),
    Table("hypotheses", ("hypothesis", "created_at"), ("hypothesis",)),
    Table("attempts", ("approach", "created_at"), ("approach", "outcome")),
    Table("reminders", ("text", "created_at"), ("text", "created_at")),
    Table(
        "focus_announcements",
        ("session_id", "created_at", "description"),
        ("session_id", "description"),
    ),
    Table(
        "token_saves", ("created_at", "description"), ("description", "tokens_saved", "method_used")
    ),
    Table("people", ("username",), ("username",), owner=("added_by",)),
    Table(
        "global_knowledge",
        ("title", "created_at"),
        ("category", "title", "content"),
        owner=("promoted_by",),
    ),
)


# -- export ------------------------------------------------------------------------------------
def export_data(store: Store, progress: Progress | None = None) -> dict[str, Any]:
    """Every row this user owns, with all columns, as a JSON-ready dict (``progress`` is
    told the tables read so far)."""
    copier = Transfer(store.db, store.uid)
    data: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": now_ts(),
        "bigmind_version": __version__,
        "schema_version": len(applied(store.db)),
        "user": copier.user(),
        "identity_profile": copier.profile(),
    }
    for i, t in enumerate(TABLES, 1):
        data[t.name] = [
            {k: v for k, v in r.items() if k not in GENERATED_COLUMNS} for r in copier.owned(t.name)
        ]
        if progress:
            progress(i, len(TABLES))
    return data


def write_export(
    store: Store, target: Path, *, overwrite: bool = False, progress: Progress | None = None
) -> dict[str, int]:
    """Write the export atomically (temp file, then link/rename). Returns rows per table."""
    if target.exists() and not overwrite:
        raise _already_there(target)
    data = export_data(store, progress)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".bigmind-export-", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, ensure_ascii=False, indent=1)
                fh.flush()
                os.fsync(fh.fileno())
            _publish(Path(tmp), target, overwrite)
        finally:
            Path(tmp).unlink(missing_ok=True)
    except FileExistsError as exc:
        raise _already_there(target) from exc
    except OSError as exc:
        raise ExportError(f"Could not write {target}: {exc.strerror or exc}.") from exc
    return {k: len(v) for k, v in data.items() if isinstance(v, list)}


def _already_there(target: Path) -> ExportError:
    return ExportError(
        f"{target} already exists.",
        tool="Pass overwrite=True to replace it, or choose another output_path.",
        cli="Pass --overwrite to replace it, or choose another file with --output.",
    )


def _publish(tmp: Path, target: Path, overwrite: bool) -> None:
    """Move the finished temp file into place; without overwrite, never clobber (link is atomic)."""
    if overwrite:
        os.replace(tmp, target)
        return
    try:
        os.link(tmp, target)  # raises FileExistsError if someone got there first
    except FileExistsError:
        raise
    except OSError:  # filesystems without hard links
        if target.exists():
            raise FileExistsError(str(target)) from None
        os.replace(tmp, target)


# -- import ------------------------------------------------------------------------------------
@dataclass(slots=True)
class ImportReport:
    added: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    source_user: str = ""

    @property
    def total_added(self) -> int:
        return sum(self.added.values())


def load_export(path: Path) -> dict[str, Any]:
    """Read and validate an export file completely; nothing is written here."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"Cannot read {path}: {exc}.") from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}).") from exc
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise InvalidInput(f'{path} is not a BigMind export (no "format": "{EXPORT_FORMAT}").')
    version = data.get("version")
    if not isinstance(version, int) or not 1 <= version <= EXPORT_VERSION:
        raise InvalidInput(
            f"{path} is export version {version!r}; this BigMind reads versions 1–{EXPORT_VERSION}."
            " Upgrade BigMind to import it."
        )
    for t in (*TABLES, Table("identity_profile", ("user_id",), ())):
        rows = data.get(t.name, [])
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise InvalidInput(f"{path}: '{t.name}' must be a list of objects.")
        for i, r in enumerate(rows):
            bad = [k for k in r if not _IDENT.match(str(k))]
            if bad:
                raise InvalidInput(f"{path}: {t.name}[{i}] has invalid column names {bad[:3]}.")
            missing = [c for c in t.required if r.get(c) in (None, "")]
            if missing:
                raise InvalidInput(f"{path}: {t.name}[{i}] lacks {', '.join(missing)}.")
            try:
                check_row(t.name, i, r)
            except InvalidInput as exc:
                raise InvalidInput(f"{path}: {exc}") from None
    session_ids = {r["id"] for r in data.get("sessions", [])}
    for child in ("session_summaries", "conversation_chunks", "focus_announcements"):
        key = "id" if child == "session_summaries" else "session_id"
        orphans = {r[key] for r in data.get(child, [])} - session_ids
        if orphans:
            raise InvalidInput(
                f"{path}: {child} refer to sessions missing from the file ({sorted(orphans)[:2]})."
            )
    user = data.get("user")
    name = user.get("username") if isinstance(user, dict) else None
    if not isinstance(name, str) or not name.strip() or len(name) > limits.NAME:
        raise InvalidInput(f"{path}: the 'user' object is missing.")
    return data


def import_data(
    store: Store,
    data: dict[str, Any],
    mode: str = "merge",
    progress: Progress | None = None,
    *,
    batch_rows: int = BATCH_ROWS,
) -> ImportReport:
    """Merge a validated export into the store's user's memory, ``batch_rows`` rows per
    transaction (``progress`` is told the rows merged so far, every ``PROGRESS_EVERY``).

    Raises:
        InvalidInput: a row names a session that is neither in the file nor this user's, or
            does not fit this database; nothing of the file was written.
    """
    if mode != "merge":
        raise InvalidInput(f"'mode' must be 'merge' (got {mode!r}); merge never deletes anything.")
    report = ImportReport(source_user=str(data["user"]["username"]))
    renamed = _session_ids(store, data)
    try:
        _merge(store, data, report, progress, renamed, max(1, batch_rows))
    except store.db.Error as exc:
        raise InvalidInput(
            f"The file's rows do not fit this database ({exc}); the batches before it were "
            "imported, and importing the file again after fixing it adds each row once."
        ) from exc
    return report


def _session_ids(store: Store, data: dict[str, Any]) -> dict[str, str]:
    """The ids the file's sessions are stored under where theirs is another user's, after
    checking that every session a row names is in the file or this user's.

    Another user's session and an id nobody has are refused in the same words, and a file
    session with another user's id is imported under a fresh one (made from the two, so a
    re-run makes the same): nothing tells the importer that an id they name exists."""
    in_file = {str(r["id"]) for r in data.get("sessions", [])}
    named = {str(r[col]) for t, col in SESSION_REFS.items() for r in data.get(t, []) if r.get(col)}
    owners = Transfer(store.db, store.uid).session_owners(sorted(in_file | named))
    for table, col in SESSION_REFS.items():
        for i, r in enumerate(data.get(table, [])):
            sid = r.get(col)
            if sid and sid not in in_file and owners.get(sid) != store.uid:
                if table in _LOOSE_REFS:
                    r[col] = None  # no foreign key: a forgotten session's id may remain
                    continue
                raise InvalidInput(
                    f"{table}[{i}].{col}: session {sid} is not in the file nor yours; nothing "
                    "was imported. Add that session to the file or remove the reference."
                )
    return {
        sid: str(uuid.uuid5(_FRESH, f"{store.uid}/{sid}"))
        for sid in in_file
        if owners.get(sid, store.uid) != store.uid
    }


@dataclass(slots=True)
class _Merge:
    """One import's state across its batches."""

    store: Store
    report: ImportReport
    renamed: dict[str, str]
    progress: Progress | None
    total: int
    seen: int = 0
    may_review: bool = False
    fact_ids: dict[object, int] = field(default_factory=dict)  # the file's id → this database's

    def row(self, tx: Tx, copier: Transfer, t: Table, raw: dict[str, Any], cols: set[str]) -> None:
        """Add one file row unless it is here already."""
        self.seen += 1
        if self.progress and (self.seen % PROGRESS_EVERY == 0 or self.seen == self.total):
            self.progress(self.seen, self.total)
        row = _prepared(self.store, copier, tx, t, raw, cols, self.renamed, self.may_review)
        if t.name in ("fact_history", "fact_files"):
            if row.get("fact_id") not in self.fact_ids:  # its fact was here already
                self.report.skipped[t.name] += 1
                return
            row["fact_id"] = self.fact_ids[row["fact_id"]]
        source_id = row.get("id")
        have = _existing(copier, tx, t, row)
        if have is not None:
            if t.name == "facts" and have is not True and source_id is not None:
                self.fact_ids[source_id] = int(have)  # a re-run: its history still follows
            self.report.skipped[t.name] += 1
            return
        if t.int_id and "id" in row and copier.id_taken(tx, t.name, row["id"]):
            row.pop("id")  # taken by another row: let the database number it
        new_id = copier.insert(tx, t.name, row)
        if t.name == "facts" and source_id is not None:
            self.fact_ids[source_id] = int(new_id)
        self.report.added[t.name] += 1


def _merge(
    store: Store,
    data: dict[str, Any],
    report: ImportReport,
    progress: Progress | None,
    renamed: dict[str, str],
    batch_rows: int,
) -> None:
    total = sum(len(data.get(t.name, [])) for t in TABLES)
    merge = _Merge(store, report, renamed, progress, total, may_review=globalkb.may_curate(store))
    copier = Transfer(store.db, store.uid)
    for t in TABLES:
        rows = data.get(t.name, [])
        report.added[t.name] = report.skipped[t.name] = 0
        done = 0
        while done < len(rows):
            if done:
                time.sleep(BATCH_PAUSE_S)  # the lock is free: a waiting writer takes it now
            with store.db.transaction() as tx:
                cols = tx.columns(t.name) - GENERATED_COLUMNS
                began, first = time.monotonic(), done
                while (
                    done < len(rows)
                    and done - first < batch_rows
                    and time.monotonic() - began < BATCH_SECONDS
                ):
                    merge.row(tx, copier, t, rows[done], cols)
                    done += 1
                if t.int_id:
                    renumber_after_explicit_ids(tx, t.name)
            if isinstance(store.db, SQLiteBackend):
                # A table that grew tenfold gets fresh planner statistics: without them SQLite
                # matched each row's key by scanning the user's rows (an import of 100,000
                # rows into a new database took 454 s, 30 s with them).
                store.db.optimize()
    with store.db.transaction() as tx:
        profile = data.get("identity_profile", [])
        if profile:
            _scrub(profile[0], "identity_profile")
        report.added["identity_profile"] = copier.fill_profile(tx, profile[0]) if profile else 0


def _prepared(
    store: Store,
    copier: Transfer,
    tx: Tx,
    t: Table,
    raw: dict[str, Any],
    columns: set[str],
    renamed: dict[str, str],
    may_review: bool,
) -> dict[str, Any]:
    """A file row as this database stores it: its columns only, owned by the importer, its
    sessions renamed where needed, its secrets redacted."""
    row = {k: v for k, v in raw.items() if k in columns}
    for col in t.owner:
        row[col] = store.uid
    for col in ("id" if t.name == "sessions" else "", SESSION_REFS.get(t.name, "")):
        if col and row.get(col) in renamed:
            row[col] = renamed[row[col]]
    redacted = _scrub(row, t.name)
    if t.name == "facts":
        kept = None if "fact" in redacted else row.get("content_hash")
        row["content_hash"] = kept or content_hash(row["fact"])
        # Checked here, against this memory: duplicates merge, rivals get linked.
        row["checked_at"] = None
    if t.name == "global_knowledge" and not may_review:
        # Company knowledge is approved by a curator of this database, not by
        # whoever approved it where the file came from.
        row["status"], row["approved_by"] = "pending", None
    if row.get("approved_by") and not copier.user_exists(tx, row["approved_by"]):
        row["approved_by"] = None  # a curator of the source database
    return row


def _scrub(row: dict[str, Any], table: str) -> set[str]:
    """Redact the secrets in a row's text columns (a file may come from a version that stored
    them); the columns that changed."""
    changes, found = redact_row(row, TEXT_COLUMNS.get(table, ()))
    row.update(changes)
    redact.report(found)
    return set(changes)


def _existing(copier: Transfer, tx: Tx, t: Table, row: Row) -> Any:
    """None if the row is new here; else the id of the row it matches on its natural key
    (True when there is none to give: the same active fact under another key)."""
    key = None if any(row.get(k) is None for k in t.key) else {k: row[k] for k in t.key}
    own = "user_id" in t.owner
    if key is not None:
        found = copier.row_id(tx, t.name, key, own=own)
        if found is not None:
            return found
    if (
        t.name == "facts"
        and not row.get("deprecated")
        and copier.has_active_fact(tx, row["content_hash"])
    ):
        return True  # the same active fact is already known: no duplicate
    return None
