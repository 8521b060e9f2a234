"""The users of one database and their roles (member, curator, admin).

Plain functions over a :class:`~bigmind.storage.db.Backend`, so the ``bigmind user`` command and,
later, team-mode tools share one set of rules: roles are a fixed list, only an admin
changes users, and the last admin cannot lose the role (nobody could give it back). The SQL
lives in :class:`~bigmind.storage.users_table.Users`.
"""

from __future__ import annotations

from bigmind import limits
from bigmind.errors import Forbidden, InvalidInput, NotFound
from bigmind.limits import check_text
from bigmind.models import User, now_ts
from bigmind.storage.db import Backend
from bigmind.storage.users_table import Users

ROLES = ("member", "curator", "admin")


def check_role(role: str) -> str:
    """The role in canonical form.

    Raises:
        InvalidInput: it is not one of :data:`ROLES`.
    """
    r = (role or "").strip().lower()
    if r not in ROLES:
        raise InvalidInput(f"Unknown role {role!r}; use one of: {', '.join(ROLES)}.")
    return r


CURATORS = ("curator", "admin")


def is_curator(user: User) -> bool:
    """Whether the user may curate shared knowledge (a curator or an admin)."""
    return (user.role or "member") in CURATORS


def require_curator(user: User, action: str) -> None:
    """Refuse ``action`` to anyone who is neither curator nor admin.

    Raises:
        Forbidden: naming the user's role and how an admin grants the curator role.
    """
    if not is_curator(user):
        raise Forbidden(
            f"Only a curator or admin can {action}; {user.username!r} is a "
            f"{user.role or 'member'}. An admin can grant the role: "
            f"`bigmind user set-role {user.username} curator`."
        )


def acting_admin(db: Backend, username: str) -> tuple[Backend, User | None]:
    """The database as ``username`` administering users (``bigmind user``), and who that is
    for :func:`add_user` / :func:`set_role`'s ``by``. While the database has no admin, anyone
    who reaches it may make the first one (``by`` None); PostgreSQL checks the same.

    Raises:
        Forbidden: an admin exists and ``username`` is not a user of this database.
    """
    table = Users(db, "")
    me = table.by_name(username)
    acting = db if me is None else db.for_user(me.id)
    if not table.count_admins():
        return acting, None
    if me is None:
        raise Forbidden(
            f"Only an admin can change users; {username!r} (BIGMIND_USER) is not a user of "
            "this database. Run the command as an admin."
        )
    return acting, me


def list_users(db: Backend) -> list[User]:
    """Every user of the database, admins first, then by name."""
    return Users(db, "").all()


def get_user(db: Backend, username: str) -> User:
    """One user by name.

    Raises:
        NotFound: no user has that name.
    """
    name = check_text("username", username, limits.NAME)
    user = Users(db, "").by_name(name)
    if user is None:
        raise NotFound(f"No user {name!r}; `bigmind user list` shows who exists.")
    return user


def add_user(db: Backend, username: str, role: str = "member", *, by: User | None = None) -> User:
    """Register a user with a role.

    Args:
        by: who asks; when given, must be an admin.

    Raises:
        InvalidInput: bad name or role, or the user exists already.
        Forbidden: ``by`` is not an admin.
    """
    name = check_text("username", username, limits.NAME)
    r = check_role(role)
    _require_admin(by)
    table = Users(db, "")
    with db.transaction() as tx:
        tx.lock_shared()  # shared rows: one writer of them at a time
        have = table.by_name(name, tx)
        if have is not None:
            raise InvalidInput(
                f"User {name!r} already exists (role {have.role}); "
                f"change the role with `bigmind user set-role {name} ROLE`."
            )
        table.add(tx, name, r, now_ts())
        return _present(table.by_name(name, tx))


def set_role(db: Backend, username: str, role: str, *, by: User | None = None) -> tuple[User, str]:
    """Give a user another role. Returns the updated user and the role it had.

    Args:
        by: who asks; when given, must be an admin.

    Raises:
        InvalidInput: bad role.
        NotFound: no such user.
        Forbidden: ``by`` is not an admin, or this would leave the database without an admin.
    """
    name = check_text("username", username, limits.NAME)
    r = check_role(role)
    _require_admin(by)
    table = Users(db, "")
    with db.transaction() as tx:
        tx.lock_shared()  # shared rows: one writer of them at a time
        user = table.by_name(name, tx)
        if user is None:
            raise NotFound(f"No user {name!r}; add it with `bigmind user add {name} --role {r}`.")
        before = user.role
        if before == "admin" and r != "admin" and table.count_admins(tx) <= 1:
            raise Forbidden(
                f"{name!r} is the last admin; make another user admin first "
                "(`bigmind user set-role NAME admin`)."
            )
        if before != r:
            table.set_role(tx, name, r)
        return _present(table.by_name(name, tx)), before


def _require_admin(by: User | None) -> None:
    if by is not None and by.role != "admin":
        raise Forbidden(f"Only an admin can change users; {by.username!r} is a {by.role}.")


def _present(user: User | None) -> User:
    """A user just read back inside the transaction that wrote it."""
    assert user is not None
    return user
