"""``bigmind recover``: salvage what SQLite can still read of a damaged memory into a new file
(:func:`bigmind.service.operations.recover`); with ``--replace``, swap it in and keep the
damaged one."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from bigmind.cli.main import load_settings, progress, setup_logging
from bigmind.errors import BigMindError, InvalidInput

if TYPE_CHECKING:
    from bigmind.service.operations import Recovery

POSTGRES = (
    "`bigmind recover` salvages a SQLite file; this memory is in PostgreSQL (BIGMIND_DB_URL), "
    "which checks and repairs its own pages. Restore it from your PostgreSQL backups "
    "(pg_dump / pg_restore, or your provider's snapshots), or ask its administrator; "
    "`bigmind export` copies what is readable into a file `bigmind import` takes back."
)


def recover_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--from", dest="source", help="the damaged file (default: BIGMIND_DB_PATH)")
    sp.add_argument(
        "--to", help="the new file (default: <name>.recovered-<time>.db beside the damaged one)"
    )
    sp.add_argument(
        "--replace",
        action="store_true",
        help="then put the recovered file in the damaged one's place, which is kept as "
        "<name>.corrupt-<time> (stop BigMind first)",
    )


def cmd_recover(args: argparse.Namespace) -> int:
    """Copy what is readable into a new file; say what was recovered and how to use it."""
    from bigmind.service import operations

    settings = load_settings()
    setup_logging(settings.log_level, settings.log_format)
    if settings.db_url and not args.source:
        raise BigMindError(POSTGRES)
    if args.replace and args.to:
        raise InvalidInput(
            "--replace puts the recovered file in the damaged one's place; drop --to."
        )
    source = Path(args.source).expanduser() if args.source else settings.db_path
    target = Path(args.to).expanduser() if args.to else None
    recovered = operations.recover(
        source, target, replace=args.replace, progress=progress("Copying tables")
    )
    done, kept = recovered.done, recovered.kept
    if args.json:
        print(json.dumps({**done.as_json(), "replaced": str(kept) if kept else None}, indent=1))
        return 0
    print(render(done))
    if kept is not None:
        print(
            f"Moved it into place: {source} is now the recovered memory; the damaged file is "
            f"kept as {kept}. "
            "Restart BigMind (your agents' MCP servers) so they open the new file."
        )
    else:
        print(
            f"To use it, stop BigMind (close the agents using it), then either set "
            f"BIGMIND_DB_PATH={done.target}, or run `bigmind recover --replace`, which recovers "
            f"again and puts the result in place of {source.name} (kept as "
            f"{source.name}.corrupt-<time>)."
        )
    return 0


def render(done: Recovery) -> str:
    """What was recovered, table by table (empty tables left out), and how."""
    how = (
        "every row: SQLite's VACUUM INTO read the whole file"
        if done.method == "vacuum"
        else "row by row, around the damaged pages"
    )
    lines = [f"Recovered {done.source} into {done.target} ({how}), in {done.seconds:.1f} s:"]
    shown = [t for t in done.tables if t.rows or t.gaps or t.lost]
    width = max((len(t.table) for t in shown), default=0)
    for t in shown:
        line = f"  {t.table:<{width}}  {t.rows:>8,} row{'' if t.rows == 1 else 's'}"
        if t.lost:
            line += f"  (unreadable: {t.lost})"
        elif t.gaps:
            line += f"  ({t.gaps} damaged stretch{'es' if t.gaps > 1 else ''} skipped)"
        lines.append(line)
    lines += [f"Note: {n}." for n in done.notes]
    lines.append(
        "The new file passed SQLite's quick_check and every full-text index check; "
        f"{done.source} was not changed."
    )
    return "\n".join(lines)
