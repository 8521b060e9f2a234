"""The conversation_chunks table (Tier 3: exchanges), seen by one user."""

from __future__ import annotations

from bigmind.models import CHUNK_COLUMNS, Chunk, column_list
from bigmind.storage.db import Tx
from bigmind.storage.table import Table


class Chunks(Table):
    """One user's saved exchanges."""

    def append(
        self, tx: Tx, session_id: str, role: str, content: str, flag: str | None, ts: str
    ) -> Chunk:
        """Add an exchange after the session's last one, in the session's project."""
        rows = tx.execute(
            "INSERT INTO conversation_chunks(session_id, user_id, role, content, flag_reason,"
            " seq, created_at, project) VALUES (?, ?, ?, ?, ?, (SELECT coalesce(max(seq), 0) + 1"
            " FROM conversation_chunks WHERE session_id = ?), ?, (SELECT project FROM sessions"
            f" WHERE id = ?)) RETURNING {column_list(Chunk)}",
            (session_id, self.uid, role, content, flag, session_id, ts, session_id),
        )
        return Chunk(**rows[0])

    def of_session(self, session_id: str) -> list[Chunk]:
        rows = self.db.query(
            f"SELECT {CHUNK_COLUMNS} FROM conversation_chunks c WHERE c.session_id = ?"
            " AND c.user_id = ? ORDER BY c.seq",
            (session_id, self.uid),
        )
        return [Chunk(**r) for r in rows]

    def count(self, *, flagged: bool = False) -> int:
        cond = " AND flag_reason IS NOT NULL" if flagged else ""
        return int(
            self.db.query(
                f"SELECT count(*) AS n FROM conversation_chunks WHERE user_id = ?{cond}",
                (self.uid,),
            )[0]["n"]
        )

    def delete_older(self, tx: Tx, before: str) -> list[int]:
        """Delete this user's chunks created before ``before``; their ids."""
        rows = tx.execute(
            "DELETE FROM conversation_chunks WHERE user_id = ? AND created_at < ? RETURNING id",
            (self.uid, before),
        )
        return [int(r["id"]) for r in rows]
