"""Rows holding a text that are not memories a forget deletes: found, and the text cut out.

``bigmind purge`` (:mod:`bigmind.memory.purge`) finds the memories holding a text through each
table's module. The other rows whose columns it matches (:mod:`bigmind.storage.schema`)
are here: the profile, token-savings notes, company knowledge, a fact link's reason, a user's
display name, an API token's label. The row stays and each occurrence of the text in it becomes
``[purged]``; the vectors made from the old text are dropped (re-made from the new). The
directory's topics are found here too, and made again by the forget (copies of sessions').
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bigmind.storage.db import Backend, Row, Tx
from bigmind.storage.redact_rows import forget_vectors
from bigmind.storage.schema import entry, matched
from bigmind.storage.table import containing, containing_params

CUT_MARK = "[purged]"


@dataclass(frozen=True, slots=True)
class Cut:
    """A row a purge cuts the text out of: its table, key, owner and matched columns' text."""

    table: str
    key: object
    owner: str | None
    texts: tuple[str, ...]


def holding(db: Backend, table: str, uid: str | None, text: str, limit: int) -> list[Cut]:
    """The rows of ``table`` whose matched columns contain ``text`` (any case, a substring):
    ``uid``'s own, or with None anyone's."""
    owner, key = _owner_and_key(table)
    cols = matched(table)
    if not cols:
        return []
    where, args = containing(cols), containing_params(text, cols)
    if uid is not None:
        where, args = f"{owner} = ? AND {where}", [uid, *args]
    rows = db.query(
        f"SELECT {key} AS k, {owner} AS o, {', '.join(cols)} FROM {table} WHERE {where}"
        f" ORDER BY {key} LIMIT ?",
        (*args, limit),
    )
    return [_cut(table, r, cols) for r in rows]


def _owner_and_key(table: str) -> tuple[str, str]:
    """The column naming a row's owner and the one naming the row (the registry's)."""
    spec = entry(table)
    if spec.owner is None or not (spec.forget.cut or spec.forget.rebuilt):
        raise ValueError(f"a purge neither cuts nor remakes {table!r}")
    return spec.owner, spec.forget.key


def _cut(table: str, r: Row, cols: tuple[str, ...]) -> Cut:
    texts = tuple(str(r[c]) for c in cols if r[c] is not None)
    return Cut(table, r["k"], None if r["o"] is None else str(r["o"]), texts)


def cut(tx: Tx, c: Cut, text: str) -> bool:
    """Replace every occurrence of ``text`` (any case) in the row's matched columns with
    :data:`CUT_MARK` and drop the vectors made from it; False when the row is gone or no
    longer holds it."""
    _, key = _owner_and_key(c.table)
    cols = matched(c.table)
    rows = tx.execute(f"SELECT {', '.join(cols)} FROM {c.table} WHERE {key} = ?", (c.key,))
    if not rows:
        return False
    pattern = re.compile(re.escape(text), re.IGNORECASE)
    changes = {
        col: pattern.sub(CUT_MARK, value)
        for col in cols
        if isinstance(value := rows[0][col], str) and pattern.search(value)
    }
    if not changes:
        return False
    sets = ", ".join(f"{col} = ?" for col in changes)
    tx.execute(f"UPDATE {c.table} SET {sets} WHERE {key} = ?", (*changes.values(), c.key))
    forget_vectors(tx, c.table, [c.key])
    return True


def vector_kinds(table: str) -> tuple[str, ...]:
    """The kinds of vector made from ``table``'s text (dropped by a cut)."""
    return entry(table).vectors
