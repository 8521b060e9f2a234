"""Bearer tokens for the HTTP gateway (``bigmind token``): made, checked, listed, revoked.

A token is ``bm_`` and 43 random URL-safe characters (256 bits), printed once when made;
the database keeps only its SHA-256 digest (a token's entropy makes a slow hash pointless),
so a stolen database holds no usable token. A token names its user: whoever presents it
acts as that user, never as anyone a header or argument names.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bigmind import limits
from bigmind.errors import InvalidInput, NotFound
from bigmind.limits import check_text, optional_stored
from bigmind.models import TS_FORMAT, new_id, now_ts, ts_ago
from bigmind.storage.api_tokens_table import TokenRow, Tokens
from bigmind.storage.db import Backend
from bigmind.storage.users_table import Users

PREFIX = "bm_"
MAX_DAYS = 3650
USED_EVERY_S = 300  # last_used_at is written at most this often per token


@dataclass(frozen=True, slots=True)
class Made:
    """A new token: its row, and the secret, shown once."""

    token: TokenRow
    secret: str


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create(
    db: Backend, username: str, *, days: int | None = None, label: str | None = None
) -> Made:
    """A new token for ``username`` (added as a member if new), expiring after ``days``."""
    name = check_text("username", username, limits.NAME)
    note = optional_stored("label", label, limits.NAME)
    if days is not None and not 1 <= days <= MAX_DAYS:
        raise InvalidInput(f"--expires must be 1 to {MAX_DAYS} days; got {days}.")
    secret = PREFIX + secrets.token_urlsafe(32)
    ts = now_ts()
    expires = None
    if days is not None:
        expires = (datetime.now(UTC) + timedelta(days=days)).strftime(TS_FORMAT)
    users = Users(db, "")
    tokens = Tokens(db, "")
    token_id = new_id()
    with db.transaction() as tx:
        user = users.by_name(name, tx)
        if user is None:
            users.add(tx, name, "member", ts)
            user = users.by_name(name, tx)
        assert user is not None
        tokens.insert(tx, token_id, user.id, digest(secret), note, ts, expires)
    made = TokenRow(token_id, user.username, user.id, note, ts, expires, None, None)
    return Made(made, secret)


def check(db: Backend, secret: str) -> TokenRow | None:
    """The live token ``secret`` is (not revoked, not expired), or None."""
    if not secret.startswith(PREFIX) or len(secret) > 200:
        return None
    return _live(Tokens(db, "").by_hash(digest(secret)))


def live(db: Backend, token_id: str) -> TokenRow | None:
    """The token ``token_id`` while it is live and its user exists, else None (a page login
    made from it is checked so at each request)."""
    return _live(Tokens(db, "").by_id(token_id))


def _live(found: TokenRow | None) -> TokenRow | None:
    if found is None or found.revoked_at is not None:
        return None
    if found.expires_at is not None and found.expires_at <= now_ts():
        return None
    return found


def mark_used(db: Backend, token: TokenRow) -> bool:
    """Record that ``token`` was used, unless that was recorded in the last few minutes."""
    if token.last_used_at is not None and token.last_used_at > ts_ago(seconds=USED_EVERY_S):
        return False
    with db.transaction() as tx:
        Tokens(db, "").used(tx, token.id, now_ts())
    return True


def listed(db: Backend, username: str | None = None) -> list[TokenRow]:
    """Every token (or one user's), newest first; never their secrets."""
    if username is None:
        return Tokens(db, "").listed()
    user = Users(db, "").by_name(check_text("username", username, limits.NAME))
    if user is None:
        raise NotFound(f"No user {username!r}; `bigmind user list` shows who exists.")
    return Tokens(db, "").listed(user.id)


def revoke(db: Backend, who: str) -> list[TokenRow]:
    """Revoke one token (by id) or every live token of a user (by name). Returns those revoked."""
    key = check_text("id", who, limits.NAME)
    everyone = Tokens(db, "").listed()
    chosen = [t for t in everyone if t.id == key] or [t for t in everyone if t.username == key]
    if not chosen:
        raise NotFound(
            f"No token with id {key!r} and no user {key!r} with tokens; "
            "`bigmind token list` shows them."
        )
    live = [t for t in chosen if t.revoked_at is None]
    with db.transaction() as tx:
        Tokens(db, "").revoke(tx, [t.id for t in live], now_ts())
    return live
