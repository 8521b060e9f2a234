"""The focus_announcements table: what each of one user's sessions says it is working on."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from bigmind.storage.db import Tx
from bigmind.storage.table import Table, marks


@dataclass(frozen=True, slots=True)
class Focus:
    session_id: str
    description: str
    files: list[str]
    ide_hint: str | None
    created_at: str


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
    ) -> None:
        tx.execute(
            "INSERT INTO focus_announcements(session_id, user_id, description, files, ide_hint,"
            " created_at, project) VALUES (?, ?, ?, ?, ?, ?,"
            " (SELECT project FROM sessions WHERE id = ?))",
            (session_id, self.uid, description, json.dumps(list(files)), ide_hint, ts, session_id),
        )

    def latest(self, session_ids: Sequence[str]) -> dict[str, Focus]:
        """The newest announcement of each given session that has one."""
        if not session_ids:
            return {}
        rows = self.db.query(
            "SELECT f.session_id, f.description, f.files, f.ide_hint, f.created_at"
            " FROM focus_announcements f WHERE f.user_id = ? AND f.session_id IN"
            f" ({marks(session_ids)}) ORDER BY f.created_at DESC, f.id DESC",
            (self.uid, *session_ids),
        )
        out: dict[str, Focus] = {}
        for r in rows:
            if r["session_id"] not in out:
                out[r["session_id"]] = Focus(
                    r["session_id"],
                    r["description"],
                    json.loads(r["files"] or "[]"),
                    r["ide_hint"],
                    r["created_at"],
                )
        return out
