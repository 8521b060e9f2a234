"""Stats, health checks, pruning and export of one user's memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bigmind import __version__, limits
from bigmind.limits import check_days
from bigmind.memory import journal, savings
from bigmind.models import ts_ago
from bigmind.search.vectors import VectorStore
from bigmind.storage import upkeep
from bigmind.storage.db import Backend
from bigmind.storage.migrations import FTS_TABLES, SCHEMA_VERSION, applied
from bigmind.storage.store import Store


def report(store: Store) -> dict[str, Any]:
    """What memory_get_stats and `bigmind stats` show (besides the semantic index): counts
    and sizes, hypothesis calibration, token savings."""
    data = stats(store)
    data["hypothesis_calibration"] = journal.calibration(store)
    data["token_savings"] = savings.totals(store)
    return data


def stats(store: Store) -> dict[str, Any]:
    """Counts per tier, facts per category, database size and versions."""
    counts = store.counts()
    first, last = store.sessions.span()
    return {
        "user": store.user.username,
        "role": store.user.role,
        "mode": store.mode,
        "counts": counts,
        "facts_by_category": store.facts.per_category(),
        "first_session": first,
        "last_session": last,
        "db_location": store.db.location,
        "db_bytes": store.db.file_size(),
        "schema_version": len(applied(store.db)),
        "bigmind_version": __version__,
    }


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str


def health(store: Store, stale_days: int = 30) -> list[Check]:
    """Diagnostics: integrity, FTS indexes, schema, open sessions and fact hygiene."""
    check_days("stale_days", stale_days, limits.STALE_DAYS)
    db = store.db
    checks: list[Check] = []
    if db.dialect == "postgresql":
        checks += _pg_integrity(db)
    else:
        checks += _sqlite_integrity(db)
    version = len(applied(db))
    checks.append(
        Check("schema", version == SCHEMA_VERSION, f"version {version} of {SCHEMA_VERSION}")
    )
    open_now = store.sessions.open(limit=1_000)
    detail = f"{len(open_now)} open"
    if open_now:
        oldest = open_now[-1]
        detail += f", oldest `{oldest.id}` since {oldest.started_at[:16]}"
    checks.append(Check("open sessions", len(open_now) <= 3, detail))
    no_tier2 = store.sessions.unsummarised()
    checks.append(Check("sessions without a Tier-2 summary", no_tier2 == 0, f"{no_tier2}"))
    stale = store.facts.stale(ts_ago(days=stale_days))
    checks.append(
        Check(
            f"facts untouched for {stale_days} days",
            stale == 0,
            f"{stale} (review with memory_search_facts; deprecate what is no longer true)",
        )
    )
    low = store.facts.unsure(0.5)
    checks.append(Check("low-confidence facts (< 0.5)", low == 0, f"{low}"))
    return checks


def _sqlite_integrity(db: Backend) -> list[Check]:
    verdict = upkeep.quick_check(db)
    checks = [Check("database integrity", verdict == "ok", verdict)]
    for fts, problem in upkeep.fts_problems(db).items():
        if problem is None:
            checks.append(Check(f"full-text index {fts}", True, "consistent"))
        else:
            checks.append(
                Check(f"full-text index {fts}", False, f"{problem}; run memory_vacuum to rebuild")
            )
    vec = getattr(db, "vec_version", None)
    checks.append(
        Check(
            "sqlite-vec",
            vec is not None,
            f"loaded {vec}" if vec else "not loaded: pip install sqlite-vec",
        )
    )
    return checks


def _pg_integrity(db: Backend) -> list[Check]:
    """PostgreSQL checks its own pages; what can go wrong here is an index left invalid
    (a failed concurrent build) or pgvector missing on the server."""
    bad = upkeep.invalid_pg_indexes(db)
    names = ", ".join(bad)
    checks = [Check("database integrity", not bad, f"invalid indexes: {names}" if bad else "ok")]
    for _fts, base, _cols in FTS_TABLES:
        ok = db.table_exists(f"idx_{base}_tsv")  # to_regclass: any relation, indexes too
        detail = "tsvector + GIN" if ok else "GIN index missing; restart BigMind to migrate"
        checks.append(Check(f"full-text index {base}", ok, detail))
    vec = getattr(db, "vec_version", None)
    checks.append(
        Check(
            "pgvector",
            vec is not None,
            f"loaded {vec}" if vec else "not installed on the server: CREATE EXTENSION vector",
        )
    )
    return checks


def vacuum(store: Store, older_than_days: int) -> int:
    """Delete this user's Tier-3 chunks older than N days; summaries and facts stay. Returns count."""
    check_days("older_than_days", older_than_days, limits.RETENTION_DAYS)
    cutoff = ts_ago(days=older_than_days)
    with store.db.transaction() as tx, upkeep.bulk_deletes(tx):
        ids = store.chunks.delete_older(tx, cutoff)
        for kind in ("chunk", "chunk_context"):
            VectorStore.forget(tx, kind, ids)
    return len(ids)
