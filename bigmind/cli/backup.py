"""``bigmind backup PATH``: a consistent copy of the SQLite memory, taken while it is in use
(:func:`bigmind.service.operations.backup`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bigmind.cli.main import load_settings, setup_logging
from bigmind.errors import ExportError, NoMemoryYet


def backup_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("path", help="the backup file to write (its folder must exist)")
    sp.add_argument("--overwrite", action="store_true", help="replace an existing file")


def cmd_backup(args: argparse.Namespace) -> int:
    """Copy the database into one file; say where, how large, and how to restore it."""
    from bigmind.service import operations

    settings = load_settings()
    setup_logging(settings.log_level, settings.log_format)
    target = Path(args.path).expanduser().absolute()
    try:
        done = operations.backup(settings, target, overwrite=args.overwrite)
    except NoMemoryYet as exc:  # asked for a file and none is written: a failure
        raise ExportError(f"No memory yet at {exc.where}: nothing to back up.") from exc
    if args.json:
        data = {
            "source": str(done.source),
            "path": str(done.target),
            "pages": done.pages,
            "bytes": done.bytes,
            "seconds": round(done.seconds, 3),
        }
        print(json.dumps(data, indent=1))
        return 0
    print(
        f"Backed up {done.source} to {done.target}: {done.bytes / 1e6:.1f} MB, {done.pages:,} "
        f"pages, quick_check ok, in {done.seconds:.1f} s.\n"
        "To restore: stop BigMind (close the agents using it), then copy it over "
        f"{done.source} — or point BIGMIND_DB_PATH at a copy of it."
    )
    return 0
