"""Looking after one user's memory, for every surface: statistics, the health check, the
vacuum, export and import, and the state of the database and of the semantic index as
health checks and metrics see them.

Export and import are shared by ``memory_export`` / ``memory_import`` and ``bigmind export`` /
``bigmind import``: the file lives in the user's files folder (:attr:`Runtime.files_dir`;
behind the gateway, one of their own), where the tool may only write in ``exports/`` and
the command line anywhere (``confined=False``). An import wakes the background embedder.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bigmind.errors import BigMindError
from bigmind.memory import exportpath, maintenance, transfer
from bigmind.memory.maintenance import Check
from bigmind.memory.transfer import ImportReport
from bigmind.runtime import Runtime
from bigmind.storage import probe

__all__ = [
    "Check",
    "Exported",
    "ImportReport",
    "Imported",
    "database_state",
    "export_memory",
    "health",
    "import_memory",
    "semantic_state",
    "semantic_status",
    "stats",
    "vacuum",
]
Progress = Callable[[int, int], None]
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Exported:
    """Where the export was written, and its rows per table."""

    path: Path
    counts: dict[str, int]


@dataclass(frozen=True, slots=True)
class Imported:
    """The file imported, and what it added and skipped (:class:`ImportReport`)."""

    path: Path
    report: ImportReport


def semantic_status(rt: Runtime) -> dict[str, object]:
    """The semantic index's state, model, vectors and backlog (``off`` before it started)."""
    sem = rt.semantic
    if sem is None:
        return {"state": "off", "detail": "not started", "vectors": 0, "waiting": 0}
    st = sem.status(counts=True)
    return {
        "state": st.state,
        "detail": st.detail,
        "model": st.model,
        "vectors": st.embedded,
        "waiting": st.backlog,
    }


def stats(rt: Runtime) -> dict[str, Any]:
    """Counts per tier and fact category, database size, versions, calibration, savings, and
    the semantic index (``semantic``)."""
    data = maintenance.report(rt.store)
    data["semantic"] = semantic_status(rt)
    return data


def health(rt: Runtime, stale_days: int = 30) -> list[Check]:
    """Diagnostics: integrity, full-text indexes, schema, open sessions, stale facts (older
    than ``stale_days``), and the semantic index (ready or off is fine)."""
    checks = maintenance.health(rt.store, stale_days)
    sem = semantic_status(rt)
    checks.append(
        Check(
            "semantic index",
            sem["state"] in ("ready", "off"),
            f"{sem['state']}: {sem['detail']}; {sem['vectors']} vectors, {sem['waiting']} waiting",
        )
    )
    return checks


def vacuum(rt: Runtime, older_than_days: int) -> int:
    """Delete the user's saved exchanges older than ``older_than_days`` (facts and summaries
    stay): how many went."""
    return maintenance.vacuum(rt.store, older_than_days)


def export_memory(
    rt: Runtime,
    output_path: str | None = None,
    *,
    overwrite: bool = False,
    confined: bool = True,
    progress: Progress | None = None,
) -> Exported:
    """Write all of the user's memory to one JSON file (atomically): ``output_path`` in
    ``exports/`` (None: the default name there) or, unless ``confined``, anywhere.

    Raises:
        ExportError: a folder, a file that exists (without ``overwrite``), a path outside
            ``exports/`` (``confined``) or in no existing folder, or a failed write.
        InvalidInput: a path no file can have (a NUL, too long, an unknown ``~user``).
    """
    target = exportpath.resolve_export_path(
        output_path, rt.files_dir, confined=confined, overwrite=overwrite
    )
    counts = transfer.write_export(rt.store, target, overwrite=overwrite, progress=progress)
    return Exported(target, counts)


def import_memory(
    rt: Runtime, input_path: str, mode: str = "merge", progress: Progress | None = None
) -> Imported:
    """Merge an export file into the user's memory (idempotent: what is there is skipped).

    Raises:
        NotFound: no such file.
        InvalidInput: no path, or a row that does not fit (a bad row refuses the file).
    """
    path = exportpath.resolve_import_path(input_path, rt.files_dir)
    report = transfer.import_data(rt.store, transfer.load_export(path), mode, progress)
    rt.wrote()
    return Imported(path, report)


def database_state(rt: Runtime) -> str:
    """``ok``, ``absent`` or ``unreachable``: one cheap read on the open store's connection,
    or, before the server opened its database, a probe that makes and writes nothing."""
    store, _ = rt.opened()
    if store is None:
        return probe.reach(rt.settings)
    try:
        store.db.query("SELECT 1")
    except (BigMindError, store.db.Error) as exc:
        log.warning("health: the database does not answer: %s", exc)
        return "unreachable"
    return "ok"


def semantic_state(rt: Runtime) -> str:
    """The semantic index's state, ``not-started`` before it was; never starts it."""
    _, sem = rt.opened()
    return "not-started" if sem is None else sem.status().state
