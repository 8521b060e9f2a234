"""Full-text statements on PostgreSQL: ``tsv`` columns, GIN, ``websearch_to_tsquery``.

The planning is :mod:`bigmind.search.pgtext`'s; here a plan's FTS5-style expression becomes a
tsquery (:func:`tsquery`) and each statement runs on the base table behind an FTS name. An
identifier (``test_response``, ``foo_bar.py``) is looked up whole, as :mod:`bigmind.storage.pgtsv`
indexes it; the planner spells one that no row holds whole as the parser reads it
(:func:`as_parsed`), as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from bigmind.storage.db import Backend, Row
from bigmind.storage.fulltext import Target, quote_term
from bigmind.storage.migrations import FTS_TABLES
from bigmind.storage.pgtsv import IDENTIFIER

BASE = {fts: base for fts, base, _cols in FTS_TABLES}
INT_IDS = {"conversation_chunks", "facts", "global_knowledge"}  # ids grow with time
# A table's rows: the planner's estimate once analysed, else counted (takes the name as `?`).
_SIZE = (
    "(SELECT CASE WHEN c.reltuples > 0 THEN CAST(c.reltuples AS bigint)"
    " ELSE (SELECT count(*) FROM {base}) END FROM pg_class c WHERE c.oid = CAST(? AS regclass))"
)
# A plan expression's parts: a quoted term (and a prefix star), a parenthesis, an operator.
TOKEN = re.compile(r'"((?:[^"]|"")*)"(\*?)|([()])|\b(OR|AND)\b')
_WORD = re.compile(r"\w+")


def is_identifier(term: str) -> bool:
    """Whether ``term`` (a prefix ``*`` aside) is indexed whole as one lexeme."""
    return IDENTIFIER.fullmatch(term.rstrip("*")) is not None


def as_parsed(term: str) -> str:
    """An identifier to match as PostgreSQL's parser reads it, not as one lexeme: a phrase of
    its words (``test_response`` → ``'test' <-> 'respons'``), or the path or host the parser
    keeps whole. The trailing space only takes it out of :data:`IDENTIFIER`'s shape."""
    prefix = term.endswith("*")
    return term.rstrip("*") + " " + ("*" if prefix else "")


def tsquery(expression: str) -> tuple[str, tuple[str, ...]]:
    """An FTS5-style plan expression (quoted terms, OR, AND, parentheses) as a PostgreSQL
    tsquery expression and its parameters. An identifier is its whole lexeme (a GIN lookup
    that needs no recheck); other terms are phrases of 'english' lexemes."""
    sql: list[str] = []
    params: list[str] = []
    for m in TOKEN.finditer(expression):
        term, prefix, paren, op = m.groups()
        if paren:
            sql.append(paren)
        elif op:
            sql.append(" || " if op == "OR" else " && ")
        else:
            text = term.replace('""', '"')
            words = _WORD.findall(text)
            if IDENTIFIER.fullmatch(text):  # letters, digits, ._/- only: no quoting needed
                sql.append("CAST(? AS tsquery)")
                params.append(f"'{text.lower()}'" + (":*" if prefix else ""))
            elif prefix and len(words) == 1:
                sql.append("to_tsquery('english', ? || ':*')")
                params.append(words[0])
            else:
                sql.append("websearch_to_tsquery('english', ?)")
                params.append('"' + text.replace('"', " ") + '"')
    return "".join(sql) or "''::tsquery", tuple(params)


class PgFullText:
    """The full-text statements of one PostgreSQL backend, named by FTS table as on SQLite."""

    def __init__(self, db: Backend) -> None:
        self.db = db

    def stats(self, fts: str) -> Row | None:
        """ANALYZE's view of the table's ``tsv`` column: ``n`` (rows), ``elems`` (its most
        common lexemes) and ``freqs`` (theirs, then the minimum and maximum); None if absent."""
        rows = self.db.query(
            "SELECT c.reltuples AS n, s.most_common_elems::text::text[] AS elems,"
            " s.most_common_elem_freqs AS freqs FROM pg_class c"
            " LEFT JOIN pg_stats s ON s.schemaname = current_schema()"
            " AND s.tablename = c.relname AND s.attname = 'tsv'"
            " WHERE c.oid = to_regclass(?)",
            (BASE[fts],),
        )
        return rows[0] if rows else None

    def lexemes(self, terms: Sequence[str]) -> list[tuple[str, str]]:
        """(term, lexeme) for every 'english' lexeme of these terms, in one statement."""
        rows = self.db.query(
            "SELECT x.term, unnest(tsvector_to_array(to_tsvector('english', x.term))) AS lx"
            " FROM unnest(CAST(? AS text[])) AS x(term)",
            (list(terms),),
        )
        return [(str(r["term"]), str(r["lx"])) for r in rows]

    def count_terms(self, fts: str, terms: Sequence[str], cap: int) -> dict[str, int]:
        """Rows matching each term, each counted up to ``cap`` (every one when ``cap`` ≤ 0),
        in one statement."""
        return self.count_terms_sized(fts, terms, cap, sized=False)[0]

    def count_terms_sized(
        self, fts: str, terms: Sequence[str], cap: int, *, sized: bool = True
    ) -> tuple[dict[str, int], int]:
        """:meth:`count_terms`, and (``sized``) the table's size as :meth:`size` tells it, in
        the same statement."""
        base = BASE[fts]
        parts: list[str] = [_SIZE.format(base=base) + " AS n_rows"] if sized else []
        params: list[object] = [base] if sized else []
        for i, t in enumerate(terms):
            q, ps = tsquery(quote_term(t))
            limit = " LIMIT ?" if cap > 0 else ""
            parts.append(
                f"(SELECT count(*) FROM (SELECT 1 FROM {base} WHERE tsv @@ ({q}){limit}) AS m{i})"
                f" AS c{i}"
            )
            params += [*ps, cap] if cap > 0 else ps
        row = self.db.query("SELECT " + ", ".join(parts), params)[0]
        counts = {t: int(row[f"c{i}"]) for i, t in enumerate(terms)}
        return counts, int(row["n_rows"] or 0) if sized else 0

    def count(self, fts: str, expression: str, cap: int, floor: int | None = None) -> int:
        """Rows matching ``expression`` (from id ``floor`` on), counted up to ``cap``; every
        one when ``cap`` ≤ 0 (no LIMIT, so the planner expects no early stop)."""
        base = BASE[fts]
        q, params = tsquery(expression)
        where, extra = (" AND id >= ?", (floor,)) if floor is not None else ("", ())
        if cap <= 0:  # exact
            rows = self.db.query(
                f"SELECT count(*) AS n FROM {base} WHERE tsv @@ ({q}){where}", (*params, *extra)
            )
        else:
            rows = self.db.query(
                f"SELECT count(*) AS n FROM (SELECT 1 FROM {base} WHERE tsv @@ ({q}){where}"
                " LIMIT ?) AS m",
                (*params, *extra, cap),
            )
        return int(rows[0]["n"])

    def size(self, fts: str) -> int:
        """The table's rows, near enough for IDF weights: the planner's estimate once the table
        was analysed, else counted."""
        base = BASE[fts]
        return int(self.db.query(f"SELECT {_SIZE.format(base=base)} AS n", (base,))[0]["n"] or 0)

    def top_id(self, fts: str) -> int:
        """The table's highest id (0 when empty)."""
        return int(self.db.query(f"SELECT coalesce(max(id), 0) AS m FROM {BASE[fts]}")[0]["m"])

    def floor(self, fts: str, expression: str, budget: int) -> int | None:
        """The id above which the most recent ``budget`` matches lie (None: fewer match)."""
        q, params = tsquery(expression)
        rows = self.db.query(
            f"SELECT id FROM {BASE[fts]} WHERE tsv @@ ({q}) ORDER BY id DESC LIMIT 1 OFFSET ?",
            (*params, budget - 1),
        )
        return int(rows[0]["id"]) if rows else None

    def ranked(
        self,
        t: Target,
        expression: str,
        floor: int | None,
        side: Literal[">=", "<"],
        weights: Sequence[tuple[str, float]],
        limit: int,
    ) -> list[Row]:
        """The matches passing ``t.extra``, on ``side`` (``>=`` or ``<``) of id ``floor``, best
        first: ``ts_rank`` plus each ``(term, weight)``'s weight where the row matches it."""
        q, params = tsquery(expression)
        terms = [(*tsquery(quote_term(term)), w) for term, w in weights]
        idf_sql = "".join(
            f" + {w:.4f} * (b.tsv @@ t.q{i})::int" for i, (_, _, w) in enumerate(terms)
        )
        term_cols = "".join(f", {sql} AS q{i}" for i, (sql, _, _) in enumerate(terms))
        term_params = tuple(p for _, ps, _ in terms for p in ps)
        where = f" AND b.id {side} ?" if floor is not None else ""
        floor_p: tuple[object, ...] = (floor,) if floor is not None else ()
        rows = self.db.query(
            f"SELECT {t.columns}, ts_rank(b.tsv, t.q){idf_sql} AS score"
            f" FROM (SELECT {q} AS q{term_cols}) AS t, {t.base} b"
            f" WHERE b.tsv @@ t.q AND ({t.extra}){where} ORDER BY score DESC, b.id DESC LIMIT ?",
            (*params, *term_params, *t.owner, *floor_p, limit),
        )
        for r in rows:
            r["score"] = float(r["score"])
        return rows
