"""Full-text statements over SQLite's FTS5 tables (the planning is :mod:`bigmind.search.textsearch`).

Every statement matches one FTS table by rowid and joins its base table ``b`` only for the
rows it returns; the owner condition arrives with the :class:`Target` (its ``extra`` and
``owner``), written by the module that knows the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bigmind.storage.db import Backend, Row
from bigmind.storage.table import marks


def quote_term(term: str) -> str:
    """A term as an FTS5 string (phrase), keeping a trailing * as a prefix search."""
    prefix = term.endswith("*")
    body = term.rstrip("*").replace('"', '""')
    return f'"{body}"*' if prefix else f'"{body}"'


@dataclass(frozen=True, slots=True)
class Target:
    """What one search ranks: the base table ``b`` behind an FTS table, the columns to return,
    the condition rows must pass (owner, deprecation) with its parameters, the column weights."""

    fts: str
    base: str
    columns: str
    extra: str
    owner: tuple[object, ...]
    weights: str


class FullText:
    """The FTS5 statements of one backend: counts, the recency floor, BM25 ranking."""

    def __init__(self, db: Backend) -> None:
        self.db = db

    def count_terms(self, fts: str, terms: Sequence[str], cap: int) -> tuple[dict[str, int], int]:
        """Rows matching each term, in one statement: counted up to ``cap``; past it, estimated
        from how many rows the first ``cap`` matches span, so that terms matching many more
        rows than ``cap`` still sort by how common they are. Also the table's highest rowid
        (its size, near enough: what IDF weights are computed against)."""
        one = (
            f"(SELECT count(*) || ' ' || coalesce(max(rowid), 0) FROM (SELECT rowid FROM {fts}"
            f" WHERE {fts} MATCH ? LIMIT ?))"
        )
        row = self.db.query(
            f"SELECT (SELECT max(rowid) FROM {fts}) AS top, "
            + ", ".join(f"{one} AS c{i}" for i in range(len(terms))),
            [v for t in terms for v in (quote_term(t), cap)],
        )[0]
        top = int(row["top"] or 0)
        out = {}
        for i, t in enumerate(terms):
            n, reach = (int(x) for x in str(row[f"c{i}"]).split())
            out[t] = n if n < cap else max(cap, round(cap * top / max(reach, 1)))
        return out, top

    def top(self, fts: str) -> int:
        """The table's highest rowid (0 when empty)."""
        return int(self.db.query(f"SELECT coalesce(max(rowid), 0) AS m FROM {fts}")[0]["m"])

    def count(self, fts: str, expression: str, cap: int, floor: int | None = None) -> int:
        """Rows matching ``expression`` (from rowid ``floor`` on), counted up to ``cap``."""
        where, params = (" AND rowid >= ?", (floor,)) if floor is not None else ("", ())
        rows = self.db.query(
            f"SELECT count(*) AS n FROM (SELECT rowid FROM {fts} WHERE {fts} MATCH ?{where}"
            " LIMIT ?)",
            (expression, *params, cap),
        )
        return int(rows[0]["n"])

    def floor(self, fts: str, expression: str, budget: int) -> int | None:
        """The rowid above which the most recent ``budget`` matches lie (None: fewer match)."""
        rows = self.db.query(
            f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (expression, budget - 1),
        )
        return int(rows[0]["rowid"]) if rows else None

    def rank(
        self,
        t: Target,
        expression: str,
        floor: int | None,
        fetch: int,
        limit: int,
        *,
        recency: bool = False,
    ) -> list[Row]:
        """The best ``limit`` rows among the top ``fetch`` matches (from rowid ``floor`` on)
        that pass ``t.extra``, with a ``score`` (higher is better; equal scores newest first)
        and ``matched``: how many of those top matches there were (fewer than ``fetch``: every
        match was looked at). With ``recency`` the newest matches come first, without BM25
        (whose IDF reads every row a term is in), scored ``rowid × 1e-12``."""
        fts = t.fts
        where = " AND rowid >= ?" if floor is not None else ""
        floor_p: tuple[object, ...] = (floor,) if floor is not None else ()
        score, order = _ordering(t, recency)
        rows = self.db.query(
            f"SELECT {t.columns}, m.rid, m.score, m.matched FROM ("
            "  SELECT rid, score, count(*) OVER () AS matched FROM ("
            f"    SELECT rowid AS rid, {score} AS score"
            f"    FROM {fts} WHERE {fts} MATCH ?{where} ORDER BY {order} LIMIT ?)"
            f") AS m JOIN {t.base} b ON b.rowid = m.rid WHERE {t.extra}"
            " ORDER BY m.score, m.rid DESC LIMIT ?",
            (expression, *floor_p, fetch, *t.owner, limit),
        )
        for r in rows:
            r.pop("rid")
            r["score"] = -float(r["score"])  # unrounded: a common word's BM25 is ~1e-6
        return rows

    def older(
        self,
        t: Target,
        expression: str,
        floor: int | None,
        budget: int,
        limit: int,
        *,
        recency: bool = False,
    ) -> list[Row]:
        """The best ``limit`` rows passing ``t.extra`` below rowid ``floor``: this owner's most
        recent ``budget`` matches there first (owner filter first, so the cost follows this
        owner's rows), then ranked by BM25 (``recency``: the newest of them, as :meth:`rank`)."""
        fts = t.fts
        score, order = _ordering(t, recency)
        ids = [
            r["rid"]
            for r in self.db.query(
                f"SELECT {fts}.rowid AS rid FROM {fts} JOIN {t.base} b ON b.rowid = {fts}.rowid"
                f" WHERE {fts} MATCH ? AND {fts}.rowid < ? AND {t.extra}"
                f" ORDER BY {fts}.rowid DESC LIMIT ?",
                (expression, floor, *t.owner, budget),
            )
        ]
        if not ids:
            return []
        rows = self.db.query(
            f"SELECT {t.columns}, m.score FROM ("
            f"  SELECT rowid AS rid, {score} AS score FROM {fts}"
            f"  WHERE {fts} MATCH ? AND rowid IN ({marks(ids)}) ORDER BY {order}"
            f") AS m JOIN {t.base} b ON b.rowid = m.rid ORDER BY m.score, m.rid DESC LIMIT ?",
            (expression, *ids, limit),
        )
        for r in rows:
            r["score"] = -float(r["score"])
        return rows


def _ordering(t: Target, recency: bool) -> tuple[str, str]:
    """(the score column, the inner ORDER BY): BM25 (lower is better), or the rowid."""
    if recency:
        return "-rowid * 1e-12", "rowid DESC"
    return f"bm25({t.fts}, {t.weights})", "score, rowid DESC"
