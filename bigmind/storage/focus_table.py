"""The focus_announcements table: what each of one user's sessions says it is working on."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from bigmind.storage.db import Row, Tx
from bigmind.storage.schema import matched
from bigmind.storage.table import Table, containing, containing_params, marks


@dataclass(frozen=True, slots=True)
class Focus:
    session_id: str
    description: str
    files: list[str]
    ide_hint: str | None
    created_at: str
    id: int = 0  # the announcement's id (memory_forget(kind="focus"))


class FocusAnnouncements(Table):
    """One user's focus announcements (files kept as a JSON list)."""

    def add(
        self,
        tx: Tx,
        session_id: str,
        description: str,
        files: Sequence[str],
        ide_hint: str | None,
        ts: str,
    ) -> int:
        """A new announcement; returns its id."""
        rows = tx.execute(
            "INSERT INTO focus_announcements(session_id, user_id, description, files, ide_hint,"
            " created_at, project) VALUES (?, ?, ?, ?, ?, ?,"
            " (SELECT project FROM sessions WHERE id = ?)) RETURNING id",
            (session_id, self.uid, description, json.dumps(list(files)), ide_hint, ts, session_id),
        )
        return int(rows[0]["id"])

    def get(self, focus_id: int) -> Focus | None:
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM focus_announcements f WHERE f.id = ? AND +f.user_id = ?",
            (focus_id, self.uid),
        )
        return _focus(rows[0]) if rows else None

    def delete(self, tx: Tx, focus_ids: Sequence[int]) -> list[int]:
        if not focus_ids:
            return []
        rows = tx.execute(
            f"DELETE FROM focus_announcements WHERE id IN ({marks(focus_ids)}) AND +user_id = ?"
            " RETURNING id",
            (*focus_ids, self.uid),
        )
        return [int(r["id"]) for r in rows]

    def delete_of_session(self, tx: Tx, session_id: str) -> list[int]:
        """Delete every announcement of a session; their ids."""
        rows = tx.execute(
            "DELETE FROM focus_announcements WHERE session_id = ? AND user_id = ? RETURNING id",
            (session_id, self.uid),
        )
        return [int(r["id"]) for r in rows]

    def holding(self, text: str, limit: int) -> list[Focus]:
        """Announcements whose description, files or IDE hint contain ``text``, any case,
        oldest first."""
        cols = matched("focus_announcements", "f")
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM focus_announcements f WHERE f.user_id = ?"
            f" AND {containing(cols)} ORDER BY f.id LIMIT ?",
            (self.uid, *containing_params(text, cols), limit),
        )
        return [_focus(r) for r in rows]

    def latest(self, session_ids: Sequence[str]) -> dict[str, Focus]:
        """The newest announcement of each given session that has one."""
        if not session_ids:
            return {}
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM focus_announcements f WHERE f.user_id = ? AND f.session_id IN"
            f" ({marks(session_ids)}) ORDER BY f.created_at DESC, f.id DESC",
            (self.uid, *session_ids),
        )
        out: dict[str, Focus] = {}
        for r in rows:
            if r["session_id"] not in out:
                out[r["session_id"]] = _focus(r)
        return out


_COLUMNS = "f.id, f.session_id, f.description, f.files, f.ide_hint, f.created_at"


def _focus(r: Row) -> Focus:
    files = json.loads(r["files"] or "[]")
    return Focus(
        r["session_id"], r["description"], files, r["ide_hint"], r["created_at"], int(r["id"])
    )
