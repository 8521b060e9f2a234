"""Looking after one user's memory, for every surface: statistics, the health check, the
vacuum, and the state of the database and of the semantic index as health checks and metrics
see them. Export and import: :mod:`bigmind.service.portability`.
"""

from __future__ import annotations

import logging
from typing import Any

from bigmind.errors import BigMindError
from bigmind.memory import maintenance
from bigmind.memory.maintenance import Check
from bigmind.runtime import Runtime
from bigmind.storage import probe

__all__ = [
    "Check",
    "database_state",
    "health",
    "semantic_state",
    "semantic_status",
    "stats",
    "vacuum",
]
log = logging.getLogger(__name__)


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
