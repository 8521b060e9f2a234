"""Stats, health checks, pruning and export of one user's memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bigmind import __version__, journal, limits, savings
from bigmind.db import Backend
from bigmind.limits import check_days
from bigmind.migrations import FTS_TABLES, SCHEMA_VERSION, applied
from bigmind.models import ts_ago
from bigmind.store import Store
from bigmind.vectors import VectorStore


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
    cats = store.db.query(
        "SELECT category, count(*) AS n FROM facts WHERE user_id = ? AND deprecated = 0"
        " GROUP BY category ORDER BY n DESC, category",
        (store.uid,),
    )
    first = store.db.query(
        "SELECT min(started_at) AS first, max(started_at) AS last FROM sessions WHERE user_id = ?",
        (store.uid,),
    )[0]
    return {
        "user": store.user.username,
        "role": store.user.role,
        "mode": store.mode,
        "counts": counts,
        "facts_by_category": {r["category"]: r["n"] for r in cats},
        "first_session": first["first"],
        "last_session": first["last"],
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
    uid = (store.uid,)
    open_rows = db.query(
        "SELECT id, started_at FROM sessions WHERE user_id = ? AND ended_at IS NULL"
        " ORDER BY started_at",
        uid,
    )
    detail = f"{len(open_rows)} open"
    if open_rows:
        detail += f", oldest `{open_rows[0]['id']}` since {open_rows[0]['started_at'][:16]}"
    checks.append(Check("open sessions", len(open_rows) <= 3, detail))
    no_tier2 = db.query(
        "SELECT count(*) AS n FROM sessions WHERE user_id = ? AND ended_at IS NOT NULL"
        " AND coalesce(has_tier2, 0) = 0 AND coalesce(auto_closed, 0) = 0",
        uid,
    )[0]["n"]
    checks.append(Check("sessions without a Tier-2 summary", no_tier2 == 0, f"{no_tier2}"))
    stale = db.query(
        "SELECT count(*) AS n FROM facts WHERE user_id = ? AND deprecated = 0 AND updated_at < ?"
        " AND (last_accessed_at IS NULL OR last_accessed_at < ?)",
        (store.uid, ts_ago(days=stale_days), ts_ago(days=stale_days)),
    )[0]["n"]
    checks.append(
        Check(
            f"facts untouched for {stale_days} days",
            stale == 0,
            f"{stale} (review with memory_search_facts; deprecate what is no longer true)",
        )
    )
    low = db.query(
        "SELECT count(*) AS n FROM facts WHERE user_id = ? AND deprecated = 0 AND confidence < 0.5",
        uid,
    )[0]["n"]
    checks.append(Check("low-confidence facts (< 0.5)", low == 0, f"{low}"))
    return checks


def _sqlite_integrity(db: Backend) -> list[Check]:
    quick = db.query("PRAGMA quick_check")
    verdict = str(next(iter(quick[0].values()))) if quick else "ok"
    checks = [Check("database integrity", verdict == "ok", verdict)]
    for fts, _base, _cols in FTS_TABLES:
        try:
            with db.trial() as tx:  # spelled as an INSERT, changes nothing: rolled back
                tx.execute(f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)")
            checks.append(Check(f"full-text index {fts}", True, "consistent"))
        except db.Error as exc:
            checks.append(
                Check(f"full-text index {fts}", False, f"{exc}; run memory_vacuum to rebuild")
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
    bad = db.query(
        "SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = current_schema() AND NOT i.indisvalid"
    )
    names = ", ".join(r["name"] for r in bad)
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
    with store.db.transaction() as tx:
        rows = tx.execute(
            "DELETE FROM conversation_chunks WHERE user_id = ? AND created_at < ? RETURNING id",
            (store.uid, cutoff),
        )
        for kind in ("chunk", "chunk_context"):
            VectorStore.forget(tx, kind, [r["id"] for r in rows])
        if store.db.dialect == "sqlite":
            for fts, _base, _cols in FTS_TABLES:
                tx.execute(f"INSERT INTO {fts}({fts}) VALUES ('optimize')")
    return len(rows)
