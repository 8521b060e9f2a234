"""The HTTP gateway's bearer tokens, checked: which user a BigMind token acts for, and whether
a page login made from one still holds. Digests only are stored (:mod:`bigmind.memory.tokens`);
a use is recorded at most every few minutes per token.
"""

from __future__ import annotations

from dataclasses import dataclass

from bigmind.memory import tokens
from bigmind.runtime import Runtime

__all__ = ["TOKEN_PREFIX", "Holder", "authenticate", "holds"]
TOKEN_PREFIX = tokens.PREFIX  # a BigMind token starts so; anything else may be an OIDC JWT


@dataclass(frozen=True, slots=True)
class Holder:
    """The user a live token acts for, and the token's id."""

    username: str
    token_id: str


def authenticate(rt: Runtime, secret: str) -> Holder | None:
    """The user the live BigMind token ``secret`` acts for (its use recorded), or None for
    an unknown, revoked or expired one. Read through the configured (service) user's store,
    which opens the database."""
    db = rt.store.db
    found = tokens.check(db, secret)
    if found is None:
        return None
    tokens.mark_used(db, found)
    return Holder(found.username, found.id)


def holds(rt: Runtime, token_id: str, username: str) -> bool:
    """Whether token ``token_id`` is still live and still ``username``'s (its use recorded)."""
    db = rt.store.db
    found = tokens.live(db, token_id)
    if found is None or found.username != username:
        return False
    tokens.mark_used(db, found)
    return True
