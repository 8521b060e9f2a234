"""Export one user's memory to a JSON file, and merge such a file back in.

Export writes every row the user owns, all columns, atomically. Import reads the file one row
at a time (:mod:`bigmind.memory.exportread`), twice: first holding every row to the rules a tool
call is held to (:mod:`bigmind.memory.importcheck`) and checking every session it names, before
anything is written (a bad row refuses the whole file); then writing in batches
(:data:`BATCH_SECONDS`, :data:`BATCH_ROWS`), one transaction each, so other windows' writes get
the lock between them. Rows are re-owned by the importing user and matched on a natural key,
so importing the same file twice adds nothing and an import killed mid-way, run again,
completes with every row once. Integer ids are kept where they are free, so export → import into an
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bigmind import __version__, limits, redact
from bigmind.errors import ExportError, InvalidInput
from bigmind.memory import exportread, globalkb
from bigmind.memory.exportpath import EXPORT_FORMAT
from bigmind.memory.importcheck import check_row
from bigmind.models import content_hash, now_ts
from bigmind.storage import schema
from bigmind.storage.db import Row, SQLiteBackend, Tx
from bigmind.storage.export_rows import Transfer
from bigmind.storage.fact_files_table import file_name
from bigmind.storage.migrations import GENERATED_COLUMNS, applied, renumber_after_explicit_ids
from bigmind.storage.redact_rows import redact_row
from bigmind.storage.store import Store

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
_FRESH = uuid.UUID("6f1d3a52-8f0e-4c1e-9a57-2b8c0e4d7a10")
Progress = Callable[[int, int], None]
_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class Table:
    """How one table travels: its natural key, required columns, and user-reference columns
    (from its registry entry, :class:`bigmind.storage.schema.Export`)."""

    name: str
    key: tuple[str, ...]
    required: tuple[str, ...]
    owner: tuple[str, ...] = ("user_id",)
    int_id: bool = True


_EXPORTED = [(t, t.export) for t in schema.TABLES if isinstance(t.export, schema.Export)]


def _tables(*, merged: bool) -> tuple[Table, ...]:
    return tuple(
        Table(t.name, e.key, e.required, (t.owner,) if t.owner else (), e.int_id)
        for t, e in _EXPORTED
        if e.merged == merged
    )


# Parents before children (foreign keys): the registry's order.
TABLES = _tables(merged=False)
# The column naming a session, per table: in the file, or one of the importer's own.
SESSION_REFS = {t.name: e.session for t, e in _EXPORTED if e.session}
# Rows that belong to a session of the file (their session must be in it).
_CHILDREN = tuple(t.name for t, e in _EXPORTED if e.of_session)
# Rows that travel with their fact: imported for the facts an import adds.
_OF_FACT = tuple(t.name for t, e in _EXPORTED if e.of_fact)
# Session references without a foreign key: one that is not in the file nor the importer's is
# dropped (in the source database its session may have been forgotten), not refused.
_LOOSE_REFS = tuple(t.name for t, e in _EXPORTED if e.loose)


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


(_PROFILE,) = _tables(merged=True)  # one row per user, merged field by field
_BY_NAME = {t.name: t for t in (*TABLES, _PROFILE)}
_RANK = {t.name: n for n, t in enumerate(TABLES)}
Entries = Iterator[tuple[str, int | None, Any]]


@dataclass(slots=True)
class ExportFile:
    """A checked export: its header, its rows' count and the sessions they name. Its rows are
    read again, one at a time, when it is imported (:meth:`rows`)."""

    source: Path | dict[str, Any]
    header: dict[str, Any]
    counts: dict[str, int]
    in_order: bool  # tables in the order an export writes them (parents first)
    sessions: set[str] = field(default_factory=set)  # the file's own sessions
    named: dict[str, tuple[str, int, str]] = field(default_factory=dict)  # id → first row naming it
    loose: set[str] = field(default_factory=set)  # ids company knowledge names (no foreign key)

    @property
    def user(self) -> str:
        return str(self.header["user"]["username"])

    def rows(self) -> Iterator[tuple[Table, dict[str, Any]]]:
        """The table rows, parents first, each checked again (the file may have changed)."""
        if self.in_order:
            source = _entries(self.source)
        else:  # a hand-made file with its tables in another order: read whole, then ordered
            data = self.source if isinstance(self.source, dict) else _whole(self.source)
            source = ((t.name, i, r) for t in TABLES for i, r in enumerate(data.get(t.name) or []))
        try:
            for key, i, row in source:
                t = _BY_NAME.get(key)
                if t is None or t is _PROFILE or i is None or i < 0:
                    continue
                _check(t, i, row)
                col = SESSION_REFS.get(t.name)
                sid = row.get(col) if col else None
                if sid and not (sid in self.sessions or sid in self.named or sid in self.loose):
                    raise InvalidInput(f"{t.name}[{i}] changed since the file was checked.")
                yield t, row
        except (OSError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError too
            raise InvalidInput(f"The file changed while it was imported ({exc}).") from exc


def _entries(source: Path | dict[str, Any]) -> Entries:
    if isinstance(source, Path):
        yield from exportread.entries(source)
        return
    for key, value in source.items():
        if not isinstance(value, list):
            yield key, None, value
        elif not value:
            yield key, -1, None
        else:
            yield from ((key, i, item) for i, item in enumerate(value))


def _whole(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _check(t: Table, i: int, r: Any) -> None:
    """One row's shape and values (:func:`bigmind.memory.importcheck.check_row`)."""
    if not isinstance(r, dict):
        raise InvalidInput(f"'{t.name}' must be a list of objects.")
    bad = [k for k in r if not _IDENT.match(str(k))]
    if bad:
        raise InvalidInput(f"{t.name}[{i}] has invalid column names {bad[:3]}.")
    missing = [c for c in t.required if r.get(c) in (None, "")]
    if missing:
        raise InvalidInput(f"{t.name}[{i}] lacks {', '.join(missing)}.")
    check_row(t.name, i, r)


def load_export(path: Path) -> ExportFile:
    """Read and check an export file completely, one row at a time; nothing is written here."""
    return _checked(str(path), path)


def check_export(data: dict[str, Any]) -> ExportFile:
    """An export already in memory (:func:`export_data`), checked like a file."""
    return _checked("the export", data)


def _checked(label: str, source: Path | dict[str, Any]) -> ExportFile:
    export = ExportFile(source, {}, {}, in_order=True)
    order: list[str] = []
    try:
        for key, i, value in _entries(source):
            t = _BY_NAME.get(key)
            if t is None:
                if i is None:
                    export.header[key] = value
                continue
            if not order:
                _check_header(label, export.header)
            if i is None:
                raise InvalidInput(f"'{t.name}' must be a list of objects.")
            if not order or order[-1] != key:
                if key in order:
                    raise InvalidInput(f"'{key}' appears twice.")
                order.append(key)
            export.counts.setdefault(key, 0)
            if i < 0:
                continue
            _check(t, i, value)
            export.counts[key] += 1
            _note(export, t, i, value)
    except exportread.NotAnObject as exc:
        raise InvalidInput(
            f'{label} is not a BigMind export (no "format": "{EXPORT_FORMAT}").'
        ) from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{label} is not valid JSON ({exc.msg}).") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"Cannot read {label}: {exc}.") from exc
    except InvalidInput as exc:
        raise InvalidInput(f"{label}: {exc}") from None
    _check_header(label, export.header)
    tables = [k for k in order if k != _PROFILE.name]
    export.in_order = tables == sorted(tables, key=_RANK.__getitem__)
    orphans = [sid for sid, (table, _i, _c) in export.named.items() if table in _CHILDREN]
    orphans = [sid for sid in orphans if sid not in export.sessions]
    if orphans:
        child = export.named[orphans[0]][0]
        raise InvalidInput(
            f"{label}: {child} refer to sessions missing from the file ({sorted(orphans)[:2]})."
        )
    user = export.header.get("user")
    name = user.get("username") if isinstance(user, dict) else None
    if not isinstance(name, str) or not name.strip() or len(name) > limits.NAME:
        raise InvalidInput(f"{label}: the 'user' object is missing.")
    return export


def _note(export: ExportFile, t: Table, i: int, row: dict[str, Any]) -> None:
    """What the import needs to know of a row before writing any: its session and the sessions
    it names."""
    if t is _PROFILE:
        if i == 0:
            export.header[_PROFILE.name] = [row]
        return
    if t.name == "sessions":
        export.sessions.add(row["id"])
    col = SESSION_REFS.get(t.name)
    sid = row.get(col) if col else None
    if not sid:
        return
    if t.name in _LOOSE_REFS:
        export.loose.add(sid)
    elif sid not in export.named or t.name in _CHILDREN:
        first = export.named.get(sid)
        if first is None or (t.name in _CHILDREN and first[0] not in _CHILDREN):
            export.named[sid] = (t.name, i, col or "")


def _check_header(label: str, header: dict[str, Any]) -> None:
    if header.get("format") != EXPORT_FORMAT:
        raise InvalidInput(f'{label} is not a BigMind export (no "format": "{EXPORT_FORMAT}").')
    version = header.get("version")
    if not isinstance(version, int) or not 1 <= version <= EXPORT_VERSION:
        raise InvalidInput(
            f"{label} is export version {version!r}; this BigMind reads versions "
            f"1–{EXPORT_VERSION}. Upgrade BigMind to import it."
        )


def import_data(
    store: Store,
    data: ExportFile | dict[str, Any],
    mode: str = "merge",
    progress: Progress | None = None,
    *,
    batch_rows: int = BATCH_ROWS,
) -> ImportReport:
    """Merge a checked export into the store's user's memory in batches (``progress`` is told
    the rows merged so far, every ``PROGRESS_EVERY``); an export in memory is checked first.

    Raises:
        InvalidInput: a row names a session that is neither in the file nor this user's (nothing
            was written), or does not fit this database (the batches before it were).
    """
    if mode != "merge":
        raise InvalidInput(f"'mode' must be 'merge' (got {mode!r}); merge never deletes anything.")
    export = data if isinstance(data, ExportFile) else check_export(data)
    report = ImportReport(source_user=export.user)
    renamed, dropped = _session_ids(store, export)
    try:
        _merge(store, export, report, progress, (renamed, dropped), max(1, batch_rows))
    except store.db.Error as exc:
        raise InvalidInput(
            f"The file's rows do not fit this database ({exc}); the batches before it were "
            "imported, and importing the file again after fixing it adds each row once."
        ) from exc
    return report


def _session_ids(store: Store, export: ExportFile) -> tuple[dict[str, str], set[str]]:
    """The ids the file's sessions are stored under where theirs is another user's, and the
    loose references to drop, after checking that every session a row names is in the file or
    this user's.

    Another user's session and an id nobody has are refused in the same words, and a file
    session with another user's id is imported under a fresh one (made from the two, so a
    re-run makes the same): nothing tells the importer that an id they name exists."""
    in_file = export.sessions
    owners = Transfer(store.db, store.uid).session_owners(
        sorted(in_file | set(export.named) | export.loose)
    )
    for sid, (table, i, col) in export.named.items():
        if sid not in in_file and owners.get(sid) != store.uid:
            raise InvalidInput(
                f"{table}[{i}].{col}: session {sid} is not in the file nor yours; nothing "
                "was imported. Add that session to the file or remove the reference."
            )
    dropped = {s for s in export.loose if s not in in_file and owners.get(s) != store.uid}
    renamed = {
        sid: str(uuid.uuid5(_FRESH, f"{store.uid}/{sid}"))
        for sid in in_file
        if owners.get(sid, store.uid) != store.uid
    }
    return renamed, dropped


@dataclass(slots=True)
class _Merge:
    """One import's state across its batches."""

    store: Store
    report: ImportReport
    sessions: tuple[dict[str, str], set[str]]  # file sessions renamed; loose references dropped
    progress: Progress | None
    total: int
    may_review: bool
    seen: int = 0
    fact_ids: dict[object, int] = field(default_factory=dict)  # the file's id → this database's

    def row(self, tx: Tx, copier: Transfer, t: Table, raw: dict[str, Any], cols: set[str]) -> None:
        """Add one file row unless it is here already."""
        self.seen += 1
        if self.progress and (self.seen % PROGRESS_EVERY == 0 or self.seen == self.total):
            self.progress(self.seen, self.total)
        row = _prepared(self.store, copier, tx, t, raw, cols, self.sessions, self.may_review)
        if t.name in _OF_FACT:
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
    export: ExportFile,
    report: ImportReport,
    progress: Progress | None,
    sessions: tuple[dict[str, str], set[str]],
    batch_rows: int,
) -> None:
    total = sum(export.counts.get(t.name, 0) for t in TABLES)
    merge = _Merge(store, report, sessions, progress, total, globalkb.may_curate(store))
    copier = Transfer(store.db, store.uid)
    for t in TABLES:
        report.added[t.name] = report.skipped[t.name] = 0
    rows = export.rows()
    pending = next(rows, None)
    while pending is not None:
        t = pending[0]
        with store.db.transaction() as tx:
            cols = tx.columns(t.name) - GENERATED_COLUMNS
            began, n = time.monotonic(), 0
            while (
                pending is not None
                and pending[0] is t
                and n < batch_rows
                and time.monotonic() - began < BATCH_SECONDS
            ):
                merge.row(tx, copier, t, pending[1], cols)
                n += 1
                pending = next(rows, None)
            if t.int_id:
                renumber_after_explicit_ids(tx, t.name)
        if isinstance(store.db, SQLiteBackend):
            # A table that grew tenfold gets fresh planner statistics: without them SQLite
            # matched each row's key by scanning the user's rows (an import of 100,000
            # rows into a new database took 454 s, 18 s with them).
            store.db.optimize()
        if pending is not None:
            time.sleep(BATCH_PAUSE_S)  # the lock is free: a waiting writer takes it now
    with store.db.transaction() as tx:
        profile = export.header.get(_PROFILE.name) or []
        if profile:
            _scrub(profile[0], _PROFILE.name)
        report.added[_PROFILE.name] = copier.fill_profile(tx, profile[0]) if profile else 0
        if report.added.get("sessions") or report.added.get("facts"):
            store.directory.rebuild(tx, now_ts())  # the card counts what came in


def _prepared(
    store: Store,
    copier: Transfer,
    tx: Tx,
    t: Table,
    raw: dict[str, Any],
    columns: set[str],
    sessions: tuple[dict[str, str], set[str]],
    may_review: bool,
) -> dict[str, Any]:
    """A file row as this database stores it: its columns only, owned by the importer, its
    sessions renamed where needed, its secrets redacted."""
    row = {k: v for k, v in raw.items() if k in columns}
    for col in t.owner:
        row[col] = store.uid
    renamed, dropped = sessions
    for col in ("id" if t.name == "sessions" else "", SESSION_REFS.get(t.name, "")):
        if col and row.get(col) in renamed:
            row[col] = renamed[row[col]]
        elif col and row.get(col) in dropped:
            row[col] = None  # no foreign key: a forgotten session's id may remain in a file
    redacted = _scrub(row, t.name)
    if t.name == "fact_files" and "path" in redacted:
        row["name"] = file_name(row["path"])  # the lookup key follows the redacted path
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
    changes, found = redact_row(row, table)
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
