"""Keyword search: the one place memories are ranked by their words.

Every keyword list — the hybrid recall's, the hypothesis scan's, the CLI's — comes from
:func:`ranked`: BM25 over each kind's full-text index with one set of column weights
(``FULL_TEXT`` in :mod:`bigmind.storage.searchable`), at a bounded cost
(:mod:`bigmind.search.textsearch`), or, for hypotheses (no full-text index), the share of the
query's word stems a hypothesis contains. People are
matched field by field in :func:`bigmind.memory.people.recall`. :func:`hits` turns a list into
search results with their "why" for callers that show keyword matches alone.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from bigmind import limits
from bigmind.limits import check_limit, check_text
from bigmind.models import Fact, Hit, column_list, day_of
from bigmind.search.pgtext import PG_BUDGET, PgTextSearch
from bigmind.search.terms import excerpt, stem_prefix, terms_of
from bigmind.search.textsearch import Plan, TextSearch
from bigmind.storage.db import Backend, Row
from bigmind.storage.people_table import People, Person
from bigmind.storage.searchable import FULL_TEXT, Searchable
from bigmind.storage.store import Store, fact_from_row

_HIT_COLUMNS = {
    "fact": column_list(Fact, "b"),
    "chunk": "b.id, b.session_id, b.role, b.flag_reason, b.created_at, b.content",
}
_SEARCHES: WeakKeyDictionary[Backend, TextSearch] = WeakKeyDictionary()
_SEARCHES_LOCK = threading.Lock()
HYPOTHESIS_SCAN = 500  # most recent matching hypotheses scored per search
PEOPLE_SCAN = 500  # people containing a query word scored per search
# How much a query word found in each field of a person counts.
PERSON_FIELDS = {
    "username": 3.0,
    "display_name": 3.0,
    "role": 2.0,
    "team": 2.0,
    "expertise": 2.0,
    "notes": 1.0,
}


def text_search(db: Backend) -> TextSearch:
    """The database's bounded-cost full-text search: one per backend, so its term counts and
    plans (cached a few minutes) serve every user of the process."""
    with _SEARCHES_LOCK:
        found = _SEARCHES.get(db)
        if found is None:
            pg = db.dialect == "postgresql"
            found = PgTextSearch(db, PG_BUDGET) if pg else TextSearch(db)
            _SEARCHES[db] = found
        return found


@dataclass(frozen=True, slots=True)
class Ranked:
    """A kind's keyword list: (id, score) best first, higher is better, and the plan that
    made it (None for hypotheses, or a query with no searchable word)."""

    items: list[tuple[str, float]]
    plan: Plan | None
    why: dict[str, str]  # a reason per id where it was known while ranking (hypotheses)


def ranked(
    store: Store,
    kind: str,
    query: str,
    limit: int,
    *,
    include_deprecated: bool = False,
    columns: str = "b.id",
) -> tuple[Ranked, list[Row]]:
    """The ``limit`` best keyword matches of ``kind`` for ``query`` among the user's (or the
    shared) memories, and the rows with ``columns``."""
    if kind == "hypothesis":
        return _hypotheses(store, query, limit), []
    ft = FULL_TEXT[kind]
    cond = ft.condition(include_inactive=include_deprecated)
    owner = (store.uid,) if ft.private else ()
    search = text_search(store.db)
    rows, plan = search.search(ft.fts, ft.base, query, columns, cond, owner, limit, ft.weights)
    items = [(str(r["id"]), float(r["score"])) for r in rows]
    return Ranked(items, plan, {}), rows


def idf(store: Store, kind: str, terms: Sequence[str]) -> dict[str, float]:
    """How telling each term is in ``kind``'s full-text index (:meth:`TextSearch.idf`);
    hypotheses and people, which have none, are weighed by the facts' index."""
    ft = FULL_TEXT.get(kind) or FULL_TEXT["fact"]
    return text_search(store.db).idf(ft.fts, terms) if terms else {}


def _hypotheses(store: Store, query: str, limit: int) -> Ranked:
    stems = {t: stem_prefix(t) for t in terms_of(query)}
    if not stems:
        return Ranked([], None, {})
    rows = Searchable(store.db, store.uid).hypotheses_with(list(stems.values()), HYPOTHESIS_SCAN)
    scored = []
    for r in rows:
        low = f"{r['hypothesis']} {r['resolution'] or ''}".lower()
        hit = [t for t, st in stems.items() if st in low]
        scored.append((len(hit), str(r["id"]), "keyword match on " + ", ".join(hit)))
    scored.sort(key=lambda x: (-x[0], -int(x[1])))
    top = scored[:limit]
    return Ranked([(i, float(k)) for k, i, _ in top], None, {i: why for _, i, why in top})


def hits(
    store: Store, kind: str, query: str, limit: int = 10, *, include_deprecated: bool = False
) -> list[Hit]:
    """Keyword matches of facts or conversation chunks as search results, best first."""
    if kind not in _HIT_COLUMNS:
        raise ValueError(f"keyword hits are made for facts and chunks, not {kind!r}")
    q = check_text("query", query, limits.QUERY)
    n = check_limit(limit)
    found, rows = ranked(
        store, kind, q, n, include_deprecated=include_deprecated, columns=_HIT_COLUMNS[kind]
    )
    plan = found.plan
    out = []
    for r in rows:
        score = float(r.pop("score"))
        if kind == "fact":
            f = fact_from_row(r)
            out.append(
                Hit(
                    kind="fact",
                    id=f.id,
                    date=day_of(f.updated_at),
                    text=f.fact,
                    score=score,
                    why=match_why(plan, f.fact + " " + f.category),
                    session_id=f.source_session,
                    category=f.category,
                    confidence=f.confidence,
                    deprecated=bool(f.deprecated),
                )
            )
            continue
        content = str(r["content"])
        why = match_why(plan, content)
        if r["flag_reason"]:
            why += f"; flagged: {r['flag_reason']}"
        out.append(
            Hit(
                kind="chunk",
                id=int(str(r["id"])),
                date=day_of(str(r["created_at"])),
                text=excerpt(content, plan.used if plan else ()),
                score=score,
                why=why,
                session_id=str(r["session_id"]),
            )
        )
    return out


def match_why(plan: Plan | None, text: str) -> str:
    """One line on why a row matched: the query terms it shows, and what ranking left out."""
    matched = _matched_terms(plan.used, text) if plan else ""
    why = f"keyword match on {matched}" if matched else "keyword match (stemmed)"
    if plan and plan.conjunctive:
        why = why.replace("keyword match on", "has all of", 1)
    if plan and plan.dropped:
        why += "; too common to rank on: " + ", ".join(f"'{t}'" for t in plan.dropped[:4])
    if plan and plan.recency:
        why += "; every term too common to rank on: newest matches first"
    elif plan and plan.min_rowid is not None:
        why += "; ranked among the most recent matches"
    return why


def _matched_terms(terms: Sequence[str], text: str) -> str:
    """The query terms visible in ``text``: a word starting with the term's stem (≥ 4 chars)."""
    low = text.lower()
    seen = []
    for t in terms:
        if re.search(r"(?<!\w)" + re.escape(stem_prefix(t)), low):
            seen.append(t.rstrip("*"))
    return ", ".join(f"'{t}'" for t in seen[:6])


def people(store: Store, query: str, limit: int) -> list[tuple[Person, float, str]]:
    """People matching a name, role, team or expertise question, best first, with why."""
    terms = [t.rstrip("*") for t in terms_of(query)]
    stems = {t: t[: max(4, len(t) - 2)] for t in terms}  # also matches plurals and -ing forms
    if not terms:
        return []
    found = People(store.db, store.uid).containing([stems[t] for t in terms], PEOPLE_SCAN)
    scored = []
    for p in found:
        score = 0.0
        why: list[str] = []
        for field, weight in PERSON_FIELDS.items():
            value = (getattr(p, field) or "").lower()
            hit = [t for t in terms if stems[t] in value]
            if hit:
                score += weight * len(hit)
                why.append(f"{field} ({', '.join(hit)})")
        if score:
            scored.append((p, score, "matched " + "; ".join(why)))
    scored.sort(key=lambda x: (-x[1], x[0].username))
    return scored[:limit]
