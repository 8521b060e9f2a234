"""``bigmind scan-secrets``: find secrets stored in the database and redact them in place."""

from __future__ import annotations

import argparse

from bigmind.cli.commands import emit
from bigmind.cli.main import load_settings, progress


def scan_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--dry-run",
        action="store_true",
        help="only count what would be redacted; change nothing",
    )


def cmd_scan_secrets(args: argparse.Namespace) -> int:
    """Scan every user's memory (all tables, deprecated rows too); redact unless --dry-run.

    Prints counts per table and kind, never a secret. Whoever can reach the database may run
    it (as ``bigmind user``): it changes text, not who owns what.
    """
    from bigmind import redact
    from bigmind.service import operations

    scanned = operations.scan_secrets(
        load_settings(), apply=not args.dry_run, progress=progress("Scanning tables")
    )
    report, where = scanned.report, scanned.location
    lines = []
    width = max((len(t) for t in report.found), default=0)
    for table, found in report.found.items():
        kinds = ", ".join(redact.label(k, n) for k, n in found.most_common())
        lines.append(f"  {table:<{width}}  {report.rows[table]} row(s): {kinds}")
    if not report.total:
        head = f"No stored secrets found in {where}."
    elif report.applied:
        head = (
            f"Redacted {report.total} secret(s) in {sum(report.rows.values())} row(s) of"
            f" {where}; their vectors were dropped and are made again from the redacted text."
        )
    else:
        head = (
            f"Found {report.total} secret(s) in {sum(report.rows.values())} row(s) of {where}"
            " (dry run: nothing changed; run without --dry-run to redact them)."
        )
    emit(args, {"location": where, **report.as_dict()}, "\n".join([head, *lines]))
    return 0
