"""``bigmind import-md`` and ``bigmind mirror``: a project's memory in and out of Markdown.

The work is in :mod:`bigmind.memory.markdown` and :mod:`bigmind.memory.mirror`; these
commands open the store, run in the project ``--project`` names (the current directory's by
default), and print what was done (JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bigmind import project
from bigmind.cli.commands import emit
from bigmind.cli.main import runtime
from bigmind.errors import BigMindError

if TYPE_CHECKING:
    from bigmind.runtime import Runtime
    from bigmind.search.semantic import Semantic

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


def _project(rt: Runtime, value: str | None) -> project.Project | None:
    """The project a command runs in: the one ``--project`` names, else the process's."""
    return rt.store.find_project(value) if value else rt.store.project


def _semantic(rt: Runtime) -> Semantic | None:
    """The model, for the paraphrase check; without one, identical texts are still found
    (and the running server checks the new facts for paraphrases later)."""
    from bigmind.search.semantic import Semantic

    sem = Semantic(rt.store.db, rt.settings)
    if sem.status().state == "off":
        return None
    try:
        sem.load_now()
    except BigMindError as exc:
        print(f"bigmind: exact duplicates only: {exc.message_for('cli')}", file=sys.stderr)
        return None
    return sem


def cmd_import_md(args: argparse.Namespace) -> int:
    from bigmind.memory import markdown

    parsed = markdown.read_all(args.files)  # a file that cannot be read: nothing is made
    rt = runtime(create=True)
    try:
        where = _project(rt, args.project)
        with project.using(where):
            report = markdown.import_files(rt.store, _semantic(rt), parsed)
    finally:
        rt.close()
    data = {
        "files": report.files,
        "project": where.key if where else None,
        "added": report.added,
        "known": report.known,
        "skipped": dict(report.skipped),
    }
    emit(args, data, f"Imported {', '.join(report.files)}: {report.summary()}.")
    return 0


def cmd_mirror(args: argparse.Namespace) -> int:
    from bigmind.memory import mirror

    rt = runtime()
    try:
        where = _project(rt, args.project)
        path = args.output or mirror.default_path(rt.settings.data_dir, where)
        with project.using(where):
            if args.pull:
                pulled = mirror.pull(rt.store, _semantic(rt), path)
            else:
                written = mirror.write(rt.store, path)
    finally:
        rt.close()
    data: dict[str, object]
    if args.pull:
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
        "path": str(path),
        "facts": written.facts,
        "hypotheses": written.hypotheses,
        "sessions": written.sessions,
    }
    emit(
        args,
        data,
        f"Wrote {path}: {written.facts} facts, {written.hypotheses} open hypotheses, "
        f"{written.sessions} recent sessions. Edit it, then: bigmind mirror --pull",
    )
    return 0
