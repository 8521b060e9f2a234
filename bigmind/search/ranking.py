"""Hybrid recall: keyword and vector evidence fused, then weighed by memory signals.

For each kind of memory asked for, two candidate lists are fetched — the keyword
search of :mod:`bigmind.search.textsearch` and the nearest vectors of
:mod:`bigmind.search.vectors` — and fused on one absolute scale for every kind::

    score = 0.5 · keyword + 0.5 · cosine similarity

where *keyword* is the share of the question's terms a memory shows, each weighed by
its IDF in that kind's index, squared (:func:`_coordinate`; a memory missing from a list
gets 0 from it). Conversation chunks are then read in context: a weighted mean with their
best adjacent chunk and their session's two best scores, never above the best of them.
Small multiplicative boosts for recency, importance, confidence and usage (how often an
agent was handed the memory before: :mod:`bigmind.memory.usage`) break near-ties; exact
ties go to the memory showing more of the query's terms (as written before stem-only), then
the newer, then the more important (docs/packet.md). What is current comes first: of two
facts on one subject the newer, and a fact another updates right after its update, the
older marked (docs/contradictions.md). A hit below :data:`WEAK_BELOW` is weak. A search
writes nothing. Every hit says which of these put it where it is.

Measured on codemem-dev, codemem-chunks and LoCoMo beside plain BM25 and plain cosine
(bench/README.md, "Judgement on memories we did not write"): scaling BM25 by the best of
each kind's list (before issue 28) let a weak keyword match pose as the best one.
Reciprocal-rank fusion was tried first and measured worse on LoCoMo (R@5 0.553 vs 0.588):
ranks throw away how much better the top match is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bigmind import limits
from bigmind.errors import InvalidInput
from bigmind.limits import check_choice, check_limit, check_text
from bigmind.models import TS_FORMAT, Hit, day_of, now_ts
from bigmind.project import SEARCH_SCOPES, name_of
from bigmind.search import keyword
from bigmind.search.keyword import match_why
from bigmind.search.semantic import Semantic
from bigmind.search.terms import STEM_ONLY, TermMatcher, excerpt, terms_of
from bigmind.search.textsearch import Plan
from bigmind.search.vectors import EXTRA_VECTORS, KINDS
from bigmind.storage.searchable import Searchable
from bigmind.storage.store import Store

SHARED_KINDS = ("person", "global")
_LATE_WHY = "\x00keyword"  # stands in for a keyword why until the hit is shown
MODES = ("hybrid", "semantic", "keyword")
# A hit whose relevance (keyword and meaning evidence, before the boosts) is below this is
# weak: calibrated on codemem-dev (bench/README.md, "Judgement"), the level 90 % of the
# answerable questions' best hits reach; 15-25 % of the questions whose answer is not in
# memory stay below it (the evidence separates them only so far: AUROC ≈ 0.78).
WEAK_BELOW = 0.20
EXCERPT_ABOVE = 400  # characters: longer texts are shown as an excerpt around the terms


@dataclass(frozen=True, slots=True)
class RankParams:
    """The knobs of the ranking, measured with bench/judgement.py on every development set
    beside both floors (what each step bought and what did not help: bench/README.md);
    nearby values score within the intervals, so none is tuned to one set."""

    keyword_weight: float = 0.5  # × the IDF-weighted share of the query's terms shown
    vector_weight: float = 0.5  # × cosine similarity
    keyword_power: float = 2.0  # the share of terms shown, squared: half the terms count ¼
    fetch: int = 50  # candidates taken from each list
    min_similarity: float = 0.1  # vector neighbours below this are noise
    neighbour_share: float = 0.2  # a chunk gains this × the best score of an adjacent chunk
    session_weight: float = 0.2  # a chunk gains this × the sum of its session's best scores
    session_top: int = 2
    recency_weight: float = 0.10
    half_life_days: float = 60.0
    importance_weight: float = 0.10
    confidence_weight: float = 0.10
    usage_weight: float = 0.05
    same_subject: float = 0.8  # cosine from which two facts are about one subject
    newer_within: float = 0.85  # a newer fact on the subject goes first from this share of the
    # older one's score


DEFAULT = RankParams()


@dataclass(slots=True)
class _Cand:
    kind: str
    id: str
    text: str = ""
    ts: str | None = None
    session_id: str | None = None
    category: str | None = None
    confidence: float | None = None
    deprecated: bool = False
    importance: int = 5
    uses: int = 0
    seq: int = 0
    flag: str | None = None
    project: str | None = None  # where it was made (None: no project, or a shared kind)
    scope: str | None = None  # a fact's scope
    updated_by: int | None = None  # the newest active fact that updates this one
    elsewhere: bool = False  # from another project than the current one
    kw_rank: int | None = None
    kw_why: str = ""
    lexical: float = 0.0  # BM25, then × share of query terms present, / the kind's best
    precision: float = 0.0  # the share of the query's terms the text shows (stem-only: half)
    exact: int = 0  # query terms the text shows as written
    vec_rank: int | None = None
    similarity: float | None = None
    score: float = 0.0
    relevance: float = 0.0  # the evidence alone, before context and boosts
    signals: list[str] = field(default_factory=list)  # why, one phrase per signal
    marks: list[str] = field(default_factory=list)  # lines shown under the hit


@dataclass(frozen=True, slots=True)
class Recalled:
    hits: list[Hit]
    note: str  # why vectors did not take part, or ""

    @property
    def nothing_relevant(self) -> bool:
        """No hit, or even the best one is weak: say so before listing the closest."""
        return not self.hits or self.hits[0].weak


class Recall:
    """Ranks one user's memories for a query; see the module docstring."""

    def __init__(self, store: Store, semantic: Semantic | None, params: RankParams = DEFAULT):
        self.store = store
        self.semantic = semantic
        self.params = params
        self._plans: dict[str, Plan | None] = {}
        self._calibrated = False  # both kinds of evidence took part: weak hits can be told

    def search(
        self,
        query: str,
        limit: int = 10,
        kinds: Sequence[str] | None = None,
        *,
        mode: str = "hybrid",
        include_deprecated: bool = False,
        scope: str = "all",
    ) -> Recalled:
        """The best ``limit`` memories for ``query``. ``scope`` "all": this project's (and
        global) memories first, then other projects', labelled; "project": this project's and
        global ones only."""
        q = check_text("query", query, limits.QUERY)
        n = check_limit(limit)
        wanted = _kinds(kinds)
        check_choice("mode", mode, MODES)
        check_choice("scope", scope, SEARCH_SCOPES)
        qvec = None
        note = ""
        if mode != "keyword":
            if self.semantic is None:
                note = "(semantic search off — keyword results only)"
            else:
                qvec = self.semantic.embed_query(q)
                if qvec is None:
                    note = self.semantic.status().note()
                elif self.semantic.catching_up:
                    note = (
                        "(semantic index catching up: memories not yet embedded are found by"
                        " keywords only)"
                    )
        use_kw = mode == "hybrid" or qvec is None
        p = self.params
        # Other projects' memories are filtered after ranking: take more candidates then.
        fetch = max(p.fetch, n) * (2 if scope == "project" else 1)
        cands: dict[tuple[str, str], _Cand] = {}
        if use_kw:
            self._keyword_candidates(wanted, q, fetch, cands, include_deprecated)
        if qvec is not None:
            self._vector_candidates(wanted, qvec, fetch, cands)
        top = self._rank(list(cands.values()), q, n, include_deprecated, scope, qvec is not None)
        self._calibrated = mode == "hybrid" and qvec is not None
        return Recalled([self._hit(c, terms_of(q)) for c in top], note)

    # -- the steps of a search (also timed one by one by bench/semantic_latency.py) ---------
    def _keyword_candidates(
        self,
        kinds: Sequence[str],
        q: str,
        fetch: int,
        cands: dict[tuple[str, str], _Cand],
        include_deprecated: bool = False,
    ) -> None:
        for kind in kinds:
            found = self._keyword(kind, q, fetch, include_deprecated)
            for rank, (item_id, why, score) in enumerate(found, 1):
                c = cands.setdefault((kind, item_id), _Cand(kind, item_id))
                c.kw_rank, c.kw_why, c.lexical = rank, why, max(0.0, score)

    def _vector_candidates(
        self, kinds: Sequence[str], qvec: Any, fetch: int, cands: dict[tuple[str, str], _Cand]
    ) -> None:
        """Nearest vectors of every kind; a kind's extra vectors (chunk: read in context) count
        by the best similarity. (Run in threads beside the keyword search, they were slower:
        GIL hand-offs cost more than the overlap saved.)"""
        assert self.semantic is not None
        floor = self.params.min_similarity
        vectors = self.semantic.vectors
        fresh = vectors.freshness()  # once for every kind searched
        for kind in kinds:
            owner = "" if kind in SHARED_KINDS else self.store.uid
            sims: dict[str, float] = {}
            for source in (kind, *EXTRA_VECTORS.get(kind, ())):
                for nb in vectors.knn(source, owner, qvec, fetch, fresh):
                    if nb.similarity > sims.get(nb.item_id, floor):
                        sims[nb.item_id] = nb.similarity
            ordered = sorted(sims.items(), key=lambda kv: -kv[1])[:fetch]
            for rank, (item_id, sim) in enumerate(ordered, 1):
                c = cands.setdefault((kind, item_id), _Cand(kind, item_id))
                c.vec_rank, c.similarity = rank, sim

    def _rank(
        self,
        cands: list[_Cand],
        q: str,
        n: int,
        include_deprecated: bool,
        scope: str = "all",
        vectors: bool = False,
    ) -> list[_Cand]:
        """Load the candidates, score them (fusion, context, signals) and keep the best ``n``:
        this project's first (see :meth:`search`)."""
        p = self.params
        loaded = self._load(cands, include_deprecated)
        here = self.store.project_key
        for c in loaded:
            c.elsewhere = not _seen_from(c, here)
        if scope == "project":
            loaded = [c for c in loaded if not c.elsewhere]
        terms = terms_of(q)
        _coordinate(loaded, terms, self._weights(loaded, terms), p.keyword_power)
        now = datetime.strptime(now_ts(), TS_FORMAT)
        for c in loaded:
            self._relevance(c)
        self._conversation_context([c for c in loaded if c.kind == "chunk"])
        for c in loaded:
            self._signals(c, now)
        loaded.sort(key=_order, reverse=True)
        if vectors and p.same_subject < 1.0:
            self._newer_first(loaded, n)
        self._current_first(loaded, n, include_deprecated)
        return loaded[:n]

    def _current_first(self, ranked: list[_Cand], n: int, include_deprecated: bool) -> None:
        """A fact another active fact updates (a ``supersedes`` link: the background check's
        guess, or the agent's ``replaces``) comes right after its update, which is brought in
        if the search did not find it; the older stays, marked (docs/contradictions.md)."""
        stale = [c for c in ranked[:n] if c.kind == "fact" and c.updated_by is not None]
        if not stale:
            return
        where = {_num(c.id): c for c in ranked if c.kind == "fact"}
        missing = [str(c.updated_by) for c in stale if c.updated_by not in where]
        if missing:  # one statement, only when an update was not found by the search itself
            for c in self._load([_Cand("fact", i) for i in set(missing)], include_deprecated):
                where[_num(c.id)] = c
        for old in sorted(stale, key=lambda c: -(c.updated_by or 0)):
            new = where.get(old.updated_by or 0)
            if new is None:
                continue
            old.signals.append(f"updated by #{new.id} ({day_of(new.ts)})")
            old.marks = [m for m in old.marks if f"#{new.id} " not in m]  # said by its rival
            if new in ranked and ranked.index(new) < ranked.index(old):
                continue
            if new in ranked:
                ranked.remove(new)
            else:
                new.score, new.relevance = old.score, old.relevance
                new.signals.append("the update of a memory found")
            ranked.insert(ranked.index(old), new)
            new.signals.append(f"updates #{old.id}")

    def _newer_first(self, ranked: list[_Cand], n: int) -> None:
        """Facts about one subject (cosine ≥ ``same_subject``) written at different times: the
        newer goes first when its relevance is near the older one's, and the older is marked
        with it — what is current comes first, and nothing is hidden."""
        p = self.params
        top = ranked[: n + 5]
        facts = [c for c in top if c.kind == "fact"]
        if len(facts) < 2:
            return
        assert self.semantic is not None
        vecs = self.semantic.vectors.vectors_of("fact", [c.id for c in facts])
        for older in sorted(facts, key=lambda c: ((c.ts or ""), _num(c.id))):
            if older.id not in vecs:
                continue
            for newer in facts:
                if newer.id not in vecs or not _newer(newer, older):
                    continue
                if float(vecs[older.id] @ vecs[newer.id]) < p.same_subject:
                    continue
                at, to = ranked.index(older), ranked.index(newer)
                if to > at and newer.score >= p.newer_within * older.score:
                    ranked.insert(at, ranked.pop(to))
                    newer.signals.append(f"newer than #{older.id} on the same subject")
                if ranked.index(newer) < ranked.index(older):
                    older.marks.append(f"↪️ newer on this subject: #{newer.id} ({day_of(newer.ts)})")
                    break

    def _weights(self, cands: list[_Cand], terms: list[str]) -> dict[str, dict[str, float]]:
        """Per kind with keyword matches, each query term's IDF in that kind's index."""
        kinds = {c.kind for c in cands if c.kw_rank is not None}
        return {k: keyword.idf(self.store, k, terms) for k in sorted(kinds)}

    # -- candidates ----------------------------------------------------------------------
    def _keyword(
        self, kind: str, q: str, fetch: int, include_deprecated: bool
    ) -> list[tuple[str, str, float]]:
        """(id, why, score) of the kind's keyword matches, best first; higher score is better.

        For full-text kinds the why is left empty here and written for the hits shown only
        (:data:`_LATE_WHY`): matching terms against 100 candidates' texts cost more than the
        search itself."""
        s = self.store
        n = min(fetch, limits.RESULTS)
        if kind == "person":
            return [(str(p.id), why, score) for p, score, why in keyword.people(s, q, n)]
        found, _ = keyword.ranked(s, kind, q, n, include_deprecated=include_deprecated)
        self._plans[kind] = found.plan
        return [(i, found.why.get(i, ""), score) for i, score in found.items]

    def _load(self, cands: list[_Cand], include_deprecated: bool) -> list[_Cand]:
        """Fill candidates from their tables; drops what is not the user's or is filtered."""
        out: list[_Cand] = []
        for kind in KINDS:
            group = {c.id: c for c in cands if c.kind == kind}
            if not group:
                continue
            ids = list(group)
            for row in Searchable(self.store.db, self.store.uid).rows(
                kind, ids, include_deprecated
            ):
                c = group[str(row["id"])]
                c.text = str(row["text"])
                c.ts = row.get("ts")
                c.session_id = row.get("session_id")
                c.category = row.get("category")
                c.confidence = None if row.get("confidence") is None else float(row["confidence"])
                c.deprecated = bool(row.get("deprecated"))
                c.importance = int(row.get("importance") or 5)
                c.uses = int(row.get("uses") or 0)
                c.seq = int(row.get("seq") or 0)
                c.flag = row.get("flag")
                c.project = row.get("project")
                c.scope = row.get("scope")
                c.updated_by = int(row["updated_by"]) if row.get("updated_by") else None
                out.append(c)
        return out

    # -- scoring -------------------------------------------------------------------------
    def _relevance(self, c: _Cand) -> None:
        """Convex fusion: keyword and vector evidence on one 0…1 scale each."""
        p = self.params
        c.score = p.keyword_weight * c.lexical
        if c.kw_rank is not None:
            c.signals.append(f"{c.kw_why or _LATE_WHY} (keyword #{c.kw_rank})")
        if c.similarity is not None:
            c.score += p.vector_weight * c.similarity
            c.signals.append(f"semantic #{c.vec_rank} (similarity {c.similarity:.2f})")
        c.relevance = c.score

    def _conversation_context(self, chunks: list[_Cand]) -> None:
        """Exchanges are read in context: a chunk next to a strong match, or in a session that
        holds several, is more likely the answer (scores from before this step are used)."""
        p = self.params
        if not chunks or (p.neighbour_share <= 0 and p.session_weight <= 0):
            return
        base = {(c.session_id, c.seq): c.score for c in chunks}
        smoothed = []
        for c in chunks:
            near = max(
                base.get((c.session_id, c.seq - 1), 0.0), base.get((c.session_id, c.seq + 1), 0.0)
            )
            smoothed.append(c.score + p.neighbour_share * near)
            if near > 0.5 * c.score > 0:
                c.signals.append("next to a matching exchange")
        by_session: dict[str | None, list[float]] = {}
        for c, v in zip(chunks, smoothed, strict=True):
            by_session.setdefault(c.session_id, []).append(v)
        group = {k: sum(sorted(vs, reverse=True)[: p.session_top]) for k, vs in by_session.items()}
        spread = 1.0 + p.neighbour_share + p.session_weight * p.session_top
        for c, v in zip(chunks, smoothed, strict=True):
            boosted = v + p.session_weight * group[c.session_id]
            c.score = max(c.score, boosted / spread)  # a mean, never above its best part
            if len(by_session[c.session_id]) > 1:
                c.signals.append(f"session has {len(by_session[c.session_id])} matches")

    def _signals(self, c: _Cand, now: datetime) -> None:
        """Small multiplicative boosts: relevance leads, these break near-ties."""
        p = self.params
        boost = 1.0
        if c.ts:
            age = max(0.0, (now - _parse(c.ts)).total_seconds() / 86_400)
            boost += p.recency_weight * 0.5 ** (age / p.half_life_days)
            if age < 2:
                c.signals.append("recent")
        if c.importance != 5:
            boost += p.importance_weight * (c.importance - 5) / 5
            c.signals.append(f"importance {c.importance}")
        if c.confidence is not None and c.confidence < 1.0:
            boost -= p.confidence_weight * (1.0 - c.confidence)
            c.signals.append(f"confidence {c.confidence:.2f}")
        if c.uses:
            boost += p.usage_weight * min(1.0, math.log1p(c.uses) / math.log(20))
            c.signals.append(f"recalled {c.uses}×")
        c.score *= boost

    def _hit(self, c: _Cand, terms: list[str]) -> Hit:
        if c.kw_rank is not None and not c.kw_why:
            why = match_why(self._plans.get(c.kind), c.text)
            c.signals = [x.replace(_LATE_WHY, why) for x in c.signals]
        if c.flag:
            c.signals.append(f"flagged: {c.flag}")
        if c.elsewhere and c.project:
            c.signals.append(f"from project {name_of(c.project)}")
        long = c.kind == "chunk" or len(c.text) > EXCERPT_ABOVE
        text = excerpt(c.text, terms) if long and terms else c.text[: EXCERPT_ABOVE * 2]
        return Hit(
            kind=c.kind,
            id=int(c.id) if c.id.isdigit() else c.id,
            date=day_of(c.ts),
            text=text,
            score=round(c.score, 4),
            why="; ".join(c.signals) or "recent memory",
            session_id=c.session_id,
            category=c.category,
            confidence=c.confidence,
            deprecated=c.deprecated,
            project=c.project if c.elsewhere else None,
            weak=self._calibrated and c.relevance < WEAK_BELOW,
            marks=tuple(c.marks),
        )


def _seen_from(c: _Cand, project: str | None) -> bool:
    """Whether a memory belongs to the view from ``project``: a global fact, or a memory made
    there or in no project (company knowledge and people have none)."""
    if c.scope == "global":
        return True
    return c.project is None or c.project == project


def _coordinate(
    cands: list[_Cand],
    terms: list[str],
    weights: dict[str, dict[str, float]],
    power: float = 1.0,
) -> None:
    """The keyword score on one absolute 0…1 scale for every kind and query: the share of the
    query's terms a memory shows, each term weighed by how telling it is (its IDF in that
    kind's index). A memory showing the question's rare words scores near 1, one sharing only
    its common words near 0, whatever else matched — so a weak keyword match can no longer
    pose as the best one (scaling BM25 by the best of its list did: the top keyword hit of
    every kind scored 1, however poor) and kinds compare fairly.

    A term counts fully when the text has it as written (or inflected), by half when only its
    stem is there (:class:`~bigmind.search.terms.TermMatcher`): the stemmers make "product" of
    "production", so an exact match must beat a stem-only one. A match the full-text index made
    that the text does not show (a stem too short to see, the category) counts as the least
    telling term matched by its stem: never 0. The share is raised to ``power``: a memory
    showing half of what the question says is far from the answer (2: it counts a quarter)."""
    matcher = TermMatcher(terms)
    for c in cands:
        if c.kw_rank is None:
            c.lexical = 0.0
            continue
        if not matcher.terms:
            c.lexical = 1.0
            continue
        known = weights.get(c.kind) or {}
        w = [max(known.get(t, 1.0), 1e-6) for t in matcher.terms]
        credits = matcher.credits(c.text)
        shown = sum(wi * ci for wi, ci in zip(w, credits, strict=True))
        if shown <= 0:
            shown = STEM_ONLY * min(w)
        c.precision = max(sum(credits) / len(credits), STEM_ONLY / len(credits))
        c.exact = sum(1 for x in credits if x == 1.0)
        c.lexical = (shown / sum(w)) ** power


def _order(c: _Cand) -> tuple[bool, float, float, int, str, int, str, int, str]:
    """Best first (used reversed): this project's memories before other projects', then score,
    then on a tie the share of the query's terms shown,
    how many as written, recency, importance; and a newer id before an older one, never the
    other way round (small memories tie often: a word in half the rows has a BM25 of ~0)."""
    newer = int(c.id) if c.id.isdigit() else -1
    here = not c.elsewhere
    return (here, c.score, c.precision, c.exact, c.ts or "", c.importance, c.kind, newer, c.id)


def _newer(b: _Cand, a: _Cand) -> bool:
    """Whether memory ``b`` was written after ``a`` (time, then id)."""
    return ((b.ts or ""), _num(b.id)) > ((a.ts or ""), _num(a.id))


def _num(item_id: str) -> int:
    return int(item_id) if item_id.isdigit() else -1


def _parse(ts: str) -> datetime:
    try:
        return datetime.fromisoformat(ts[:26])
    except ValueError:
        return datetime.strptime(ts[:10], "%Y-%m-%d")


def _kinds(kinds: Sequence[str] | str | None) -> tuple[str, ...]:
    if kinds is None or kinds == "" or kinds == []:
        return KINDS
    if isinstance(kinds, str):
        kinds = [k.strip() for k in limits.items(kinds)]
    aliases = {k + "s": k for k in KINDS} | {"people": "person", "hypotheses": "hypothesis"}
    out = []
    for k in kinds:
        k = aliases.get(k.strip().lower(), k.strip().lower())
        if k not in KINDS:
            raise InvalidInput(f"Unknown kind {k!r}; use any of: {', '.join(KINDS)}.")
        if k not in out:
            out.append(k)
    return tuple(out)
