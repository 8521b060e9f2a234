"""Bounded-cost keyword search on PostgreSQL: tsvector columns, GIN, ``websearch_to_tsquery``.

The plan is made exactly as on SQLite (:mod:`bigmind.textsearch`: terms counted up to a
budget, OR-ed rarest first, AND-ed when all are common, a recency floor past that); only its
SQL differs. Each term becomes ``websearch_to_tsquery('english', '"term"')`` (a phrase, so a
leading ``-`` or an ``or`` in a question is text, not an operator; it never raises a syntax
error), a ``term*`` becomes a prefix query, and the plan's OR / AND become ``||`` / ``&&`` on
tsquery values. Ranking is ``ts_rank_cd`` over the weighted ``tsv`` column (first indexed
column weight A, second B) with the owner filter in the same query, so no over-fetching.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from bigmind.db import Row
from bigmind.migrations import FTS_TABLES
from bigmind.textsearch import Plan, TextSearch

_BASE = {fts: base for fts, base, _cols in FTS_TABLES}
_INT_IDS = {"conversation_chunks", "facts", "global_knowledge"}  # ids grow with time
_TOKEN = re.compile(r'"((?:[^"]|"")*)"(\*?)|([()])|\b(OR|AND)\b')
_WORD = re.compile(r"\w+")


def tsquery(expression: str) -> tuple[str, tuple[str, ...]]:
    """An FTS5-style plan expression (quoted terms, OR, AND, parentheses) as a PostgreSQL
    tsquery expression and its parameters."""
    sql: list[str] = []
    params: list[str] = []
    for m in _TOKEN.finditer(expression):
        term, prefix, paren, op = m.groups()
        if paren:
            sql.append(paren)
        elif op:
            sql.append(" || " if op == "OR" else " && ")
        else:
            text = term.replace('""', '"')
            words = _WORD.findall(text)
            if prefix and len(words) == 1:
                sql.append("to_tsquery('english', ? || ':*')")
                params.append(words[0])
            else:
                sql.append("websearch_to_tsquery('english', ?)")
                params.append('"' + text.replace('"', " ") + '"')
    return "".join(sql) or "''::tsquery", tuple(params)


class PgTextSearch(TextSearch):
    """:class:`TextSearch` with PostgreSQL's SQL."""

    overfetch: ClassVar[bool] = False

    def _count(self, fts: str, expression: str, cap: int, floor: int | None = None) -> int:
        base = _BASE[fts]
        q, params = tsquery(expression)
        where, extra = (" AND id >= ?", (floor,)) if floor is not None else ("", ())
        rows = self.db.query(
            f"SELECT count(*) AS n FROM (SELECT 1 FROM {base} WHERE tsv @@ ({q}){where}"
            " LIMIT ?) AS m",
            (*params, *extra, cap),
        )
        return int(rows[0]["n"])

    def _floor(self, fts: str, expression: str) -> int | None:
        base = _BASE[fts]
        if base not in _INT_IDS:
            return None  # text ids carry no order; these tables are small (one row a session)
        q, params = tsquery(expression)
        rows = self.db.query(
            f"SELECT id FROM {base} WHERE tsv @@ ({q}) ORDER BY id DESC LIMIT 1 OFFSET ?",
            (*params, self.budget - 1),
        )
        return int(rows[0]["id"]) if rows else None

    def _rank(
        self,
        fts: str,
        base: str,
        plan: Plan,
        columns: str,
        extra: str,
        owner: Sequence[object],
        fetch: int,
        limit: int,
        weights: str,
    ) -> list[Row]:
        return self._ranked(base, plan, columns, extra, owner, limit, ">=")

    def _older(
        self,
        fts: str,
        base: str,
        plan: Plan,
        columns: str,
        extra: str,
        owner: Sequence[object],
        limit: int,
        weights: str,
    ) -> list[Row]:
        return self._ranked(base, plan, columns, extra, owner, limit, "<")

    def _ranked(
        self,
        base: str,
        plan: Plan,
        columns: str,
        extra: str,
        owner: Sequence[object],
        limit: int,
        side: str,
    ) -> list[Row]:
        """``ts_rank_cd`` over the matches passing ``extra``, on ``side`` of the recency floor."""
        q, params = tsquery(plan.expression)
        floor = f" AND b.id {side} ?" if plan.min_rowid is not None else ""
        floor_p: tuple[object, ...] = (plan.min_rowid,) if plan.min_rowid is not None else ()
        rows = self.db.query(
            f"SELECT {columns}, ts_rank_cd(b.tsv, t.q) AS score"
            f" FROM (SELECT {q} AS q) AS t, {base} b"
            f" WHERE b.tsv @@ t.q AND ({extra}){floor} ORDER BY score DESC, b.id DESC LIMIT ?",
            (*params, *owner, *floor_p, limit),
        )
        for r in rows:
            r["score"] = round(float(r["score"]), 4)
        return rows
