"""The ``tsv`` column of PostgreSQL's searchable tables: words stemmed, identifiers also whole.

PostgreSQL's text-search parser splits ``test_response`` at the underscore (it keeps hosts,
paths and hyphenated words such as ``config.py``, ``src/app/pg.py``, ``pre-commit`` whole, but
not snake_case), so a search for the identifier was the phrase ``'test' <-> 'respons'``; the
GIN index keeps no positions, so every row holding both words was fetched and rechecked
(122 ms at 700 k chunks). Here the column also holds every identifier of the text as one
lexeme, unstemmed and lower-cased: a run of ASCII letters and digits glued by ``_ . / -``
(``test_response``, ``foo_bar.py``, ``a/b_c/d.py``, ``v1.2``), the shape of a term in
:mod:`bigmind.search.terms` (camelCase is one word to both parsers already). A path also gives
each of its compound parts (``src/app/foo_bar.py`` → ``foo_bar.py``), so a file named without its
folder is found. These lexemes carry no position: ``ts_rank`` counts them, phrases never
need them. :data:`IDENTIFIER` is the same shape for queries (:mod:`bigmind.storage.pgfulltext`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bigmind.storage.db import Tx

FUNCTION = "bigmind_identifiers"
IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:[._/\-][A-Za-z0-9]+)+")
_MAX_LEXEME = 200  # a lexeme may be 2 KB; longer "identifiers" are data, not names

_FUNCTION_DDL = f"""
CREATE OR REPLACE FUNCTION {FUNCTION}(doc text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT array_to_tsvector(ARRAY(
    SELECT DISTINCT w FROM regexp_matches(lower(doc), '[a-z0-9]+(?:[._/-][a-z0-9]+)+', 'g') AS m,
    LATERAL (SELECT m[1] UNION ALL SELECT p FROM unnest(string_to_array(m[1], '/')) AS p
             WHERE strpos(m[1], '/') > 0 AND p ~ '[._-]') AS x(w)
    WHERE length(w) <= {_MAX_LEXEME}))
$$
"""


def tsv_expression(first: str, second: str) -> str:
    """The generated column's expression: the first column weighs A, the second B (ts_rank's
    1.0 and 0.4, as FTS5's bm25() weighs them), 'english' stemming like FTS5's porter
    tokenizer, then both columns' identifiers whole."""
    return (
        f"setweight(to_tsvector('english', coalesce({first}, '')), 'A') ||"
        f" setweight(to_tsvector('english', coalesce({second}, '')), 'B') ||"
        f" {FUNCTION}(coalesce({first}, '') || ' ' || coalesce({second}, ''))"
    )


def identifier_tsv(tx: Tx, tables: Sequence[tuple[str, str, tuple[str, str]]]) -> list[str]:
    """Redefine ``tsv`` of every ``(fts, base, (first, second))`` table with identifiers whole
    (migration 0025); returns the tables rewritten.

    PostgreSQL 16 cannot change a generated column's expression, so the column is dropped
    (instant) and added again: one rewrite of the table that computes every row's ``tsv``,
    then the GIN index is built again and the table analysed. Both hold the table's exclusive
    lock; at a million rows they take minutes (docs/postgres-search.md), once.
    """
    tx.script(_FUNCTION_DDL)
    tx.script("SET LOCAL maintenance_work_mem = '256MB'")  # the GIN builds: fewer passes
    done = []
    for _fts, base, (first, second) in tables:
        current = tx.execute(
            "SELECT pg_get_expr(d.adbin, d.adrelid) AS e FROM pg_attrdef d JOIN pg_attribute a"
            " ON a.attrelid = d.adrelid AND a.attnum = d.adnum"
            " WHERE d.adrelid = to_regclass(?) AND a.attname = 'tsv'",
            (base,),
        )
        if current and FUNCTION in str(current[0]["e"]):
            continue
        tx.script(
            f"ALTER TABLE {base} DROP COLUMN IF EXISTS tsv, ADD COLUMN tsv tsvector"
            f" GENERATED ALWAYS AS ({tsv_expression(first, second)}) STORED;"
            f" CREATE INDEX IF NOT EXISTS idx_{base}_tsv ON {base} USING gin (tsv);"
            # The new column has no statistics yet; the search planner reads them
            # (pgtext.PgTextSearch.stats) and would count every term meanwhile.
            f" ANALYZE {base}"
        )
        done.append(base)
    return done
