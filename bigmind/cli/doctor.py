"""``bigmind doctor``: one line per check of the install, the settings and the database.

The checks of the install are :mod:`bigmind.service.checkup`'s (``ok``, ``warn``, ``fail``);
this command adds the profile page's port and the MCP clients' files, and prints the lot.
Doctor only reads: a database that does not exist yet is not created, one that does is not
migrated.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from bigmind.errors import BigMindError, InvalidInput
from bigmind.service.checkup import SKIPPED, Check, Status, run

if TYPE_CHECKING:
    from bigmind.config import Settings

MARKS: dict[Status, str] = {"ok": "✓", "warn": "!", "fail": "✗"}


def doctor_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--project", default=".", help="the project whose client files to check (default: .)"
    )
    sp.add_argument("--quick", action="store_true", help="do not load the embedding model")


def cmd_doctor(args: argparse.Namespace) -> int:
    """Run every check; exit 0 when none failed, 1 otherwise."""
    project = Path(args.project).expanduser()
    if not project.is_dir():
        raise InvalidInput(f"--project {args.project} is not a directory.")
    checks = run_checks(project.resolve(), quick=args.quick)
    if args.json:
        print(json.dumps(report(checks), ensure_ascii=False))
    else:
        width = max(len(c.name) for c in checks)
        for c in checks:
            print(f"{MARKS[c.status]} {c.name:<{width}} {c.detail}")
    return 0 if all_ok(checks) else 1


def all_ok(checks: list[Check]) -> bool:
    """True when no check failed (warnings are fine)."""
    return all(c.status != "fail" for c in checks)


def report(checks: list[Check]) -> dict[str, object]:
    """The ``--json`` document."""
    return {"ok": all_ok(checks), "checks": [asdict(c) for c in checks]}


def run_checks(project: Path, *, quick: bool = False) -> list[Check]:
    """Every check, in the order a fix would go: runtime, driver, settings, data, clients."""
    done = run(quick=quick)
    page = (
        check_profile_page(done.settings)
        if done.settings is not None
        else Check("profile page", "warn", SKIPPED)
    )
    return [*done.checks, page, check_clients(project)]


def check_profile_page(settings: Settings) -> Check:
    from bigmind.web.profile_server import port_status

    fine, detail = port_status(settings)
    return Check("profile page", "ok" if fine else "warn", detail)


# -- client files ---------------------------------------------------------------------------
def check_clients(project: Path) -> Check:
    """Which MCP client files carry BigMind: the user's own, and ``project``'s. Never a
    failure: clients can be configured by hand, and the server works without any of these."""
    from bigmind.cli.clients import installed_files
    from bigmind.cli.install import bigmind_checkout

    # BigMind's own clone is never a project to wire (install refuses it): name a placeholder.
    place = "DIR" if bigmind_checkout(project) else str(project)
    fix = (
        "`bigmind install --client NAME` (user level) or "
        f"`bigmind install --client NAME --project {place}`"
    )
    try:
        files = installed_files(project)
    except (BigMindError, OSError) as exc:
        return Check("clients", "warn", f"cannot read the client files: {exc}")
    outdated = [_named(f.client, f.path, project) for f in files if f.state == "outdated"]
    installed = [_named(f.client, f.path, project) for f in files if f.state == "installed"]
    broken = [
        f"{_named(f.client, f.path, project)} {f.state}"
        for f in files
        if f.state not in ("installed", "outdated", "absent")
    ]
    if broken:
        return Check("clients", "warn", "; ".join(broken))
    if outdated:
        return Check("clients", "warn", f"outdated: {', '.join(outdated)}; run {fix}")
    if installed:
        return Check("clients", "ok", f"installed: {', '.join(installed)}")
    return Check(
        "clients",
        "warn",
        f"no client carries BigMind, for your user or in {project}: run {fix}, "
        "or configure one by hand",
    )


def _named(client: str, path: Path, project: Path) -> str:
    return f"{client} ({path.relative_to(project) if path.is_relative_to(project) else path})"
