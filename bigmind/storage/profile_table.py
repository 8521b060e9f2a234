"""The identity_profile table (Tier 0): one row per user."""

from __future__ import annotations

from bigmind.models import Profile
from bigmind.storage.db import Row, Tx
from bigmind.storage.table import Table

FIELDS = ("role", "preferences", "pinned_facts")


class Profiles(Table):
    """The user's Tier-0 profile."""

    def get(self) -> Profile:
        rows = self.db.query(
            "SELECT role, preferences, pinned_facts, updated_at FROM identity_profile"
            " WHERE user_id = ?",
            (self.uid,),
        )
        return Profile(**rows[0]) if rows else Profile(None, None, None, None)

    def update(self, tx: Tx, fields: dict[str, str | None], ts: str) -> None:
        """Set these fields (creating the row on first use); the others keep their values."""
        unknown = set(fields) - set(FIELDS)
        if unknown:
            raise ValueError(f"not profile fields: {sorted(unknown)}")
        if not tx.execute("SELECT 1 AS x FROM identity_profile WHERE user_id = ?", (self.uid,)):
            tx.execute(
                "INSERT INTO identity_profile(id, user_id, updated_at) VALUES (?, ?, ?)",
                (self.uid, self.uid, ts),
            )
        sets = ", ".join(f"{k} = ?" for k in fields)
        tx.execute(
            f"UPDATE identity_profile SET {sets}, updated_at = ? WHERE user_id = ?",
            (*fields.values(), ts, self.uid),
        )

    def changed_since(self, ts: str) -> list[Row]:
        """The profile's role and preferences if it changed at or after ``ts``."""
        return self.db.query(
            "SELECT role, preferences, updated_at FROM identity_profile WHERE user_id = ?"
            " AND updated_at >= ?",
            (self.uid, ts),
        )
