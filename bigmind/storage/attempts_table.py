"""The attempts table: approaches an agent tried and whether they failed or worked, seen by one
user."""

from __future__ import annotations

from dataclasses import dataclass

from bigmind.models import Record, column_list
from bigmind.storage.db import Row, Tx
from bigmind.storage.schema import matched
from bigmind.storage.table import ANYWHERE, Table, containing, containing_params

OUTCOMES = ("failed", "worked")


@dataclass(frozen=True, slots=True)
class Attempt(Record):
    id: int
    session_id: str | None
    project: str | None
    approach: str
    outcome: str
    why: str | None
    created_at: str


COLUMNS = column_list(Attempt)


def attempt_from_row(row: Row) -> Attempt:
    return Attempt(**row)


class Attempts(Table):
    """One user's attempts."""

    def get(self, attempt_id: int) -> Attempt | None:
        rows = self.db.query(
            f"SELECT {COLUMNS} FROM attempts WHERE id = ? AND +user_id = ?",
            (attempt_id, self.uid),
        )
        return attempt_from_row(rows[0]) if rows else None

    def add(
        self, tx: Tx, session_id: str, approach: str, outcome: str, why: str | None, ts: str
    ) -> int:
        """A new attempt, in its session's project; returns its id."""
        rows = tx.execute(
            "INSERT INTO attempts(session_id, user_id, approach, outcome, why, created_at,"
            " project) VALUES (?, ?, ?, ?, ?, ?, (SELECT project FROM sessions WHERE id = ?))"
            " RETURNING id",
            (session_id, self.uid, approach, outcome, why, ts, session_id),
        )
        return int(rows[0]["id"])

    def delete(self, tx: Tx, attempt_id: int) -> bool:
        rows = tx.execute(
            "DELETE FROM attempts WHERE id = ? AND +user_id = ? RETURNING id",
            (attempt_id, self.uid),
        )
        return bool(rows)

    def unlink_session(self, tx: Tx, session_id: str) -> list[int]:
        """Attempts made in a session that is being forgotten stay, without the link; their
        ids."""
        rows = tx.execute(
            "UPDATE attempts SET session_id = NULL WHERE session_id = ? AND user_id = ?"
            " RETURNING id",
            (session_id, self.uid),
        )
        return sorted(int(r["id"]) for r in rows)

    def newest(
        self, outcome: str | None, limit: int, project: str | None = ANYWHERE
    ) -> list[Attempt]:
        """With ``outcome`` (None: any), seen from ``project``, newest first."""
        rows = self._newest("attempts", COLUMNS, {"outcome": outcome}, limit, project)
        return [attempt_from_row(r) for r in rows]

    def in_session(self, session_id: str) -> list[int]:
        """The ids of those made in one session."""
        rows = self.db.query(
            "SELECT id FROM attempts WHERE user_id = ? AND session_id = ? ORDER BY id",
            (self.uid, session_id),
        )
        return [int(r["id"]) for r in rows]

    def holding(self, text: str, limit: int) -> list[Row]:
        """``id`` and ``approach`` of those whose approach or why contains ``text``, any case,
        oldest first."""
        cols = matched("attempts")
        return self.db.query(
            f"SELECT id, approach FROM attempts WHERE user_id = ? AND {containing(cols)}"
            " ORDER BY id LIMIT ?",
            (self.uid, *containing_params(text, cols), limit),
        )

    def count(self) -> int:
        rows = self.db.query("SELECT count(*) AS n FROM attempts WHERE user_id = ?", (self.uid,))
        return int(rows[0]["n"])
