"""The fact_history table: what a fact said before each correction, seen by one user.

Version 1 is the fact as first stored; each correction (memory_update_fact) files the version it
replaces here, so a fact's current text is version ``len(history) + 1``. A restore files the
current version too and copies an old one back: nothing is ever overwritten. Forgetting a fact
deletes its history with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bigmind.models import Fact, Record, column_list
from bigmind.storage.db import Row, Tx
from bigmind.storage.schema import matched
from bigmind.storage.table import Table, containing, containing_params, marks


@dataclass(frozen=True, slots=True)
class Version(Record):
    """One earlier version of a fact: what it said, from when until when, and why it changed."""

    fact_id: int
    version: int
    category: str
    fact: str
    confidence: float | None
    importance: int | None
    written_at: str | None  # when this version was written
    replaced_at: str  # when a correction replaced it
    reason: str | None  # the reason given for that correction


COLUMNS = column_list(Version)
_MATCHED = matched("fact_history")  # what a purge matches


class FactHistory(Table):
    """One user's earlier versions of facts."""

    def file(self, tx: Tx, fact: Fact, reason: str | None, ts: str) -> int:
        """File the fact as it is now as its next version; returns that version number."""
        rows = tx.execute(
            "SELECT coalesce(max(version), 0) + 1 AS v FROM fact_history WHERE fact_id = ?",
            (fact.id,),
        )
        version = int(rows[0]["v"])
        tx.execute(
            "INSERT INTO fact_history(fact_id, user_id, version, category, fact, confidence,"
            " importance, written_at, replaced_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                fact.id,
                self.uid,
                version,
                fact.category,
                fact.fact,
                fact.confidence,
                fact.importance,
                fact.updated_at or fact.created_at,
                ts,
                reason,
            ),
        )
        return version

    def of_fact(self, fact_id: int) -> list[Version]:
        """A fact's earlier versions, oldest first."""
        return self.of_facts([fact_id]).get(fact_id, [])

    def of_facts(self, fact_ids: Sequence[int]) -> dict[int, list[Version]]:
        """The earlier versions of each of these facts that has some, oldest first."""
        if not fact_ids:
            return {}
        rows = self.db.query(
            f"SELECT {COLUMNS} FROM fact_history WHERE fact_id IN ({marks(fact_ids)})"
            " AND user_id = ? ORDER BY fact_id, version",
            (*fact_ids, self.uid),
        )
        out: dict[int, list[Version]] = {}
        for r in rows:
            out.setdefault(int(r["fact_id"]), []).append(_version(r))
        return out

    def get(self, fact_id: int, version: int) -> Version | None:
        rows = self.db.query(
            f"SELECT {COLUMNS} FROM fact_history WHERE fact_id = ? AND version = ? AND user_id = ?",
            (fact_id, version, self.uid),
        )
        return _version(rows[0]) if rows else None

    def delete(self, tx: Tx, fact_ids: Sequence[int]) -> int:
        """Delete every version of these facts; how many rows went."""
        if not fact_ids:
            return 0
        rows = tx.execute(
            f"DELETE FROM fact_history WHERE fact_id IN ({marks(fact_ids)}) AND user_id = ?"
            " RETURNING id",
            (*fact_ids, self.uid),
        )
        return len(rows)

    def holding(self, text: str, limit: int) -> list[int]:
        """Ids of the facts an earlier version of which (its text, category or the reason it
        was replaced) contains ``text`` (any case)."""
        rows = self.db.query(
            "SELECT DISTINCT fact_id FROM fact_history WHERE user_id = ?"
            f" AND {containing(_MATCHED)}"
            " ORDER BY fact_id LIMIT ?",
            (self.uid, *containing_params(text, _MATCHED), limit),
        )
        return [int(r["fact_id"]) for r in rows]

    def edited_since(self, ts: str, limit: int) -> tuple[int, list[Row]]:
        """(how many, the first ``limit`` by time) of the corrections made at or after ``ts``:
        the fact's id, the version replaced, the fact's text now (``fact``) and the reason."""
        return self._count_and_first(
            "h.fact_id, h.version, f.fact, h.reason, h.replaced_at",
            "fact_history h JOIN facts f ON f.id = h.fact_id WHERE h.user_id = ?"
            " AND h.replaced_at >= ?",
            (self.uid, ts),
            "h.replaced_at",
            limit,
        )


def _version(r: Row) -> Version:
    conf = r.get("confidence")
    return Version(**(r | {"confidence": None if conf is None else float(conf)}))
