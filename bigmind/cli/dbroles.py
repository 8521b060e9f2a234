"""``bigmind db grant-runtime ROLE``: let a runtime role serve requests (docs/privacy-postgres.md).

Runs as the role that owns the tables (BIGMIND_DB_OWNER_URL, else BIGMIND_DB_URL); ``--sql``
prints the statements instead, for an operator who runs them in ``psql``.
"""

from __future__ import annotations

import argparse

from bigmind.cli.commands import actions, emit
from bigmind.cli.main import load_settings
from bigmind.errors import InvalidInput


def db_arguments(sp: argparse.ArgumentParser) -> None:
    action = actions(sp)
    grant = action(
        "grant-runtime",
        "Grant ROLE what the gateway needs on every table, and no more (run as the owner).",
        "bigmind db grant-runtime bigmind_runtime",
    )
    grant.add_argument("role", help="the runtime role (BIGMIND_DB_URL's user)")
    grant.add_argument("--sql", action="store_true", help="print the SQL, run nothing")


def cmd_db(args: argparse.Namespace) -> int:
    from bigmind.service import operations

    if args.sql:
        sql = operations.runtime_grants(args.role)
        emit(args, {"role": args.role, "sql": sql}, sql)
        return 0
    settings = load_settings()
    if not settings.db_url:
        raise InvalidInput("bigmind db grant-runtime needs PostgreSQL: set BIGMIND_DB_URL.")
    sql = operations.grant_runtime(settings, args.role)
    emit(
        args,
        {"role": args.role, "sql": sql},
        f"Granted {args.role} the runtime role's privileges. Point BIGMIND_DB_URL at it and "
        "BIGMIND_DB_OWNER_URL at the owner.",
    )
    return 0
