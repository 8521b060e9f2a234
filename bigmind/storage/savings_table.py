"""The token_saves table (the efficiency log), seen by one user."""

from __future__ import annotations

from bigmind.storage.db import Row, Tx
from bigmind.storage.table import Table


class Savings(Table):
    """One user's logged token savings."""

    def add(
        self, tx: Tx, session_id: str, description: str, tokens: int, method: str, ts: str
    ) -> int:
        """A new entry; returns its id."""
        rows = tx.execute(
            "INSERT INTO token_saves(session_id, user_id, description, tokens_saved, method_used,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
            (session_id, self.uid, description, tokens, method, ts),
        )
        return int(rows[0]["id"])

    def unlink_session(self, tx: Tx, session_id: str) -> int:
        """Entries logged in a session that is being forgotten stay, without the link."""
        rows = tx.execute(
            "UPDATE token_saves SET session_id = NULL WHERE session_id = ? AND user_id = ?"
            " RETURNING id",
            (session_id, self.uid),
        )
        return len(rows)

    def per_method_day(self) -> list[Row]:
        """Tokens saved (``n``) and entries (``c``) per method_used and UTC day (``day``)."""
        return self.db.query(
            "SELECT method_used, substr(created_at, 1, 10) AS day, sum(tokens_saved) AS n,"
            " count(*) AS c FROM token_saves WHERE user_id = ? GROUP BY method_used, day",
            (self.uid,),
        )

    def total(self) -> int:
        rows = self.db.query(
            "SELECT coalesce(sum(tokens_saved), 0) AS n FROM token_saves WHERE user_id = ?",
            (self.uid,),
        )
        return int(rows[0]["n"])

    def per_day(self, since: str, before: str) -> dict[str, int]:
        """Tokens saved per UTC day (YYYY-MM-DD) in [since, before); days with none absent."""
        rows = self.db.query(
            "SELECT substr(created_at, 1, 10) AS day, sum(tokens_saved) AS n FROM token_saves"
            " WHERE user_id = ? AND created_at >= ? AND created_at < ?"
            " GROUP BY substr(created_at, 1, 10)",
            (self.uid, since, before),
        )
        return {str(r["day"]): int(r["n"] or 0) for r in rows}
