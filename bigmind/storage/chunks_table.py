"""The conversation_chunks table (Tier 3: exchanges), seen by one user."""

from __future__ import annotations

from collections.abc import Sequence

from bigmind.models import CHUNK_COLUMNS, Chunk, column_list
from bigmind.storage.db import Row, Tx
from bigmind.storage.schema import matched
from bigmind.storage.table import Table, containing, containing_params, marks


def following_any(tx: Tx, chunk_ids: Sequence[object], n: int) -> list[int]:
    """The ids of the ``n`` exchanges after each of these (any user's) in its session, by
    order: their context vectors were made with its text. Order, not seq arithmetic, since
    forgetting and vacuum leave gaps in seq (:meth:`Chunks.following` for one chunk)."""
    out: list[int] = []
    for start in range(0, len(chunk_ids), 500):
        part = chunk_ids[start : start + 500]
        rows = tx.execute(
            "SELECT DISTINCT b.id FROM conversation_chunks c JOIN conversation_chunks b"
            " ON b.session_id = c.session_id AND b.seq > c.seq"
            f" WHERE c.id IN ({marks(part)}) AND (SELECT count(*) FROM conversation_chunks m"
            " WHERE m.session_id = c.session_id AND m.seq > c.seq AND m.seq < b.seq) < ?",
            (*part, n),
        )
        out += [int(r["id"]) for r in rows]
    return out


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

    def get(self, chunk_id: int, tx: Tx | None = None) -> Chunk | None:
        rows = self._run(tx)(
            f"SELECT {CHUNK_COLUMNS} FROM conversation_chunks c WHERE c.id = ? AND +c.user_id = ?",
            (chunk_id, self.uid),
        )
        return Chunk(**rows[0]) if rows else None

    def ids_of_session(self, tx: Tx, session_id: str) -> list[int]:
        rows = tx.execute(
            "SELECT id FROM conversation_chunks WHERE session_id = ? AND user_id = ? ORDER BY seq",
            (session_id, self.uid),
        )
        return [int(r["id"]) for r in rows]

    def following(self, tx: Tx, chunk: Chunk, n: int) -> list[int]:
        """The ids of the ``n`` exchanges after ``chunk`` in its session (their context
        vectors were made with its text)."""
        rows = tx.execute(
            "SELECT id FROM conversation_chunks WHERE session_id = ? AND user_id = ? AND seq > ?"
            " ORDER BY seq LIMIT ?",
            (chunk.session_id, self.uid, chunk.seq, n),
        )
        return [int(r["id"]) for r in rows]

    def delete(self, tx: Tx, chunk_ids: Sequence[int]) -> list[int]:
        """Delete these exchanges of this user (full-text entries go by trigger); the ids."""
        out: list[int] = []
        for start in range(0, len(chunk_ids), 500):
            part = chunk_ids[start : start + 500]
            rows = tx.execute(
                f"DELETE FROM conversation_chunks WHERE id IN ({marks(part)}) AND +user_id = ?"
                " RETURNING id",
                (*part, self.uid),
            )
            out += (int(r["id"]) for r in rows)
        return out

    def holding(self, text: str, limit: int) -> list[Row]:
        """``id``, ``session_id``, ``content`` of the exchanges whose text or flag reason
        contains ``text``, any case, oldest first."""
        cols = matched("conversation_chunks", "c")
        return self.db.query(
            "SELECT c.id, c.session_id, c.content FROM conversation_chunks c WHERE c.user_id = ?"
            f" AND {containing(cols)} ORDER BY c.id LIMIT ?",
            (self.uid, *containing_params(text, cols), limit),
        )

    def headlines_of_session(self, tx: Tx, session_id: str, limit: int) -> list[Row]:
        """``content`` of a session's exchanges, flagged ones first, then in order: what an
        implicit session's automatic one-liner quotes when it holds no facts."""
        return tx.execute(
            "SELECT content FROM conversation_chunks WHERE session_id = ? AND user_id = ?"
            " ORDER BY CASE WHEN flag_reason IS NULL THEN 1 ELSE 0 END, seq LIMIT ?",
            (session_id, self.uid, limit),
        )

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
