"""Bounded-cost BM25 search over an FTS5 index (SQLite).

FTS5 computes BM25 for every row that matches, so an OR query containing a
common word costs time in proportion to that word's document frequency: on
100 k chunks a word found in 40 % of them costs ~30 ms alone. This module keeps
the cost bounded whatever the query:

1. Each term's document frequency is counted up to ``CANDIDATE_BUDGET + 1``
   (so counting never costs more than the budget) and cached briefly.
2. Terms are OR-ed rarest first while the candidate rows they match stay
   within the budget. Rare terms carry almost all of BM25's weight (IDF), so
   dropping the very common ones loses little ranking signal; they are named
   in the hit's "why".
3. If even the rarest term matches more rows than the budget, the terms are
   AND-ed instead, rarest first (rows with several common query words are the
   relevant ones), skipping any term that would leave nothing.
4. If that is still over budget, ranking is done over the most recent
   ``CANDIDATE_BUDGET`` matches (rowids grow with time).
5. BM25 runs on the FTS table alone; the join to the base table and the owner
   filter apply only to the top rows (over-fetched, widened if too few survive).
6. On SQLite, counts past the budget are estimated from how many rows a term's first
   ``budget`` matches span, so "rarest first" holds among common terms too: at a million
   rows nearly every term is past the budget, and capped counts made the AND follow the
   question's word order ("root AND cause AND saw…": 100 ms).
7. On SQLite, FTS5's BM25 function reads every row of every term it ranks on (its IDF),
   however few rows it scores (~30 ms for a word in half of a million rows), and matching a
   phrase (an identifier, a path) reads every row of its words. So the AND narrows only with
   terms that have at most ``COMMON_DF`` rows between them (the recency floor narrows past
   that), and keeps AND-ing the next terms while enough rows have them all (rows with more of
   the query's words are what BM25 puts first); when even the rarest term has more (its IDF is near nothing anyway), the newest
   matches are listed without BM25; and a phrase counted 0 is left out of the match while
   its count is cached.

The statements themselves are :mod:`bigmind.storage.fulltext`'s.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from bigmind.search.terms import build_fts_query, is_phrase, quote_term
from bigmind.storage.db import Backend, Row
from bigmind.storage.fulltext import FullText, Target

CANDIDATE_BUDGET = 3_000
# SQLite: FTS5's bm25() reads every row of every term it ranks on (its IDF: ~30-60 ns a row).
DEEPEN_MIN = 50  # rows an AND keeps when deepened with one more term (recall's 50 candidates)
DEEPEN_TRIES = 3
COMMON_DF = 250_000  # rows BM25 may read for its IDF (else: newest matches, no BM25)
DF_CACHE_SECONDS = 300.0
DF_CACHE_MAX = 20_000


@dataclass(frozen=True, slots=True)
class Plan:
    """What will be matched: the MATCH expression, the terms used and left out, a rowid floor."""

    expression: str
    conjunctive: bool
    used: tuple[str, ...]
    dropped: tuple[str, ...]
    min_rowid: int | None = None
    counted: int | None = None  # the matches counted when planned (a bound; None: unknown)
    recency: bool = False  # every term too common to rank on: the newest matches, no BM25


@dataclass(slots=True)
class TextSearch:
    """BM25 search with bounded cost over one backend's FTS5 tables."""

    db: Backend
    budget: int = CANDIDATE_BUDGET
    common_df: int | None = COMMON_DF  # None: BM25 whatever the terms (PostgreSQL)
    deepen_min: int = DEEPEN_MIN
    overfetch: ClassVar[bool] = True  # ranking sees matches before the owner filter
    _df: dict[tuple[str, str], tuple[int, float]] = field(default_factory=dict)
    _size: dict[str, tuple[int, float]] = field(default_factory=dict)  # rows, when last read
    _plans: dict[tuple[str, tuple[str, ...]], tuple[Plan, float]] = field(default_factory=dict)
    _sql: FullText = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._sql = FullText(self.db)
        if self.db.dialect != "sqlite":
            self.common_df = None  # the IDF cost is FTS5's

    def _doc_freq(self, fts: str, term: str) -> int:
        """Rows matching ``term``, counted up to budget + 1 (cached for a few minutes)."""
        return self._counted(fts, (term,))[term]

    def _doc_freqs(self, fts: str, terms: Sequence[str]) -> dict[str, int]:
        """:meth:`_doc_freq` of every term; the ones not cached are counted in one statement."""
        return self._counted(fts, terms)

    def _counted(self, fts: str, terms: Sequence[str]) -> dict[str, int]:
        now = time.monotonic()
        out: dict[str, int] = {}
        todo: list[str] = []
        for t in dict.fromkeys(terms):
            hit = self._df.get((fts, t))
            if hit and now - hit[1] < DF_CACHE_SECONDS:
                out[t] = hit[0]
            else:
                todo.append(t)
        if todo:
            if len(self._df) + len(todo) > DF_CACHE_MAX:
                self._df.clear()
            counts, rows = self._count_terms(fts, todo, self.budget + 1)
            if rows is not None:
                self._size[fts] = (rows, now)
            for t, n in counts.items():
                self._df[(fts, t)] = (n, now)
                out[t] = n
        return out

    def _rows(self, fts: str) -> int:
        """The table's size as of the last count (its highest id: near enough for IDF)."""
        hit = self._size.get(fts)
        if hit is None or time.monotonic() - hit[1] >= DF_CACHE_SECONDS:
            n = self._table_rows(fts)
            self._size[fts] = hit = (n, time.monotonic())
        return hit[0]

    def idf(self, fts: str, terms: Sequence[str]) -> dict[str, float]:
        """How much each term says about a row that has it: BM25's IDF, smoothed so that it
        never reaches 0 (a word in half the rows still counts, ln 2 ≈ 0.69; one in every row,
        a little). From the cached counts, so free right after :meth:`plan`."""
        freq = self._doc_freqs(fts, terms)
        n = max(self._rows(fts), *freq.values(), 1)
        return {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in freq.items()}

    def plan(self, fts: str, text: str) -> Plan | None:
        """The query to run for ``text``; cached a few minutes per set of terms."""
        q = build_fts_query(text)
        if q is None:
            return None
        key = (fts, q.terms)
        now = time.monotonic()
        hit = self._plans.get(key)
        if hit and now - hit[1] < DF_CACHE_SECONDS:
            return hit[0]
        plan = self._make_plan(fts, q.terms)
        if len(self._plans) >= DF_CACHE_MAX:
            self._plans.clear()
        self._plans[key] = (plan, now)
        return plan

    def _prefetch(self, fts: str, terms: tuple[str, ...]) -> None:
        """Let a dialect look up what it needs for all terms at once (PostgreSQL: lexemes)."""

    def _make_plan(self, fts: str, terms: tuple[str, ...]) -> Plan:
        self._prefetch(fts, terms)
        freq = self._doc_freqs(fts, terms)
        present = sorted((t for t in terms if freq[t]), key=lambda t: freq[t])
        # Terms counted 0 stay in the OR: free to match, and a cached 0 may be stale after a write.
        # Not so a phrase (an identifier, a path) on SQLite: FTS5 reads every row of its words
        # to match it, and once more for BM25, so one counted 0 is left out while cached.
        absent = [t for t in terms if not freq[t] and not (self.common_df and is_phrase(t))]
        if not present:  # nothing matched when counted; let FTS say so cheaply
            return Plan(" OR ".join(quote_term(t) for t in absent), False, terms, (), counted=0)
        common = self.common_df
        used: list[str] = []
        total = 0
        for t in present:
            if used and total + freq[t] > self.budget:
                break
            used.append(t)
            total += freq[t]
        joiner = " OR "
        if total > self.budget and len(present) > 1:
            # Every term is common: rows having several of them are the relevant ones, so
            # narrow by AND, rarest first, skipping a term that would leave nothing.
            affordable = self._affordable(present, freq)
            used, total = self._narrow(fts, affordable, freq[present[0]])
            if self.common_df is not None:
                used, total = self._deepen(fts, affordable, used, total)
            joiner = " AND "
        dropped = tuple(t for t in terms if freq[t] and t not in used)
        expression = joiner.join(quote_term(t) for t in used)
        if absent:
            expression = " OR ".join([*(quote_term(t) for t in absent), f"({expression})"])
        floor = self._floor(fts, expression, total) if total > self.budget else None
        # Even the rarest term is in so many rows that BM25's IDF alone would read them all
        # (and weigh them at almost nothing): list the newest matches instead.
        recency = common is not None and freq[used[0]] > common
        return Plan(expression, joiner == " AND ", tuple(used), dropped, floor, recency=recency)

    def _affordable(self, terms: list[str], freq: dict[str, int]) -> list[str]:
        """SQLite: the rarest terms whose rows BM25's IDF pass can afford to read (the rarest
        always); past them, the recency floor narrows instead of a commoner term."""
        if self.common_df is None:
            return terms
        out, rows = terms[:1], freq[terms[0]]
        for t in terms[1:]:
            rows += freq[t]
            if rows > self.common_df:
                break
            out.append(t)
        return out

    def _deepen(
        self, fts: str, terms: list[str], used: list[str], total: int
    ) -> tuple[list[str], int]:
        """SQLite: keep AND-ing the next terms while at least ``deepen_min`` rows have them all
        (rows with more of the query's words are the ones BM25 puts first), trying at most
        ``DEEPEN_TRIES`` more."""
        rest = [t for t in terms if t not in used][:DEEPEN_TRIES]
        for t in rest:
            expression = " AND ".join(quote_term(x) for x in [*used, t])
            if (n := self._count(fts, expression, self.budget + 1)) >= self.deepen_min:
                used, total = [*used, t], n
        return used, total

    def _narrow(self, fts: str, terms: list[str], first: int) -> tuple[list[str], int]:
        used, total = [terms[0]], first
        for t in terms[1:]:
            if total <= self.budget:
                break
            expression = " AND ".join(quote_term(x) for x in [*used, t])
            if n := self._count(fts, expression, self.budget + 1):
                used.append(t)
                total = n
        return used, total

    # -- the dialect's SQL (bigmind.storage.fulltext; PostgreSQL overrides these) ----------
    def _count_terms(
        self, fts: str, terms: Sequence[str], cap: int
    ) -> tuple[dict[str, int], int | None]:
        """Rows matching each term, each counted up to ``cap``, in one statement; and the
        table's size where the same statement tells it (else None)."""
        return self._sql.count_terms(fts, terms, cap)

    def _table_rows(self, fts: str) -> int:
        """The table's size (its highest id), when no count has told it lately."""
        return self._sql.top(fts)

    def _count(self, fts: str, expression: str, cap: int, floor: int | None = None) -> int:
        """Rows matching ``expression`` (from ``floor`` on), counted up to ``cap``."""
        return self._sql.count(fts, expression, cap, floor)

    def _floor(self, fts: str, expression: str, total: int) -> int | None:
        """The rowid above which the most recent ``budget`` of ``total`` matches lie."""
        return self._sql.floor(fts, expression, self.budget)

    def _rank(self, t: Target, plan: Plan, fetch: int, limit: int) -> list[Row]:
        """The best ``limit`` rows among the top ``fetch`` matches that pass ``t.extra``, with
        a ``score`` (higher is better) and ``matched``: how many of those top matches there
        were (fewer than ``fetch``: every match was looked at)."""
        return self._sql.rank(
            t, plan.expression, plan.min_rowid, fetch, limit, recency=plan.recency
        )

    def _older(self, t: Target, plan: Plan, limit: int) -> list[Row]:
        """The best ``limit`` rows passing ``t.extra`` below the plan's recency floor: this
        owner's most recent ``budget`` matches there first, then ranked by BM25."""
        return self._sql.older(
            t, plan.expression, plan.min_rowid, self.budget, limit, recency=plan.recency
        )

    def search(
        self,
        fts: str,
        base: str,
        text: str,
        columns: str,
        extra: str,
        owner: Sequence[object],
        limit: int,
        weights: str,
    ) -> tuple[list[Row], Plan | None]:
        """Top ``limit`` rows of ``base`` for ``text``, best first, with ``score`` (higher is
        better).

        ``columns`` selects from ``b`` (the base table), ``extra`` is an SQL condition on ``b``
        (the owner filter, deprecation…), ``owner`` its parameters.
        """
        plan = self.plan(fts, text)
        if plan is None:
            return [], None
        if not plan.expression:  # only phrases, none found when counted
            return [], plan
        t = Target(fts, base, columns, extra, tuple(owner), weights)
        fetch = max(limit * 3, 30)
        while True:
            rows = self._rank(t, plan, fetch, limit)
            matched = [r.pop("matched", None) for r in rows]
            if len(rows) >= limit or fetch >= 1_000_000 or not self.overfetch:
                break
            if matched and int(matched[0]) < fetch:
                break  # every match was ranked: there is nothing further down
            if not rows and plan.counted == 0:
                break  # no row matched when the plan was made (minutes ago at most)
            # Other users' or filtered rows took places: look further down the ranking.
            if self._count(fts, plan.expression, fetch + 1, plan.min_rowid) <= fetch:
                break
            fetch *= 10
        if plan.min_rowid is not None and len(rows) < limit:
            # The recency floor is the most recent matches of ALL users: a user whose matches
            # are older (a quiet member of a busy team) ranks among their own below it.
            older = self._older(t, plan, limit)
            rows = sorted([*rows, *older], key=lambda r: -float(r["score"]))[:limit]
        return rows, plan
