"""The global_knowledge table (Tier G), shared by every user of a database.

Rows are not private: ``uid`` is the caller, recorded as promoter or reviewer, and the
promoter of a pending entry is the one member besides curators who may see it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bigmind.models import Record
from bigmind.storage.db import Row, Tx
from bigmind.storage.table import Table, marks

_SELECT = (
    "SELECT g.id, g.category, g.title, g.content, g.importance, g.status, g.promoted_by,"
    " g.source_session, g.approved_by, g.created_at, g.updated_at, g.review_notes,"
    " g.reviewed_by, g.reviewed_at, u.username AS promoter"
    " FROM global_knowledge g LEFT JOIN users u ON u.id = g.promoted_by"
)


@dataclass(frozen=True, slots=True)
class GlobalEntry(Record):
    id: int
    category: str
    title: str
    content: str
    importance: int
    status: str
    promoted_by: str | None
    source_session: str | None
    approved_by: str | None
    created_at: str | None
    updated_at: str | None
    review_notes: str | None
    reviewed_by: str | None
    reviewed_at: str | None
    promoter: str | None  # the promoting user's name


def entry_from_row(row: Row) -> GlobalEntry:
    r = dict(row)
    r["importance"] = int(r.get("importance") or 5)
    r["status"] = r.get("status") or "pending"
    return GlobalEntry(**r)


class Knowledge(Table):
    """Company knowledge, as the user ``uid`` promotes and reviews it."""

    def get(self, entry_id: int, tx: Tx | None = None) -> GlobalEntry | None:
        """Any entry, whatever its status: who may see it is the caller's rule."""
        rows = self._run(tx)(f"{_SELECT} WHERE g.id = ?", (entry_id,))
        return entry_from_row(rows[0]) if rows else None

    def same_title(
        self, tx: Tx, category: str, title: str, *, any_pending: bool
    ) -> list[GlobalEntry]:
        """Approved or pending entries of a category with this title (any case), oldest first.
        Pending ones are every user's with ``any_pending``, else only this user's."""
        own = "" if any_pending else " AND g.promoted_by = ?"
        rows = tx.execute(
            f"{_SELECT} WHERE g.category = ? AND lower(g.title) = lower(?)"
            f" AND (g.status = 'approved' OR (g.status = 'pending'{own})) ORDER BY g.id",
            (category, title, *(() if any_pending else (self.uid,))),
        )
        return [entry_from_row(r) for r in rows]

    def add(
        self,
        tx: Tx,
        category: str,
        title: str,
        content: str,
        importance: int,
        source_session: str | None,
        ts: str,
        *,
        approved: bool,
    ) -> int:
        """A new entry promoted by this user: ``approved`` (and reviewed) by them, or pending.
        Returns its id."""
        by = self.uid if approved else None
        rows = tx.execute(
            "INSERT INTO global_knowledge(category, title, content, importance, status,"
            " promoted_by, source_session, approved_by, reviewed_by, reviewed_at, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                category,
                title,
                content,
                importance,
                "approved" if approved else "pending",
                self.uid,
                source_session,
                by,
                by,
                ts if approved else None,
                ts,
                ts,
            ),
        )
        return int(rows[0]["id"])

    def unlink_session(self, tx: Tx, session_id: str) -> int:
        """Entries this user promoted from a session that is being forgotten stay (they are
        the company's), without the link to it."""
        rows = tx.execute(
            "UPDATE global_knowledge SET source_session = NULL WHERE source_session = ?"
            " AND promoted_by = ? RETURNING id",
            (session_id, self.uid),
        )
        return len(rows)

    def approve(self, tx: Tx, entry_id: int, notes: str | None, ts: str) -> None:
        tx.execute(
            "UPDATE global_knowledge SET status = 'approved', approved_by = ?, reviewed_by = ?,"
            " reviewed_at = ?, review_notes = ?, updated_at = ? WHERE id = ?",
            (self.uid, self.uid, ts, notes, ts, entry_id),
        )

    def deprecate(self, tx: Tx, entry_id: int, notes: str | None, ts: str) -> None:
        tx.execute(
            "UPDATE global_knowledge SET status = 'deprecated', reviewed_by = ?,"
            " reviewed_at = ?, review_notes = ?, updated_at = ? WHERE id = ?",
            (self.uid, ts, notes, ts, entry_id),
        )

    def page(
        self,
        status: str,
        category: str | None,
        limit: int,
        offset: int = 0,
        *,
        own_only: bool = False,
    ) -> list[GlobalEntry]:
        """Entries with ``status`` (and ``category``; with ``own_only``, this user's): approved
        ones most important then newest first, the others newest first."""
        where = ["g.status = ?"]
        args: list[object] = [status]
        if category is not None:
            where.append("g.category = ?")
            args.append(category)
        if own_only:
            where.append("g.promoted_by = ?")
            args.append(self.uid)
        order = (
            "g.importance DESC, g.updated_at DESC" if status == "approved" else "g.updated_at DESC"
        )
        rows = self.db.query(
            f"{_SELECT} WHERE {' AND '.join(where)} ORDER BY {order}, g.id DESC LIMIT ? OFFSET ?",
            (*args, limit, offset),
        )
        return [entry_from_row(r) for r in rows]

    def top(self, limit: int) -> list[GlobalEntry]:
        """Approved entries, most important then most recently updated first."""
        rows = self.db.query(
            f"{_SELECT} WHERE g.status = 'approved'"
            " ORDER BY g.importance DESC, g.updated_at DESC, g.id DESC LIMIT ?",
            (limit,),
        )
        return [entry_from_row(r) for r in rows]

    def approved_among(self, ids: Sequence[int]) -> list[GlobalEntry]:
        """Those of ``ids`` that are approved entries."""
        if not ids:
            return []
        rows = self.db.query(
            f"{_SELECT} WHERE g.status = 'approved' AND g.id IN ({marks(ids)})", list(ids)
        )
        return [entry_from_row(r) for r in rows]

    def count(self, status: str = "approved", category: str | None = None) -> int:
        where, args = "status = ?", [status]
        if category is not None:
            where += " AND category = ?"
            args.append(category)
        return int(
            self.db.query(f"SELECT count(*) AS n FROM global_knowledge WHERE {where}", args)[0]["n"]
        )

    def reviewed_since(self, ts: str, limit: int) -> tuple[int, list[Row]]:
        """(how many, the first ``limit`` by update) of the approved or deprecated entries
        updated at or after ``ts``: id, category, title, status."""
        return self._count_and_first(
            "id, category, title, status",
            "global_knowledge WHERE updated_at >= ? AND status IN ('approved', 'deprecated')",
            (ts,),
            "updated_at",
            limit,
        )
