"""A user's whole memory, table by table, as export and import copy it (generic per-table
statements over the tables the registry exports, :data:`OWNED`; the caller validates rows and
column names)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bigmind.models import now_ts
from bigmind.storage import schema
from bigmind.storage.db import Row, Tx
from bigmind.storage.facts_table import Facts
from bigmind.storage.pgpolicies import TAKEN
from bigmind.storage.table import Table, marks


def _owned(t: schema.Entry, export: schema.Export) -> str:
    """The statement reading every row of ``t`` a user owns, in the export's order (rows
    without an owner column: those whose parent row the user owns)."""
    if t.parent is None:
        return f"SELECT * FROM {t.name} WHERE {t.owner} = ? ORDER BY {', '.join(export.order)}"
    parent, col = t.parent
    order = ", ".join(f"s.{c}" for c in export.order)
    return (
        f"SELECT s.* FROM {t.name} s JOIN {parent} x ON x.id = s.{col}"
        f" WHERE x.{schema.entry(parent).owner} = ? ORDER BY {order}"
    )


# Every row a user owns, per exported table, parents before children (the registry's order).
OWNED = {
    t.name: _owned(t, t.export)
    for t in schema.TABLES
    if isinstance(t.export, schema.Export) and not t.export.merged
}
PROFILE_FIELDS = ("role", "preferences", "pinned_facts")


def _table(name: str) -> str:
    if name not in OWNED:
        raise ValueError(f"not a copied table: {name!r}")
    return name


class Transfer(Table):
    """The rows of the user ``uid``, read for export and written by import."""

    # -- export ------------------------------------------------------------------------------
    def user(self) -> Row:
        return self.db.query("SELECT * FROM users WHERE id = ?", (self.uid,))[0]

    def profile(self) -> list[Row]:
        return self.db.query("SELECT * FROM identity_profile WHERE user_id = ?", (self.uid,))

    def owned(self, table: str) -> list[Row]:
        """Every row of ``table`` this user owns, all columns."""
        return self.db.query(OWNED[_table(table)], (self.uid,))

    # -- import ------------------------------------------------------------------------------
    def session_owners(self, ids: Sequence[str]) -> dict[str, str]:
        """Who owns each of these session ids in this database (ids nobody has are absent)."""
        out: dict[str, str] = {}
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            rows = self.db.query(
                f"SELECT id, user_id FROM sessions WHERE id IN ({marks(part)})", part
            )
            out.update({str(r["id"]): str(r["user_id"]) for r in rows})
            if self.db.dialect == "postgresql":  # another user's rows are out of sight there
                taken = self.db.query(TAKEN, ("sessions", part))
                out.update({str(r["id"]): "" for r in taken if str(r["id"]) not in out})
        return out

    def user_exists(self, tx: Tx, user_id: str) -> bool:
        return bool(tx.execute("SELECT 1 AS x FROM users WHERE id = ?", (user_id,)))

    def has_active_fact(self, tx: Tx, digest: str) -> bool:
        """Whether this user already has an active fact with this content hash."""
        return Facts(self.db, self.uid).active_with_hash(digest, tx) is not None

    def row_id(self, tx: Tx, table: str, key: Mapping[str, Any], *, own: bool) -> Any:
        """The id of a row of ``table`` with these key column values (with ``own``: of this
        user's rows only), or None."""
        where = " AND ".join(f"{k} = ?" for k in key)
        params: list[Any] = list(key.values())
        if own:
            where += " AND user_id = ?"
            params.append(self.uid)
        rows = tx.execute(f"SELECT id FROM {_table(table)} WHERE {where} LIMIT 1", params)
        return rows[0]["id"] if rows else None

    def id_taken(self, tx: Tx, table: str, row_id: object) -> bool:
        """Whether any row of ``table``, whoever's, has this id."""
        if tx.dialect == "postgresql":
            return bool(tx.execute(TAKEN, (_table(table), [str(row_id)])))
        return bool(tx.execute(f"SELECT 1 AS x FROM {_table(table)} WHERE id = ?", (row_id,)))

    def insert(self, tx: Tx, table: str, row: Row) -> Any:
        """One row as given (its keys are the table's column names); returns its id."""
        cols = ", ".join(row)
        return tx.execute(
            f"INSERT INTO {_table(table)}({cols}) VALUES ({marks(row)}) RETURNING id",
            tuple(row.values()),
        )[0]["id"]

    def fill_profile(self, tx: Tx, src: Row) -> int:
        """Fill this user's empty profile fields from ``src``; never overwrite what is there.
        Returns 1 if the profile was created or changed, else 0."""
        have = tx.execute(
            "SELECT role, preferences, pinned_facts FROM identity_profile WHERE user_id = ?",
            (self.uid,),
        )
        if not have:
            tx.execute(
                "INSERT INTO identity_profile(id, user_id, role, preferences, pinned_facts,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    self.uid,
                    self.uid,
                    *(src.get(f) for f in PROFILE_FIELDS),
                    src.get("updated_at") or now_ts(),
                ),
            )
            return 1
        fill = {f: src.get(f) for f in PROFILE_FIELDS if not have[0][f] and src.get(f)}
        if fill:
            sets = ", ".join(f"{k} = ?" for k in fill)
            tx.execute(
                f"UPDATE identity_profile SET {sets} WHERE user_id = ?",
                (*fill.values(), self.uid),
            )
        return 1 if fill else 0
