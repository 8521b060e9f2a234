"""The database's users and the HTTP gateway's bearer tokens, handled as the configured user.

Users (:mod:`bigmind.memory.users`): anyone may list them; adding one or changing a role
needs an admin once the database has one (PostgreSQL checks it too). Tokens
(:mod:`bigmind.memory.api_tokens`): anyone may make, list and revoke their own; another user's,
or everyone's, need an admin (until the database has one, anyone). Each function opens the
database, does one thing and closes it: the command line runs without a server. The gateway
checks a bearer token through its runtime (:func:`authenticate`, :func:`holds`): digests only
are stored, and a use is recorded at most every few minutes per token.
"""

from __future__ import annotations

from dataclasses import dataclass

from bigmind.config import Settings
from bigmind.errors import Forbidden
from bigmind.memory import api_tokens
from bigmind.memory import users as roles
from bigmind.memory.api_tokens import Made
from bigmind.models import User
from bigmind.runtime import Runtime
from bigmind.storage.api_tokens_table import TokenRow
from bigmind.storage.connect import open_database
from bigmind.storage.db import Backend

__all__ = [
    "TOKEN_PREFIX",
    "Holder",
    "Made",
    "TokenRow",
    "add_user",
    "authenticate",
    "create_token",
    "holds",
    "list_tokens",
    "list_users",
    "revoke_tokens",
    "set_role",
]
TOKEN_PREFIX = api_tokens.PREFIX  # a BigMind token starts so; anything else may be an OIDC JWT


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
    found = api_tokens.check(db, secret)
    if found is None:
        return None
    api_tokens.mark_used(db, found)
    return Holder(found.username, found.id)


def holds(rt: Runtime, token_id: str, username: str) -> bool:
    """Whether token ``token_id`` is still live and still ``username``'s (its use recorded)."""
    db = rt.store.db
    found = api_tokens.live(db, token_id)
    if found is None or found.username != username:
        return False
    api_tokens.mark_used(db, found)
    return True


def list_users(settings: Settings) -> list[User]:
    """Every user of the database with their role (no database: NoMemoryYet, none made)."""
    db = open_database(settings, create=False)
    try:
        return roles.list_users(db)
    finally:
        db.close()


def add_user(settings: Settings, username: str, role: str = "member") -> User:
    """Register ``username`` with ``role``, as the configured user.

    Raises:
        Forbidden: an admin exists and the configured user is not one.
        InvalidInput: a bad name or role, or a user already there.
    """
    db = open_database(settings)
    try:
        acting, me = roles.acting_admin(db, settings.user)
        return roles.add_user(acting, username, role, by=me)
    finally:
        db.close()


def set_role(settings: Settings, username: str, role: str) -> tuple[User, str]:
    """Give ``username`` ``role``, as the configured user: the user, and their role before.

    Raises:
        Forbidden: an admin exists and the configured user is not one.
        NotFound: no such user.
        InvalidInput: a bad role, or the last admin losing the role.
    """
    db = open_database(settings)
    try:
        acting, me = roles.acting_admin(db, settings.user)
        return roles.set_role(acting, username, role, by=me)
    finally:
        db.close()


def create_token(
    settings: Settings, username: str, *, days: int | None = None, label: str | None = None
) -> Made:
    """A new token for ``username`` (added as a member if new), valid ``days`` days (None:
    no expiry); its secret is in the result, and nowhere else.

    Raises:
        Forbidden: another user's token, and the configured user is not an admin.
    """
    db = _tokens_db(settings, create=True)
    try:
        _may_handle(db, settings.user, username, "create")
        return api_tokens.create(db, username, days=days, label=label)
    finally:
        db.close()


def list_tokens(settings: Settings, username: str | None = None) -> list[TokenRow]:
    """``username``'s tokens (None: everyone's), never their secrets.

    Raises:
        Forbidden: not only the configured user's own, and they are not an admin.
    """
    db = _tokens_db(settings, create=False)
    try:
        _may_handle(db, settings.user, username, "list")
        return api_tokens.listed(db, username)
    finally:
        db.close()


def revoke_tokens(settings: Settings, who: str) -> list[TokenRow]:
    """Revoke the token with id ``who``, or every token of user ``who``; those revoked now.

    Raises:
        Forbidden: not the configured user's own, and they are not an admin.
        NotFound: no such token or user.
    """
    db = _tokens_db(settings, create=False)
    try:
        _may_handle(db, settings.user, who, "revoke")
        return api_tokens.revoke(db, who)
    finally:
        db.close()


def _tokens_db(settings: Settings, *, create: bool) -> Backend:
    # api_tokens is the owner role's to write (BIGMIND_DB_OWNER_URL, when set).
    return open_database(settings, create=create, owner=True)


def _may_handle(db: Backend, username: str, target: str | None, action: str) -> None:
    """Another user's tokens (or everyone's) are an admin's to handle."""
    if target == username:
        return
    _, me = roles.acting_admin(db, username)
    if me is not None and me.role != "admin":
        raise Forbidden(
            f"Only an admin can {action} other users' tokens; {username!r} (BIGMIND_USER) is a "
            f"{me.role}. Run the command as an admin, or for your own tokens."
        )
