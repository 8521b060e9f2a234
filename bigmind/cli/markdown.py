"""``bigmind import-md`` and ``bigmind mirror``: a project's memory in and out of Markdown.

The work is in :mod:`bigmind.service.portability`; these commands open the runtime, name the
project ``--project`` gives (the current directory's by default), and print what was done
(JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bigmind.cli.commands import emit
from bigmind.cli.main import runtime
from bigmind.errors import BigMindError

PROJECT_HELP = (
    "the project: a folder, a project key or a known project's name (default: the current "
    "directory's git repository, else BIGMIND_PROJECT)"
)


def import_md_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "files",
        nargs="+",
        type=Path,
        help="CLAUDE.md, AGENTS.md, .cursorrules, .github/copilot-instructions.md, MEMORY.md…",
    )
    sp.add_argument("--project", help=PROJECT_HELP)


def mirror_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--project", help=PROJECT_HELP)
    sp.add_argument(
        "--output", "-o", type=Path, help="the file (default: <data dir>/mirrors/<project>.md)"
    )
    sp.add_argument(
        "--pull",
        action="store_true",
        help="apply your edits of the file to memory (changed line: update; deleted: "
        "deprecate; new line: add), then write it again",
    )


def _exact_only(exc: BigMindError) -> None:
    """No model for the paraphrase check: identical texts are still found (and the running
    server checks the new facts for paraphrases later)."""
    print(f"bigmind: exact duplicates only: {exc.message_for('cli')}", file=sys.stderr)


def cmd_import_md(args: argparse.Namespace) -> int:
    from bigmind.service import portability

    rt = runtime(create=True)  # made only once every file was read
    try:
        done = portability.import_markdown(rt, args.files, args.project, without_model=_exact_only)
    finally:
        rt.close()
    report = done.report
    data = {
        "files": report.files,
        "project": done.project,
        "added": report.added,
        "known": report.known,
        "skipped": dict(report.skipped),
    }
    emit(args, data, f"Imported {', '.join(report.files)}: {report.summary()}.")
    return 0


def cmd_mirror(args: argparse.Namespace) -> int:
    from bigmind.service import portability

    rt = runtime()
    try:
        if args.pull:
            done = portability.pull_mirror(rt, args.project, args.output, without_model=_exact_only)
        else:
            written = portability.write_mirror(rt, args.project, args.output)
    finally:
        rt.close()
    data: dict[str, object]
    if args.pull:
        path, pulled = done.path, done.pulled
        data = {
            "path": str(path),
            "updated": pulled.updated,
            "deprecated": pulled.deprecated,
            "added": pulled.added,
            "known": pulled.known,
            "left": pulled.left,
        }
        notes = "".join(f"\n  left alone: {x}" for x in pulled.left)
        emit(args, data, f"Applied {path}: {pulled.summary()}.{notes}")
        return 0
    data = {
        "path": str(written.path),
        "facts": written.facts,
        "hypotheses": written.hypotheses,
        "sessions": written.sessions,
    }
    emit(
        args,
        data,
        f"Wrote {written.path}: {written.facts} facts, {written.hypotheses} open hypotheses, "
        f"{written.sessions} recent sessions. Edit it, then: bigmind mirror --pull",
    )
    return 0
