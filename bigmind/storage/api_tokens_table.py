"""The api_tokens table: the HTTP gateway's bearer tokens, kept as SHA-256 digests only.

Shared across users (construct with uid ''): the gateway looks a token up before it knows
whose it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from bigmind.storage.db import Row, Tx
from bigmind.storage.table import Table

_COLUMNS = (
    "t.id, t.label, t.created_at, t.expires_at, t.revoked_at, t.last_used_at,"
    " u.username, u.id AS user_id"
)


@dataclass(frozen=True, slots=True)
class TokenRow:
    id: str
    username: str
    user_id: str
    label: str | None
    created_at: str
    expires_at: str | None
    revoked_at: str | None
    last_used_at: str | None

    def as_dict(self) -> dict[str, str | None]:
        return {
            "id": self.id,
            "user": self.username,
            "label": self.label,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "revoked_at": self.revoked_at,
            "last_used_at": self.last_used_at,
        }


def _token(row: Row) -> TokenRow:
    return TokenRow(
        id=str(row["id"]),
        username=str(row["username"]),
        user_id=str(row["user_id"]),
        label=row["label"],
        created_at=str(row["created_at"]),
        expires_at=row["expires_at"],
        revoked_at=row["revoked_at"],
        last_used_at=row["last_used_at"],
    )


class Tokens(Table):
    """Every user's tokens."""

    def insert(
        self,
        tx: Tx,
        token_id: str,
        user_id: str,
        digest: str,
        label: str | None,
        ts: str,
        expires_at: str | None,
    ) -> None:
        tx.execute(
            "INSERT INTO api_tokens(id, user_id, token_hash, label, created_at, expires_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (token_id, user_id, digest, label, ts, expires_at),
        )

    def by_hash(self, digest: str) -> TokenRow | None:
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM api_tokens t JOIN users u ON u.id = t.user_id"
            " WHERE t.token_hash = ?",
            (digest,),
        )
        return _token(rows[0]) if rows else None

    def by_id(self, token_id: str) -> TokenRow | None:
        """The token with this id and its user (None when either is gone): one indexed read."""
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.id = ?",
            (token_id,),
        )
        return _token(rows[0]) if rows else None

    def listed(self, user_id: str | None = None) -> list[TokenRow]:
        """Tokens of one user (or everyone's), newest first."""
        where, args = ("WHERE t.user_id = ?", (user_id,)) if user_id else ("", ())
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM api_tokens t JOIN users u ON u.id = t.user_id {where}"
            " ORDER BY t.created_at DESC, t.id",
            args,
        )
        return [_token(r) for r in rows]

    def revoke(self, tx: Tx, token_ids: list[str], ts: str) -> None:
        for token_id in token_ids:
            tx.execute(
                "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (ts, token_id),
            )

    def used(self, tx: Tx, token_id: str, ts: str) -> None:
        tx.execute("UPDATE api_tokens SET last_used_at = ? WHERE id = ?", (ts, token_id))
