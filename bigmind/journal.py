"""The thought journal: hypotheses, their resolution, evidence scans and calibration."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bigmind import keyword, limits
from bigmind.errors import InvalidInput, NotFound
from bigmind.limits import check_days, check_limit, check_text, check_unit
from bigmind.models import Hit, Record, column_list, now_ts, ts_ago
from bigmind.store import SessionRef, Store

STATUSES = ("open", "confirmed", "refuted", "abandoned")
BANDS = ((0.0, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01))
_NEGATION = re.compile(
    r"\b(not|no|never|none|nothing|cannot|can't|don't|doesn't|didn't|isn't|wasn't|aren't|"
    r"won't|weren't|hasn't|haven't|shouldn't|no longer|instead)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Hypothesis(Record):
    id: int
    session_id: str | None
    hypothesis: str
    confidence: float
    status: str
    resolution: str | None
    created_at: str | None
    resolved_at: str | None


_COLUMNS = column_list(Hypothesis)


def _row(r: dict[str, object]) -> Hypothesis:
    r = dict(r)
    r["confidence"] = 0.7 if r.get("confidence") is None else float(r["confidence"])  # type: ignore[arg-type]
    return Hypothesis(**r)  # type: ignore[arg-type]


def get(store: Store, hypothesis_id: int) -> Hypothesis:
    rows = store.db.query(
        f"SELECT {_COLUMNS} FROM hypotheses WHERE id = ? AND +user_id = ?",
        (hypothesis_id, store.uid),
    )
    if not rows:
        raise NotFound(
            f"No hypothesis #{hypothesis_id} in your journal. "
            "memory_list_hypotheses(status='all') shows the ids."
        )
    return _row(rows[0])


def add(
    store: Store, hypothesis: str, confidence: float = 0.7, session_id: str | None = None
) -> tuple[Hypothesis, SessionRef]:
    """Record a prediction. Returns it and the session it was attached to."""
    text = check_text("hypothesis", hypothesis, limits.FACT)
    conf = check_unit("confidence", confidence)
    with store.db.transaction() as tx:
        ref = store.resolve_session(session_id, tx)
        new = tx.execute(
            "INSERT INTO hypotheses(session_id, user_id, hypothesis, confidence, status, created_at)"
            " VALUES (?, ?, ?, ?, 'open', ?) RETURNING id",
            (ref.session.id, store.uid, text, conf, now_ts()),
        )[0]["id"]
    return get(store, int(new)), ref


def resolve(store: Store, hypothesis_id: int, status: str, resolution: str | None) -> Hypothesis:
    """Close a hypothesis as confirmed/refuted/abandoned, or reopen it with status 'open'."""
    if status not in STATUSES:
        raise InvalidInput(f"'status' must be one of {', '.join(STATUSES)}; got {status!r}.")
    get(store, hypothesis_id)
    text = None
    if status != "open":
        text = check_text("resolution", resolution, limits.FACT)
    with store.db.transaction() as tx:
        tx.execute(
            "UPDATE hypotheses SET status = ?, resolution = coalesce(?, resolution),"
            " resolved_at = ? WHERE id = ? AND +user_id = ?",
            (status, text, None if status == "open" else now_ts(), hypothesis_id, store.uid),
        )
    return get(store, hypothesis_id)


def list_(store: Store, status: str | None = "open", limit: int = 20) -> list[Hypothesis]:
    """Hypotheses with ``status`` (None or 'all' for every one), newest first."""
    n = check_limit(limit)
    if status in (None, "", "all"):
        rows = store.db.query(
            f"SELECT {_COLUMNS} FROM hypotheses WHERE user_id = ?"
            " ORDER BY created_at DESC, id DESC LIMIT ?",
            (store.uid, n),
        )
    else:
        if status not in STATUSES:
            raise InvalidInput(
                f"'status' must be one of {', '.join(STATUSES)} or 'all'; got {status!r}."
            )
        rows = store.db.query(
            f"SELECT {_COLUMNS} FROM hypotheses WHERE user_id = ? AND status = ?"
            " ORDER BY created_at DESC, id DESC LIMIT ?",
            (store.uid, status, n),
        )
    return [_row(r) for r in rows]


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
    rows = store.db.query(
        "SELECT confidence, status FROM hypotheses WHERE user_id = ?"
        " AND status IN ('confirmed', 'refuted')",
        (store.uid,),
    )
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
