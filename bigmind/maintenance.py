"""Stats, health checks, pruning and export of one user's memory."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bigmind import __version__
from bigmind.errors import ExportError, InvalidInput
from bigmind.migrations import FTS_TABLES, SCHEMA_VERSION, applied
from bigmind.models import now_ts, ts_ago
from bigmind.store import Store

EXPORT_FORMAT = "bigmind-export"
EXPORT_VERSION = 1


def stats(store: Store) -> dict[str, Any]:
    """Counts per tier, facts per category, database size and versions."""
    counts = store.counts()
    cats = store.db.query(
        "SELECT category, count(*) AS n FROM facts WHERE user_id = ? AND deprecated = 0"
        " GROUP BY category ORDER BY n DESC",
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
    if not 1 <= stale_days <= 3650:
        raise InvalidInput(f"'stale_days' must be between 1 and 3650, got {stale_days}.")
    db = store.db
    checks: list[Check] = []
    quick = db.query("PRAGMA quick_check") if db.dialect == "sqlite" else [{"x": "ok"}]
    verdict = str(next(iter(quick[0].values()))) if quick else "ok"
    checks.append(Check("database integrity", verdict == "ok", verdict))
    for fts, _base, _cols in FTS_TABLES:
        if db.dialect != "sqlite":
            break
        try:
            with db.transaction() as tx:
                tx.execute(f"INSERT INTO {fts}({fts}) VALUES ('integrity-check')")
            checks.append(Check(f"full-text index {fts}", True, "consistent"))
        except db.Error as exc:
            checks.append(
                Check(f"full-text index {fts}", False, f"{exc}; run memory_vacuum to rebuild")
            )
    version = len(applied(db))
    checks.append(
        Check("schema", version == SCHEMA_VERSION, f"version {version} of {SCHEMA_VERSION}")
    )
    vec = getattr(db, "vec_version", None)
    checks.append(
        Check(
            "sqlite-vec",
            vec is not None,
            f"loaded {vec}" if vec else "not loaded: pip install sqlite-vec",
        )
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


def vacuum(store: Store, older_than_days: int) -> int:
    """Delete this user's Tier-3 chunks older than N days; summaries and facts stay. Returns count."""
    if not 1 <= older_than_days <= 36500:
        raise InvalidInput(
            f"'older_than_days' must be at least 1 (and at most 36500), got {older_than_days}."
        )
    cutoff = ts_ago(days=older_than_days)
    with store.db.transaction() as tx:
        rows = tx.execute(
            "DELETE FROM conversation_chunks WHERE user_id = ? AND created_at < ? RETURNING id",
            (store.uid, cutoff),
        )
        if store.db.dialect == "sqlite":
            for fts, _base, _cols in FTS_TABLES:
                tx.execute(f"INSERT INTO {fts}({fts}) VALUES ('optimize')")
    return len(rows)


# -- export --------------------------------------------------------------------------------------
def _owned(store: Store, sql: str) -> list[dict[str, Any]]:
    return store.db.query(sql, (store.uid,))


def export_data(store: Store) -> dict[str, Any]:
    """Every row this user owns, with all columns, as a JSON-ready dict."""
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": now_ts(),
        "bigmind_version": __version__,
        "schema_version": len(applied(store.db)),
        "user": _owned(store, "SELECT * FROM users WHERE id = ?")[0],
        "identity_profile": _owned(store, "SELECT * FROM identity_profile WHERE user_id = ?"),
        "sessions": _owned(store, "SELECT * FROM sessions WHERE user_id = ? ORDER BY started_at"),
        "session_summaries": _owned(
            store,
            "SELECT s.* FROM session_summaries s JOIN sessions x ON x.id = s.id"
            " WHERE x.user_id = ? ORDER BY s.created_at",
        ),
        "facts": _owned(store, "SELECT * FROM facts WHERE user_id = ? ORDER BY id"),
        "conversation_chunks": _owned(
            store, "SELECT * FROM conversation_chunks WHERE user_id = ? ORDER BY id"
        ),
        "hypotheses": _owned(store, "SELECT * FROM hypotheses WHERE user_id = ? ORDER BY id"),
        "focus_announcements": _owned(
            store, "SELECT * FROM focus_announcements WHERE user_id = ? ORDER BY id"
        ),
        "token_saves": _owned(store, "SELECT * FROM token_saves WHERE user_id = ? ORDER BY id"),
        "people": _owned(store, "SELECT * FROM people WHERE added_by = ? ORDER BY id"),
        "global_knowledge": _owned(
            store, "SELECT * FROM global_knowledge WHERE promoted_by = ? ORDER BY id"
        ),
    }


def default_export_path(data_dir: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d_%H%M%S")
    return data_dir / "exports" / f"bigmind_export_{stamp}.json"


def resolve_export_path(output_path: str | None, data_dir: Path) -> Path:
    """Absolute target: default name in <data dir>/exports; relative paths resolve there too."""
    if output_path is None or not output_path.strip():
        return default_export_path(data_dir)
    p = Path(output_path.strip()).expanduser()
    if not p.is_absolute():
        p = data_dir / "exports" / p
    if p.exists() and p.is_dir():
        raise ExportError(f"{p} is a folder; give a file path such as {p / 'bigmind.json'}.")
    return p


def write_export(store: Store, target: Path, *, overwrite: bool = False) -> dict[str, int]:
    """Write the export atomically (temp file + rename). Returns rows written per table."""
    if target.exists() and not overwrite:
        raise ExportError(
            f"{target} already exists; pass overwrite=True or choose another output_path."
        )
    data = export_data(store)
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
        raise ExportError(
            f"{target} already exists; pass overwrite=True or choose another output_path."
        ) from exc
    except OSError as exc:
        raise ExportError(f"Could not write {target}: {exc.strerror or exc}.") from exc
    return {k: len(v) for k, v in data.items() if isinstance(v, list)}


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
