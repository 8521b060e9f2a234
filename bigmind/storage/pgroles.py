"""PostgreSQL roles: who BigMind connects as (docs/privacy-postgres.md, "Roles and what each
DSN reaches").

A superuser or a role with BYPASSRLS ignores row-level security, even ``FORCE``d: a server that
serves several users refuses one (:func:`refuse_unsafe_role`) unless told otherwise. The owner
role runs migrations and the cross-user work; a runtime role (:func:`runtime_grants`) only
reads and writes rows, cannot turn on the maintenance scope (it does not own the tables), and
may touch ``api_tokens`` only to mark a token used.
"""

from __future__ import annotations

import logging
import re

from bigmind.errors import BackendUnavailable, InvalidInput
from bigmind.storage.db import Backend, Tx

log = logging.getLogger(__name__)

ALLOW_SETTING = "BIGMIND_ALLOW_UNSAFE_DB_ROLE"
_ROLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_$-]{0,62}$")
_UNSAFE = (
    "SELECT current_user AS u, rolsuper OR rolbypassrls AS free"
    " FROM pg_roles WHERE rolname = current_user"
)


def unsafe_role(db: Backend) -> str | None:
    """The name of the session's role when it bypasses row-level security (superuser or
    BYPASSRLS), else None. SQLite: None."""
    if db.dialect != "postgresql":
        return None
    row = db.query(_UNSAFE)[0]
    return str(row["u"]) if row["free"] else None


def refuse_unsafe_role(db: Backend, *, allow: bool) -> None:
    """Raise :class:`BackendUnavailable` when ``db``'s role bypasses row-level security, unless
    ``allow`` (BIGMIND_ALLOW_UNSAFE_DB_ROLE): then a warning is logged and serving goes on."""
    role = unsafe_role(db)
    if role is None:
        return
    if allow:
        log.warning(
            "row-level security is NOT enforced: PostgreSQL role %r is a superuser or has "
            "BYPASSRLS, so every user's memory is open to any bug; serving anyway because "
            "%s=1 (docs/privacy-postgres.md)",
            role,
            ALLOW_SETTING,
        )
        return
    raise BackendUnavailable(
        f"Refusing to serve as PostgreSQL role {role!r}: it is a superuser or has BYPASSRLS, so "
        "row-level security would not apply. Set BIGMIND_DB_URL to a plain role (NOSUPERUSER "
        f"NOBYPASSRLS; docs/privacy-postgres.md), or set {ALLOW_SETTING}=1 to serve anyway."
    )


def _quoted(role: str) -> str:
    if not _ROLE.match(role):
        raise InvalidInput(f"Not a role name: {role!r} (letters, digits, _ $ -).")
    return f'"{role}"'


def runtime_grants(role: str, schema: str = "public") -> str:
    """The SQL that lets ``role`` serve requests, run by the owner of the tables: rows of
    every table (under row-level security), ``bigmind_migrations`` and ``api_tokens`` read
    only but ``api_tokens.last_used_at``; the same on tables the owner makes later."""
    r, s = _quoted(role), _quoted(schema)
    return f"""GRANT USAGE ON SCHEMA {s} TO {r};
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {s} TO {r};
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON bigmind_migrations, api_tokens FROM {r};
GRANT UPDATE (last_used_at) ON api_tokens TO {r};
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {s} TO {r};
ALTER DEFAULT PRIVILEGES IN SCHEMA {s} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {r};
ALTER DEFAULT PRIVILEGES IN SCHEMA {s} GRANT USAGE, SELECT ON SEQUENCES TO {r};"""


def grant_runtime(tx: Tx, role: str) -> str:
    """Apply :func:`runtime_grants` to this schema (as the owner); returns the SQL run. A role
    that would not be bound by row-level security, or could use the maintenance scope (it is,
    or is a member of, the tables' owner), is refused: it is no runtime role."""
    _quoted(role)
    found = tx.execute(
        "SELECT rolsuper OR rolbypassrls AS free, pg_has_role(rolname, (SELECT relowner"
        " FROM pg_class WHERE oid = to_regclass('users')), 'MEMBER') AS owns"
        " FROM pg_roles WHERE rolname = ?",
        (role,),
    )
    if not found:
        raise InvalidInput(f"No PostgreSQL role {role!r}: CREATE ROLE {role} LOGIN first.")
    if found[0]["free"] or found[0]["owns"]:
        raise InvalidInput(
            f"PostgreSQL role {role!r} is a superuser, has BYPASSRLS or owns BigMind's tables: "
            "the runtime role must be a plain role of its own (docs/privacy-postgres.md)."
        )
    schema = str(tx.execute("SELECT current_schema() AS s")[0]["s"])
    sql = runtime_grants(role, schema)
    tx.script(sql)
    return sql
