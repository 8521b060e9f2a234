"""The users table: who uses a database, and their roles. Shared: construct with uid ''."""

from __future__ import annotations

from bigmind.models import User, column_list, new_id
from bigmind.storage.db import Row, Tx
from bigmind.storage.table import Table

COLUMNS = column_list(User)


def user_from_row(row: Row) -> User:
    # Rows written before roles were checked may hold NULL: they are members.
    return User(**(row | {"role": row.get("role") or "member"}))


class Users(Table):
    """Every user of the database."""

    def all(self) -> list[User]:
        """Admins first, then curators, then members; by name within each."""
        rows = self.db.query(
            f"SELECT {COLUMNS} FROM users ORDER BY CASE role WHEN 'admin' THEN 0"
            " WHEN 'curator' THEN 1 ELSE 2 END, username"
        )
        return [user_from_row(r) for r in rows]

    def by_name(self, username: str, tx: Tx | None = None) -> User | None:
        rows = self._run(tx)(f"SELECT {COLUMNS} FROM users WHERE username = ?", (username,))
        return user_from_row(rows[0]) if rows else None

    def add(self, tx: Tx, username: str, role: str, ts: str, *, seen: bool = False) -> None:
        """A new user with a fresh id; ``seen``: also its first ``last_seen``."""
        tx.lock_shared()
        tx.execute(
            "INSERT INTO users(id, username, role, created_at, last_seen) VALUES (?, ?, ?, ?, ?)",
            (new_id(), username, role, ts, ts if seen else None),
        )

    def ensure(self, tx: Tx, username: str, role: str, ts: str) -> User:
        """The user, seen at ``ts``; created with ``role`` if new."""
        tx.lock_shared()
        if self.by_name(username, tx) is None:
            self.add(tx, username, role, ts, seen=True)
        else:
            tx.execute("UPDATE users SET last_seen = ? WHERE username = ?", (ts, username))
        found = self.by_name(username, tx)
        assert found is not None
        return found

    def set_role(self, tx: Tx, username: str, role: str) -> None:
        tx.execute("UPDATE users SET role = ? WHERE username = ?", (role, username))

    def count_admins(self, tx: Tx | None = None) -> int:
        return int(
            self._run(tx)("SELECT count(*) AS n FROM users WHERE role = 'admin'", ())[0]["n"]
        )
