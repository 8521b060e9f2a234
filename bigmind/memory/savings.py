"""The efficiency log: tokens an agent saved by recalling instead of re-reading."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any

from bigmind import limits
from bigmind.errors import InvalidInput
from bigmind.limits import check_text, stored_text
from bigmind.models import now_ts
from bigmind.storage.savings_table import Savings
from bigmind.storage.store import SessionRef, Store

MAX_TOKENS_SAVED = 10_000_000


def log(
    store: Store, session_id: str | None, description: str, tokens_saved: int, method_used: str
) -> tuple[int, SessionRef]:
    text = stored_text("description", description, limits.SHORT)
    method = check_text("method_used", method_used, limits.NAME).lower()
    if not 0 <= tokens_saved <= MAX_TOKENS_SAVED:
        raise InvalidInput(
            f"'tokens_saved' must be between 0 and {MAX_TOKENS_SAVED:,}, got {tokens_saved}."
        )
    with store.db.transaction() as tx:
        ref = store.resolve_session(session_id, tx)
        new = Savings(store.db, store.uid).add(
            tx, ref.session.id, text, int(tokens_saved), method, now_ts()
        )
    return new, ref


def totals(store: Store, weeks: int = 12) -> dict[str, Any]:
    """Tokens saved in all, per method, and per ISO week (the latest ``weeks``)."""
    rows = Savings(store.db, store.uid).per_method_day()
    per_method: dict[str, int] = defaultdict(int)
    per_week: dict[str, int] = defaultdict(int)
    for r in rows:
        per_method[r["method_used"]] += int(r["n"])
        y, w, _ = date.fromisoformat(r["day"]).isocalendar()
        per_week[f"{y}-W{w:02d}"] += int(r["n"])
    recent = dict(sorted(per_week.items())[-weeks:])
    return {
        "total": sum(per_method.values()),
        "entries": sum(int(r["c"]) for r in rows),
        "per_method": dict(sorted(per_method.items(), key=lambda kv: -kv[1])),
        "per_week": recent,
    }
