"""The fact_links table: facts that conflict, supersede or were merged into one another.

A link reads "``fact_id`` <kind> ``other_id``": #15 *conflicts* with #12 (#15 was checked
later), #20 *supersedes* #14 (its text says it replaces #14, which was deprecated), #3
*merged* #7 (the same fact: #7 was deprecated "merged into #3"). Links go with their facts
(``ON DELETE CASCADE`` on both ends, so deleting a fact row deletes its links); deprecating a
fact settles its conflicts (:meth:`FactLinks.settle`), while supersedes and merged links stay
as its history until the fact is restored (:meth:`FactLinks.undo_replacement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bigmind.models import FACT_COLUMNS, Fact
from bigmind.storage.db import Row, Tx
from bigmind.storage.facts_table import active, fact_from_row
from bigmind.storage.table import Table, marks

KINDS = ("conflict", "supersedes", "merged")


@dataclass(frozen=True, slots=True)
class Linked:
    """A fact linked to one being shown: ``outgoing`` when the shown fact is the link's
    ``fact_id`` (it conflicts with, supersedes or merged ``fact``)."""

    shown: int
    fact: Fact
    kind: str
    outgoing: bool
    why: str | None
    similarity: float | None
    linked_at: str


_LINK_COLUMNS = "l.kind, l.why, l.similarity, l.created_at AS linked_at"


class FactLinks(Table):
    """One user's links between facts."""

    def add(
        self,
        tx: Tx,
        fact_id: int,
        other_id: int,
        kind: str,
        why: str | None,
        similarity: float | None,
        ts: str,
    ) -> bool:
        """Record "fact_id <kind> other_id" once; False when it was already recorded."""
        if kind not in KINDS:
            raise ValueError(f"not a fact link kind: {kind!r}")
        rows = tx.execute(
            "INSERT INTO fact_links(user_id, fact_id, other_id, kind, why, similarity, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (fact_id, other_id, kind) DO NOTHING"
            " RETURNING id",
            (self.uid, fact_id, other_id, kind, why, similarity, ts),
        )
        return bool(rows)

    def settle(self, tx: Tx, fact_id: int) -> None:
        """The fact was deprecated: its conflicts are settled."""
        tx.execute(
            "DELETE FROM fact_links WHERE user_id = ? AND kind = 'conflict'"
            " AND (fact_id = ? OR other_id = ?)",
            (self.uid, fact_id, fact_id),
        )

    def undo_replacement(self, tx: Tx, fact_id: int) -> None:
        """The fact was restored: it is no longer superseded by, or merged into, another."""
        tx.execute(
            "DELETE FROM fact_links WHERE user_id = ? AND other_id = ?"
            " AND kind IN ('supersedes', 'merged')",
            (self.uid, fact_id),
        )

    def of_facts(self, ids: Sequence[int], tx: Tx | None = None) -> list[Linked]:
        """Every link of these facts, with the fact at its other end (any state), the most
        recently stored other fact first."""
        if not ids:
            return []
        rows = self._run(tx)(
            f"SELECT l.fact_id AS shown, 1 AS outgoing, {_LINK_COLUMNS}, {FACT_COLUMNS}"
            " FROM fact_links l JOIN facts f ON f.id = l.other_id"
            f" WHERE l.user_id = ? AND l.fact_id IN ({marks(ids)})"
            f" UNION ALL SELECT l.other_id AS shown, 0 AS outgoing, {_LINK_COLUMNS}, {FACT_COLUMNS}"
            " FROM fact_links l JOIN facts f ON f.id = l.fact_id"
            f" WHERE l.user_id = ? AND l.other_id IN ({marks(ids)})",
            (self.uid, *ids, self.uid, *ids),
        )
        found = [_linked(r) for r in rows]
        found.sort(key=lambda x: x.fact.id, reverse=True)
        return found

    def since(self, ts: str, kinds: Sequence[str], limit: int) -> tuple[int, list[Row]]:
        """(how many, the first ``limit``) links of these kinds made at or after ``ts``, each
        with both facts' texts and states, newest first."""
        source = (
            "fact_links l JOIN facts a ON a.id = l.fact_id JOIN facts b ON b.id = l.other_id"
            f" WHERE l.user_id = ? AND l.created_at >= ? AND l.kind IN ({marks(kinds)})"
        )
        return self._count_and_first(
            "l.kind, l.why, l.similarity, l.fact_id, a.fact AS fact_text,"
            " a.deprecated AS fact_deprecated, l.other_id, b.fact AS other_text,"
            " b.deprecated AS other_deprecated",
            source,
            (self.uid, ts, *kinds),
            "l.created_at DESC, l.id DESC",
            limit,
        )

    def count(self, kind: str) -> int:
        """Links of a kind between two active facts (open conflicts, for ``kind='conflict'``)."""
        return int(
            self.db.query(
                "SELECT count(*) AS n FROM fact_links l JOIN facts a ON a.id = l.fact_id"
                " JOIN facts b ON b.id = l.other_id WHERE l.user_id = ? AND l.kind = ?"
                f" AND {active('a')} AND {active('b')}",
                (self.uid, kind),
            )[0]["n"]
        )


def _linked(r: Row) -> Linked:
    r = dict(r)
    shown, outgoing = int(r.pop("shown")), bool(r.pop("outgoing"))
    kind, why, sim, at = r.pop("kind"), r.pop("why"), r.pop("similarity"), r.pop("linked_at")
    return Linked(
        shown,
        fact_from_row(r),
        str(kind),
        outgoing,
        why,
        None if sim is None else float(sim),
        str(at),
    )
