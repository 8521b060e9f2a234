"""Consolidation: keep a growing memory tidy without losing anything.

One pass (``bigmind consolidate``, and a light one when a session ends):

- **duplicates merged, contradictions linked, superseded facts retired** — every active fact
  is checked against its nearest facts, as a new fact is when it is stored
  (:func:`bigmind.memory.dedup.check_pending`); needs the embedding model;
- **stale low-value facts retired from the packet** — active facts of importance ≤
  :data:`LOW_IMPORTANCE` neither used nor updated for :data:`STALE_DAYS` days stop taking
  room in the bootstrap packet. They stay active and searchable, nothing is deleted, and the
  first time a search hands one to an agent it is back.

Idempotent: a second pass right after the first finds nothing to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bigmind.limits import check_days, check_importance
from bigmind.memory.dedup import CHECK_BATCH, Outcome, check_pending
from bigmind.models import now_ts, ts_ago
from bigmind.search.semantic import Semantic
from bigmind.storage.store import Store

STALE_DAYS = 90
LOW_IMPORTANCE = 3
MAX_STALE_DAYS = 3_650


@dataclass(slots=True)
class Consolidated:
    """What one pass did."""

    checked: int = 0  # facts checked for duplicates and conflicts
    outcomes: list[Outcome] = field(default_factory=list)
    retired: list[tuple[int, str]] = field(default_factory=list)  # (id, text) left the packet
    semantic: bool = False  # whether the duplicate / conflict check ran (a model was ready)

    def count(self, kind: str) -> int:
        return sum(1 for o in self.outcomes if o.kind == kind)

    def summary(self) -> dict[str, int]:
        return {
            "checked": self.checked,
            "merged": self.count("merged"),
            "superseded": self.count("supersedes"),
            "conflicts": self.count("conflict"),
            "retired": len(self.retired),
        }


def retire_stale(
    store: Store, stale_days: int = STALE_DAYS, max_importance: int = LOW_IMPORTANCE
) -> list[tuple[int, str]]:
    """Retire from the packet the facts of importance ≤ ``max_importance`` unused and
    unchanged for ``stale_days`` days; (id, text) of those retired now."""
    days = check_days("stale_days", stale_days, MAX_STALE_DAYS)
    low = check_importance(max_importance)
    with store.db.transaction() as tx:
        rows = store.facts.retire_stale(tx, ts_ago(days=days), low, now_ts())
    return sorted((int(r["id"]), str(r["fact"])) for r in rows)


def consolidate(
    store: Store,
    semantic: Semantic | None,
    *,
    stale_days: int = STALE_DAYS,
    max_importance: int = LOW_IMPORTANCE,
) -> Consolidated:
    """One consolidation pass over the store's user: every active fact is checked again (the
    light pass at a session's end is :func:`retire_stale` and the background check)."""
    done = Consolidated()
    if semantic is not None and semantic.ready:
        done.semantic = True
        with store.db.transaction() as tx:
            passes = store.facts.recheck(tx) // CHECK_BATCH + 2
        for _ in range(passes):  # bounded: each pass claims the facts it checks
            step = check_pending(store, semantic)
            done.checked += step.checked
            done.outcomes += step.outcomes
            if not step.more:
                break
    done.retired = retire_stale(store, stale_days, max_importance)
    return done
