"""The thought journal: hypotheses, their resolution, evidence scans and calibration."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bigmind import limits
from bigmind.errors import InvalidInput, NotFound
from bigmind.limits import check_choice, check_days, check_limit, check_unit, stored_text
from bigmind.models import Hit, now_ts, ts_ago
from bigmind.search import keyword
from bigmind.storage.hypotheses_table import Hypotheses
from bigmind.storage.hypotheses_table import Hypothesis as Hypothesis
from bigmind.storage.store import SessionRef, Store
from bigmind.storage.table import ANYWHERE

STATUSES = ("open", "confirmed", "refuted", "abandoned")
BANDS = ((0.0, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01))
_NEGATION = re.compile(
    r"\b(not|no|never|none|nothing|cannot|can't|don't|doesn't|didn't|isn't|wasn't|aren't|"
    r"won't|weren't|hasn't|haven't|shouldn't|no longer|instead)\b",
    re.IGNORECASE,
)


def get(store: Store, hypothesis_id: int) -> Hypothesis:
    found = Hypotheses(store.db, store.uid).get(hypothesis_id)
    if found is None:
        raise NotFound(
            f"No hypothesis #{hypothesis_id} in your journal.",
            tool="memory_list_hypotheses(status='all') shows the ids.",
            web="The Hypotheses page lists yours.",
        )
    return found


def add(
    store: Store, hypothesis: str, confidence: float = 0.7, session_id: str | None = None
) -> tuple[Hypothesis, SessionRef]:
    """Record a prediction. Returns it and the session it was attached to."""
    text = stored_text("hypothesis", hypothesis, limits.FACT)
    conf = check_unit("confidence", confidence)
    with store.db.transaction() as tx:
        ref = store.resolve_session(session_id, tx)
        new = Hypotheses(store.db, store.uid).add(tx, ref.session.id, text, conf, now_ts())
    return get(store, new), ref


def resolve(store: Store, hypothesis_id: int, status: str, resolution: str | None) -> Hypothesis:
    """Close a hypothesis as confirmed/refuted/abandoned, or reopen it with status 'open'."""
    check_choice("status", status, STATUSES)
    get(store, hypothesis_id)
    text = None
    if status != "open":
        text = stored_text("resolution", resolution, limits.FACT)
    with store.db.transaction() as tx:
        Hypotheses(store.db, store.uid).set_status(
            tx, hypothesis_id, status, text, None if status == "open" else now_ts()
        )
    return get(store, hypothesis_id)


def list_(
    store: Store, status: str | None = "open", limit: int = 20, project: str | None = ANYWHERE
) -> list[Hypothesis]:
    """Hypotheses with ``status`` (None or 'all' for every one) seen from ``project`` (those
    made there or in no project), newest first."""
    n = check_limit(limit)
    if status in (None, "", "all"):
        return Hypotheses(store.db, store.uid).newest(None, n, project)
    if status not in STATUSES:
        raise InvalidInput(
            f"'status' must be one of {', '.join(STATUSES)} or 'all'; got {status!r}."
        )
    return Hypotheses(store.db, store.uid).newest(status, n, project)


def count_open(store: Store) -> int:
    """Open hypotheses seen from the store's project (made there or in no project)."""
    return Hypotheses(store.db, store.uid).count_open(store.project_key)


@dataclass(frozen=True, slots=True)
class Evidence:
    hit: Hit
    stance: str  # "supports?" | "contradicts?"


@dataclass(frozen=True, slots=True)
class Scan:
    hypothesis: Hypothesis
    evidence: list[Evidence]
    stale: bool


def _stance(hypothesis: str, text: str) -> str:
    """A cheap cue, not a verdict: differing negation suggests contradiction."""
    return (
        "contradicts?"
        if bool(_NEGATION.search(hypothesis)) != bool(_NEGATION.search(text))
        else "supports?"
    )


def scan(store: Store, stale_days: int = 7, per_kind: int = 3) -> list[Scan]:
    """For each open hypothesis, related facts and chunks (by its text) and whether it is stale."""
    check_days("stale_days", stale_days, limits.STALE_DAYS)
    cutoff = ts_ago(days=stale_days)
    out = []
    for h in list_(store, "open", 100):
        hits = keyword.hits(store, "fact", h.hypothesis, per_kind) + keyword.hits(
            store, "chunk", h.hypothesis, per_kind
        )
        evidence = [Evidence(x, _stance(h.hypothesis, x.text)) for x in hits]
        out.append(Scan(h, evidence, (h.created_at or "") < cutoff))
    return out


def calibration(store: Store) -> list[dict[str, object]]:
    """Per confidence band: resolved hypotheses (confirmed + refuted) and the confirmed rate."""
    rows = Hypotheses(store.db, store.uid).resolved()
    bands = []
    for lo, hi in BANDS:
        inside = [r for r in rows if lo <= float(r["confidence"] or 0) < hi]
        confirmed = sum(r["status"] == "confirmed" for r in inside)
        bands.append(
            {
                "band": f"{lo:.1f}–{min(hi, 1.0):.1f}",
                "resolved": len(inside),
                "confirmed": confirmed,
                "confirmed_rate": round(confirmed / len(inside), 2) if inside else None,
            }
        )
    return bands
