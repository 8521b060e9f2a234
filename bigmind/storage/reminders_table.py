"""The reminders table (``memory_remind``), seen by one user."""

from __future__ import annotations

from dataclasses import dataclass

from bigmind.models import Record, column_list
from bigmind.storage.db import Row, Tx
from bigmind.storage.schema import matched
from bigmind.storage.table import ANYWHERE, Table, containing, containing_params, in_project


@dataclass(frozen=True, slots=True)
class Reminder(Record):
    id: int
    session_id: str | None
    project: str | None
    text: str
    due_at: str | None  # None: due in the next session after the one that set it
    created_at: str
    done_at: str | None


COLUMNS = column_list(Reminder)


class Reminders(Table):
    """One user's reminders."""

    def get(self, reminder_id: int) -> Reminder | None:
        rows = self.db.query(
            f"SELECT {COLUMNS} FROM reminders WHERE id = ? AND +user_id = ?",
            (reminder_id, self.uid),
        )
        return Reminder(**rows[0]) if rows else None

    def add(self, tx: Tx, session_id: str, text: str, due_at: str | None, ts: str) -> int:
        """A new reminder, in its session's project; returns its id."""
        rows = tx.execute(
            "INSERT INTO reminders(user_id, session_id, project, text, due_at, created_at)"
            " VALUES (?, ?, (SELECT project FROM sessions WHERE id = ?), ?, ?, ?) RETURNING id",
            (self.uid, session_id, session_id, text, due_at, ts),
        )
        return int(rows[0]["id"])

    def mark_done(self, tx: Tx, reminder_id: int, ts: str) -> None:
        """Done at ``ts``, unless it was done already (the first time stays)."""
        tx.execute(
            "UPDATE reminders SET done_at = coalesce(done_at, ?) WHERE id = ? AND +user_id = ?",
            (ts, reminder_id, self.uid),
        )

    def due(
        self, now: str, current_session: str | None, limit: int, project: str | None = ANYWHERE
    ) -> list[Reminder]:
        """Not done and due at ``now`` as seen from ``project`` and ``current_session``: dated
        ones from their time, next-session ones in any session but the one that set them;
        the earliest due first (a next-session one is due from when it was set)."""
        seen, more = in_project("project", project)
        rows = self.db.query(
            f"SELECT {COLUMNS} FROM reminders WHERE user_id = ? AND done_at IS NULL AND {seen}"
            " AND (due_at <= ? OR (due_at IS NULL AND (session_id IS NULL OR session_id <> ?)))"
            " ORDER BY coalesce(due_at, created_at), id LIMIT ?",
            (self.uid, *more, now, current_session or "", limit),
        )
        return [Reminder(**r) for r in rows]

    def pending(self, limit: int, project: str | None = ANYWHERE) -> list[Reminder]:
        """Not done, seen from ``project``, the earliest due first (next-session ones first)."""
        seen, more = in_project("project", project)
        rows = self.db.query(
            f"SELECT {COLUMNS} FROM reminders WHERE user_id = ? AND done_at IS NULL AND {seen}"
            " ORDER BY due_at IS NOT NULL, due_at, id LIMIT ?",
            (self.uid, *more, limit),
        )
        return [Reminder(**r) for r in rows]

    def count_open(self) -> int:
        """How many are not done yet (due or not)."""
        rows = self.db.query(
            "SELECT count(*) AS n FROM reminders WHERE user_id = ? AND done_at IS NULL",
            (self.uid,),
        )
        return int(rows[0]["n"])

    def delete(self, tx: Tx, reminder_id: int) -> bool:
        rows = tx.execute(
            "DELETE FROM reminders WHERE id = ? AND +user_id = ? RETURNING id",
            (reminder_id, self.uid),
        )
        return bool(rows)

    def unlink_session(self, tx: Tx, session_id: str) -> list[int]:
        """Reminders set in a session that is being forgotten stay, without the link (a
        next-session one is then due in every session); their ids."""
        rows = tx.execute(
            "UPDATE reminders SET session_id = NULL WHERE session_id = ? AND user_id = ?"
            " RETURNING id",
            (session_id, self.uid),
        )
        return sorted(int(r["id"]) for r in rows)

    def holding(self, text: str, limit: int) -> list[Row]:
        """``id`` and ``text`` of those containing ``text``, any case, oldest first."""
        cols = matched("reminders")
        return self.db.query(
            f"SELECT id, text FROM reminders WHERE user_id = ? AND {containing(cols)}"
            " ORDER BY id LIMIT ?",
            (self.uid, *containing_params(text, cols), limit),
        )
