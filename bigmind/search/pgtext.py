"""Bounded-cost keyword search on PostgreSQL: tsvector columns, GIN, ``websearch_to_tsquery``.

The plan is made exactly as on SQLite (:mod:`bigmind.search.textsearch`: terms counted up to a
budget, OR-ed rarest first, AND-ed when all are common, a recency floor past that); only its
SQL differs (:mod:`bigmind.storage.pgfulltext`). Each term becomes ``websearch_to_tsquery('english', '"term"')`` (a phrase, so a
leading ``-`` or an ``or`` in a question is text, not an operator; it never raises a syntax
error), a ``term*`` becomes a prefix query, and the plan's OR / AND become ``||`` / ``&&`` on
tsquery values. Ranking is ``ts_rank`` over the weighted ``tsv`` column (first indexed
column weight A, second B; ``ts_rank_cd`` costs ~13 µs a row against ~2.5 µs) with the owner
filter in the same query, so no over-fetching.

On a big table (≥ ``STATS_MIN_ROWS``) the plan is made from PostgreSQL's own statistics
instead of counting: ANALYZE keeps each ``tsv`` column's most common lexemes with their
frequencies (``pg_stats.most_common_elems``), so a term's document frequency is an estimate
read from memory, a lexeme not in that list is rarer than its rarest entry, an AND of terms is
narrowed while its independence estimate exceeds the budget (each step probed non-empty with
``LIMIT 1``) and then planned for its upper bound, the rarest word's frequency, and the recency
floor is read off the id range. Counting a common word in 700 k rows through GIN costs tens of
milliseconds; the estimate costs none.

An identifier (``test_response``, ``foo_bar.py``: :mod:`bigmind.storage.pgtsv`) is matched whole
first: a GIN lookup of one lexeme. Only when no row holds it whole (it is written apart, or only
inside a longer identifier) is it matched as PostgreSQL's parser reads it, as before: for
snake_case the phrase of its words, whose rows GIN must recheck one by one (no positions).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from bigmind.search.terms import quote_term
from bigmind.search.textsearch import DF_CACHE_MAX, DF_CACHE_SECONDS, Plan, TextSearch
from bigmind.storage.db import Row
from bigmind.storage.fulltext import Target
from bigmind.storage.pgfulltext import BASE, INT_IDS, TOKEN, PgFullText, as_parsed, is_identifier

STATS_MIN_ROWS = 50_000  # below this, counting is cheap and exact
IDF_TERMS = 3  # terms whose rarity is added to ts_rank
PG_BUDGET = 1_500  # candidates ranked: ts_rank reads each row's tsvector


@dataclass(frozen=True, slots=True)
class LexemeStats:
    """ANALYZE's view of one ``tsv`` column: rows, common lexemes' frequencies, the floor."""

    rows: float
    freqs: dict[str, float]
    rarest: float  # frequency of the least common lexeme listed: unlisted ones are rarer


@dataclass  # not slots: a slots dataclass is a new class, which breaks super() in its methods
class PgTextSearch(TextSearch):
    """:class:`TextSearch` with PostgreSQL's SQL and, on big tables, its statistics."""

    overfetch: ClassVar[bool] = False
    _stats: dict[str, tuple[LexemeStats | None, float]] = field(default_factory=dict)
    _lexemes: dict[str, list[str]] = field(default_factory=dict)  # term → its 'english' lexemes
    # (fts, identifier) → (whether some row holds it whole, when that was looked up)
    _whole: dict[tuple[str, str], tuple[bool, float]] = field(default_factory=dict)
    _pg: PgFullText = field(init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._pg = PgFullText(self.db)

    def stats(self, fts: str) -> LexemeStats | None:
        """The table's lexeme statistics when it is big and analysed, else None (count)."""
        hit = self._stats.get(fts)
        now = time.monotonic()
        if hit and now - hit[1] < DF_CACHE_SECONDS:
            return hit[0]
        found = None
        r = self._pg.stats(fts)
        if r and r["elems"] and r["freqs"] and float(r["n"]) >= STATS_MIN_ROWS:
            # One frequency per lexeme, then (for tsvector) the minimum and maximum.
            freqs = [float(f) for f in r["freqs"]][: len(r["elems"])]
            found = LexemeStats(
                float(r["n"]), dict(zip(r["elems"], freqs, strict=True)), min(freqs)
            )
        self._stats[fts] = (found, now)
        return found

    def _prefetch(self, fts: str, terms: tuple[str, ...]) -> None:
        """Whether each identifier is held whole, then the 'english' lexemes of every term not
        looked up yet (as spelled: an identifier held whole is its own lexeme), one statement
        each."""
        self._settle(fts, terms)
        if self.stats(fts) is None:
            return
        todo = [t for t in terms if t not in self._lexemes and not t.endswith("*")]
        if not todo:
            return
        if len(self._lexemes) >= DF_CACHE_MAX:
            self._lexemes.clear()
        found: dict[str, list[str]] = {}
        spelled: dict[str, str] = {}
        for t in todo:
            word = self._spelled(fts, t)
            if word == t and is_identifier(t):
                found[t] = [t]
            else:
                found[t], spelled[word] = [], t
        for word, lexeme in self._pg.lexemes(list(spelled)) if spelled else ():
            found[spelled[word]].append(lexeme)
        self._lexemes.update(found)

    def _settle(self, fts: str, terms: Sequence[str]) -> None:
        """Look up, for the identifiers among ``terms`` not looked up lately, whether any row
        holds them whole (one statement); their counts go to the document-frequency cache."""
        now = time.monotonic()
        todo = [
            t
            for t in dict.fromkeys(terms)
            if is_identifier(t)
            and now - self._whole.get((fts, t), (False, -1e9))[1] >= DF_CACHE_SECONDS
        ]
        if not todo:
            return
        if len(self._whole) + len(todo) > DF_CACHE_MAX:
            self._whole.clear()
        stats = self.stats(fts)
        if stats is None:  # counted as every term is (up to the budget), and kept as its count
            counts = self._pg.count_terms(fts, todo, self.budget + 1)
        else:  # ANALYZE lists the common ones; the others are rare, so counted exactly
            listed = {
                t: max(1, round(stats.freqs[t] * stats.rows)) for t in todo if t in stats.freqs
            }
            rest = [t for t in todo if t not in listed]
            counts = listed | (self._pg.count_terms(fts, rest, 0) if rest else {})
        for t in todo:
            self._whole[(fts, t)] = (counts[t] > 0, now)
            if counts[t]:
                self._df[(fts, t)] = (counts[t], now)

    def _spelled(self, fts: str, term: str) -> str:
        """``term`` as the statements match it: an identifier no row holds whole, as parsed."""
        if is_identifier(term) and not self._whole.get((fts, term), (True, 0.0))[0]:
            return as_parsed(term)
        return term

    def _spell(self, fts: str, expression: str) -> str:
        """A plan expression with every term :meth:`_spelled`."""

        def one(m: re.Match[str]) -> str:
            if m.group(1) is None:
                return m.group(0)
            return quote_term(self._spelled(fts, m.group(1).replace('""', '"') + m.group(2)))

        return TOKEN.sub(one, expression)

    def _doc_freq(self, fts: str, term: str) -> int:
        stats = self.stats(fts)
        if stats is None or term.endswith("*"):
            return super()._doc_freq(fts, term)
        if term not in self._lexemes:
            self._prefetch(fts, (term,))
        lexemes = self._lexemes[term]
        if not lexemes:
            return 0  # a stop word: matches nothing
        # A lexeme not listed is rarer than every listed one, perhaps absent: a question's
        # "pick" or "tried" estimated at hundreds of rows would crowd the real terms out.
        if len(lexemes) == 1 and lexemes[0] not in stats.freqs:
            # Rare by the statistics, so counted exactly through GIN (no LIMIT: with one, the
            # planner expects an early stop and scans the table for a word that is absent).
            hit = self._df.get((fts, term))
            if hit and time.monotonic() - hit[1] < DF_CACHE_SECONDS:
                return hit[0]
            n = self._count(fts, quote_term(term), 0)
            self._df[(fts, term)] = (n, time.monotonic())
            return n
        # A phrase ("test_response") is at most as frequent as its rarest word (not probed:
        # its positions are checked row by row); unlisted words are rare.
        share = min(stats.freqs.get(lx, stats.rarest / 2) for lx in lexemes)
        return max(1, round(share * stats.rows))

    def _doc_freqs(self, fts: str, terms: Sequence[str]) -> dict[str, int]:
        if self.stats(fts) is None:
            return self._counted(fts, terms)
        return {t: self._doc_freq(fts, t) for t in terms}

    def _count_terms(
        self, fts: str, terms: Sequence[str], cap: int
    ) -> tuple[dict[str, int], int | None]:
        self._settle(fts, terms)
        spelled = {t: self._spelled(fts, t) for t in terms}
        counts, size = self._pg.count_terms_sized(fts, list(dict.fromkeys(spelled.values())), cap)
        return {t: counts[s] for t, s in spelled.items()}, size

    def _table_rows(self, fts: str) -> int:
        stats = self.stats(fts)
        return round(stats.rows) if stats is not None else self._pg.size(fts)

    def _narrow(self, fts: str, terms: list[str], first: int) -> tuple[list[str], int]:
        stats = self.stats(fts)
        if stats is None:
            return super()._narrow(fts, terms, first)
        used, total = [terms[0]], first
        for t in terms[1:]:
            if total <= self.budget:
                break
            estimate = round(total * self._doc_freq(fts, t) / stats.rows)
            expression = " AND ".join(quote_term(x) for x in [*used, t])
            if estimate and self._count(fts, expression, 1):  # independent, and not empty
                used.append(t)
                total = estimate
        # Words of one phrase ("race condition") are not independent: the AND may match as
        # many rows as its rarest word. Plan for that bound, so ranking never sees more than
        # the budget; if the recency window then holds too few rows, there are so few matches
        # that ranking the older ones is cheap (see TextSearch.search).
        return used, first

    def _count(self, fts: str, expression: str, cap: int, floor: int | None = None) -> int:
        return self._pg.count(fts, self._spell(fts, expression), cap, floor)

    def _floor(self, fts: str, expression: str, total: int) -> int | None:
        if BASE[fts] not in INT_IDS:
            return None  # text ids carry no order; these tables are small (one row a session)
        stats = self.stats(fts)
        if stats is not None:  # matches spread over the ids: the top budget/total of them
            span = round(self.budget * stats.rows / max(total, 1))
            return max(0, self._pg.top_id(fts) - span)
        return self._pg.floor(fts, self._spell(fts, expression), self.budget)

    def _rank(self, t: Target, plan: Plan, fetch: int, limit: int) -> list[Row]:
        return self._ranked(t, plan, limit, ">=")

    def _older(self, t: Target, plan: Plan, limit: int) -> list[Row]:
        return self._ranked(t, plan, limit, "<")

    def _ranked(self, t: Target, plan: Plan, limit: int, side: Literal[">=", "<"]) -> list[Row]:
        """The matches passing ``t.extra``, on ``side`` of the recency floor, best first.

        ts_rank knows nothing of how rare a word is, so a row matching the one rare word of a
        question would lose to rows repeating its common ones. The score adds the IDF (from the
        plan's document frequencies, as BM25 weighs terms) of each of the ``IDF_TERMS`` rarest
        terms a row matches, and keeps ``ts_rank`` (0…1) to order rows matching the same ones.
        """
        weights = [(self._spelled(t.fts, term), w) for term, w in self._idf(t.fts, plan.expression)]
        expression = self._spell(t.fts, plan.expression)
        return self._pg.ranked(t, expression, plan.min_rowid, side, weights, limit)

    def _idf(self, fts: str, expression: str) -> list[tuple[str, float]]:
        """The ``IDF_TERMS`` rarest terms of the plan, each with its IDF weight."""
        terms = []
        for m in TOKEN.finditer(expression):
            if m.group(1) is not None:
                term = m.group(1).replace('""', '"') + m.group(2)
                terms.append((term, self._doc_freq(fts, term)))
        stats = self.stats(fts)
        n = max(stats.rows if stats else 0.0, *(df for _, df in terms), 1.0) + 1
        out = []
        # The rarest few carry the weight; each weighed term costs a check on every candidate.
        for term, df in sorted(terms, key=lambda x: x[1])[:IDF_TERMS]:
            out.append((term, math.log(1 + (n - df + 0.5) / (df + 0.5))))
        return out
