"""``bigmind migrate-db``: copy a SQLite memory into PostgreSQL
(:func:`bigmind.service.operations.migrate_db`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bigmind.cli.main import load_settings, progress, setup_logging
from bigmind.config import redact
from bigmind.errors import InvalidInput, NotFound


def migrate_db_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--to", required=True, metavar="URL", help="the PostgreSQL database (postgresql://…)"
    )
    sp.add_argument(
        "--from",
        dest="source",
        metavar="PATH",
        help="the SQLite file to copy (default: BIGMIND_DB_PATH)",
    )


def cmd_migrate_db(args: argparse.Namespace) -> int:
    """Copy a SQLite memory into PostgreSQL, verify it, print the counts."""

    url = str(args.to).strip()
    if not url.startswith(("postgresql://", "postgres://")):
        raise InvalidInput(
            f"--to must be a PostgreSQL URL (postgresql://user:password@host:5432/db), "
            f"got {redact(url)!r}."
        )
    if args.source:
        path = Path(args.source).expanduser()
        setup_logging("WARNING")
    else:
        settings = load_settings()
        setup_logging(settings.log_level)
        path = settings.db_path
    if not path.is_file():
        raise NotFound(
            f"No SQLite database at {path}: nothing to migrate (nothing was created). "
            "Pass --from PATH, or set BIGMIND_DB_PATH."
        )
    from bigmind.service import operations

    done = operations.migrate_db(path, url, progress)
    if args.json:
        print(json.dumps(done.report.as_json(), indent=1))
    else:
        print(done.text)
    sys.stdout.flush()
    if done.failure is not None:
        raise done.failure
    return 0
