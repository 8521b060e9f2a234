"""The hypotheses table (the thought journal), seen by one user."""

from __future__ import annotations

from dataclasses import dataclass

from bigmind.models import Record, column_list
from bigmind.storage.db import Row, Tx
from bigmind.storage.schema import matched
from bigmind.storage.table import ANYWHERE, Table, containing, containing_params, in_project


@dataclass(frozen=True, slots=True)
class Hypothesis(Record):
    id: int
    session_id: str | None
    hypothesis: str
    confidence: float
    status: str
    resolution: str | None
    created_at: str | None
    resolved_at: str | None


COLUMNS = column_list(Hypothesis)


def hypothesis_from_row(row: Row) -> Hypothesis:
    conf = row.get("confidence")
    return Hypothesis(**(row | {"confidence": 0.7 if conf is None else float(conf)}))


class Hypotheses(Table):
    """One user's hypotheses."""

    def get(self, hypothesis_id: int) -> Hypothesis | None:
        rows = self.db.query(
            f"SELECT {COLUMNS} FROM hypotheses WHERE id = ? AND +user_id = ?",
            (hypothesis_id, self.uid),
        )
        return hypothesis_from_row(rows[0]) if rows else None

    def add(self, tx: Tx, session_id: str, text: str, confidence: float, ts: str) -> int:
        """A new open hypothesis, in its session's project; returns its id."""
        rows = tx.execute(
            "INSERT INTO hypotheses(session_id, user_id, hypothesis, confidence, status,"
            " created_at, project) VALUES (?, ?, ?, ?, 'open', ?,"
            " (SELECT project FROM sessions WHERE id = ?)) RETURNING id",
            (session_id, self.uid, text, confidence, ts, session_id),
        )
        return int(rows[0]["id"])

    def set_status(
        self,
        tx: Tx,
        hypothesis_id: int,
        status: str,
        resolution: str | None,
        resolved_at: str | None,
    ) -> None:
        """A new status; a None ``resolution`` keeps the one it had."""
        tx.execute(
            "UPDATE hypotheses SET status = ?, resolution = coalesce(?, resolution),"
            " resolved_at = ? WHERE id = ? AND +user_id = ?",
            (status, resolution, resolved_at, hypothesis_id, self.uid),
        )

    def delete(self, tx: Tx, hypothesis_id: int) -> bool:
        rows = tx.execute(
            "DELETE FROM hypotheses WHERE id = ? AND +user_id = ? RETURNING id",
            (hypothesis_id, self.uid),
        )
        return bool(rows)

    def unlink_session(self, tx: Tx, session_id: str) -> list[int]:
        """Hypotheses written in a session that is being forgotten stay, without the link;
        their ids."""
        rows = tx.execute(
            "UPDATE hypotheses SET session_id = NULL WHERE session_id = ? AND user_id = ?"
            " RETURNING id",
            (session_id, self.uid),
        )
        return sorted(int(r["id"]) for r in rows)

    def holding(self, text: str, limit: int) -> list[Row]:
        """``id`` and ``hypothesis`` of those whose text or resolution contains ``text``, any
        case, oldest first."""
        cols = matched("hypotheses")
        return self.db.query(
            f"SELECT id, hypothesis FROM hypotheses WHERE user_id = ? AND {containing(cols)}"
            " ORDER BY id LIMIT ?",
            (self.uid, *containing_params(text, cols), limit),
        )

    def newest(
        self, status: str | None, limit: int, project: str | None = ANYWHERE
    ) -> list[Hypothesis]:
        """With ``status`` (None: any), seen from ``project``, newest first."""
        rows = self._newest("hypotheses", COLUMNS, {"status": status}, limit, project)
        return [hypothesis_from_row(r) for r in rows]

    def in_session(self, session_id: str) -> list[Hypothesis]:
        """Those written in one session, newest first."""
        rows = self.db.query(
            f"SELECT {COLUMNS} FROM hypotheses WHERE user_id = ? AND session_id = ?"
            " ORDER BY created_at DESC, id DESC",
            (self.uid, session_id),
        )
        return [hypothesis_from_row(r) for r in rows]

    def resolved(self) -> list[Row]:
        """Confidence and status of every confirmed or refuted hypothesis (calibration)."""
        return self.db.query(
            "SELECT confidence, status FROM hypotheses WHERE user_id = ?"
            " AND status IN ('confirmed', 'refuted')",
            (self.uid,),
        )

    def count(self) -> int:
        rows = self.db.query("SELECT count(*) AS n FROM hypotheses WHERE user_id = ?", (self.uid,))
        return int(rows[0]["n"])

    def count_open(self, project: str | None = ANYWHERE) -> int:
        """How many are open, seen from ``project``."""
        seen, more = in_project("project", project)
        rows = self.db.query(
            f"SELECT count(*) AS n FROM hypotheses WHERE user_id = ? AND status = 'open'"
            f" AND {seen}",
            (self.uid, *more),
        )
        return int(rows[0]["n"])

    def count_by_status(self) -> dict[str, int]:
        """How many per status; statuses with none are absent."""
        rows = self.db.query(
            "SELECT status, count(*) AS n FROM hypotheses WHERE user_id = ? GROUP BY status",
            (self.uid,),
        )
        return {str(r["status"]): int(r["n"]) for r in rows}

    def added_since(self, ts: str, limit: int) -> tuple[int, list[Row]]:
        """(how many, the first ``limit`` by creation) of those created at or after ``ts``:
        id, hypothesis, confidence."""
        return self._since("id, hypothesis, confidence", "created_at", ts, limit)

    def resolved_since(self, ts: str, limit: int) -> tuple[int, list[Row]]:
        """(how many, the first ``limit`` by resolution) of those resolved at or after ``ts``:
        id, hypothesis, status, resolution."""
        return self._since("id, hypothesis, status, resolution", "resolved_at", ts, limit)

    def _since(self, columns: str, at: str, ts: str, limit: int) -> tuple[int, list[Row]]:
        source = f"hypotheses WHERE user_id = ? AND {at} >= ?"
        return self._count_and_first(columns, source, (self.uid, ts), at, limit)
