"""The ``bigmind`` command line. Errors are one clear line and a non-zero exit code."""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

# One BLAS thread, set before numpy loads OpenBLAS: a vector search's matrix-vector product
# takes ~0.05 ms on one thread, while waking OpenBLAS's second thread on a busy 2-core machine
# made its p95 44-52 ms (bench/README.md, "Peers"). Searches already run side by side in
# threads. An explicit setting is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from bigmind import __version__
from bigmind.errors import BigMindError, ExportError, NoMemoryYet

if TYPE_CHECKING:
    from bigmind.config import Settings
    from bigmind.runtime import Runtime
    from bigmind.service.embedding import Loaded


def load_settings() -> Settings:
    from pydantic import ValidationError

    from bigmind.config import Settings

    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        if not first["loc"]:  # a rule across settings names them in its message
            raise BigMindError(f"Invalid settings: {first['msg']}") from exc
        name = "BIGMIND_" + str(first["loc"][0]).upper()
        raise BigMindError(f"Invalid setting {name}: {first['msg']}") from exc


def setup_logging(level: str, fmt: str = "text") -> None:
    """Log lines at ``level`` and above on stderr (stdout is the JSON-RPC channel in stdio
    mode), as text or, with ``fmt="json"`` (BIGMIND_LOG_FORMAT), one JSON object per line;
    redacted either way (:mod:`bigmind.cli.logs`)."""
    from bigmind.cli.logs import formatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(fmt))
    logging.basicConfig(level=getattr(logging, level.upper(), logging.WARNING), handlers=[handler])


def runtime(settings: Settings | None = None, *, create: bool = False) -> Runtime:
    """The store for a one-shot command (no background embedding). Only commands that store
    something pass ``create``: the others raise NoMemoryYet where there is no memory yet,
    and make no file or folder."""
    from bigmind.runtime import Runtime

    settings = settings or load_settings()
    setup_logging(settings.log_level, settings.log_format)
    return Runtime(settings, create=create)


def foreground_recall(rt: Runtime) -> Loaded:
    """The model for a one-shot command's hybrid recall, loaded in this thread; without one
    (off, not exported, another model's vectors) the search is keyword-only and says so."""
    from bigmind.service import embedding

    loaded = embedding.load(rt)
    if loaded.error is not None:
        print(f"bigmind: keyword search only: {loaded.error.message_for('cli')}", file=sys.stderr)
    return loaded


def cmd_export(args: argparse.Namespace) -> int:
    """Write the configured user's memory to a JSON file."""
    from bigmind.service import portability

    rt = runtime()
    try:
        done = portability.export_json(
            rt,
            args.output,
            overwrite=args.overwrite,
            confined=False,
            progress=progress("Exporting tables"),
        )
    except NoMemoryYet as exc:  # asked for a file and none is written: a failure
        raise ExportError(f"No memory yet at {exc.where}: nothing to export.") from exc
    finally:
        rt.close()
    if args.json:
        print(json.dumps({"path": str(done.path), "rows": done.rows}, indent=1))
    else:
        rows = ", ".join(f"{n} {k}" for k, n in done.rows.items() if n) or "no rows"
        print(f"Exported to {done.path}: {rows}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Merge an export file into the configured user's memory."""
    from bigmind.service import portability

    rt = runtime(create=True)
    try:
        done = portability.import_json(rt, args.path, args.mode, progress("Importing rows"))
    finally:
        rt.close()
    path, report = done.path, done.report
    if args.json:
        data = {
            "path": str(path),
            "source_user": report.source_user,
            "added": report.added,
            "skipped": report.skipped,
        }
        print(json.dumps(data, indent=1, ensure_ascii=False))
        return 0
    added = ", ".join(f"{n} {k}" for k, n in report.added.items() if n) or "nothing new"
    print(f"Imported from {path}: {added}.")
    return 0


def progress(label: str, unit: str = "") -> Callable[[int, int], None]:
    """A one-line progress bar on stderr (stdout stays clean for scripts), drawn only when
    stderr is a terminal: in a log or a pipe, carriage returns are noise. ``unit="MB"``
    counts bytes, shown in megabytes."""
    started = time.monotonic()
    if not sys.stderr.isatty():
        return _quiet
    scale = 1e6 if unit == "MB" else 1.0
    fmt = ".1f" if unit == "MB" else ".0f"
    suffix = f" {unit}" if unit else ""

    def show(done: int, total: int) -> None:
        total = max(total, done, 1)
        width = 30
        filled = int(width * done / total)
        rate = done / max(time.monotonic() - started, 1e-6) / scale
        bar = "█" * filled + "·" * (width - filled)
        end = "\n" if done >= total else ""
        count = f"{done / scale:{fmt}}/{total / scale:{fmt}}{suffix}"
        print(
            f"\r{label} [{bar}] {count} ({rate:{fmt}}{suffix}/s)",
            end=end,
            file=sys.stderr,
            flush=True,
        )

    return show


def _quiet(done: int, total: int) -> None:
    """Progress not shown (stderr is no terminal)."""


def cmd_reindex(args: argparse.Namespace) -> int:
    """Embed every memory again with the configured model (after changing it)."""
    from bigmind.service import embedding

    rt = runtime()
    try:
        done = embedding.reindex(rt, progress("Embedding"))
    finally:
        rt.close()
    if args.json:
        print(json.dumps({"embedded": done.embedded, "model": done.model}))
    else:
        print(f"Re-embedded {done.embedded} memories with {done.model}.")
    return 0


def cmd_version(args: argparse.Namespace) -> int:
    """Print the version."""
    print(json.dumps({"version": __version__}) if args.json else f"bigmind {__version__}")
    return 0


@dataclass(frozen=True)
class Command:
    """One ``bigmind`` command: what runs, its one-line help, an example, and its arguments.

    ``run`` and ``arguments`` are callables or ``"module:function"`` names imported on use, so
    ``bigmind --help`` stays fast and a command's module loads only when it runs.
    """

    run: Callable[[argparse.Namespace], int] | str
    help: str
    example: str
    arguments: Callable[[argparse.ArgumentParser], None] | str | None = None
    json: bool = False  # takes --json
    stores: bool = False  # writes text to memory: what it redacted is said on stderr


def _resolve(ref: Callable[..., object] | str) -> Callable[..., object]:
    if callable(ref):
        return ref
    module, _, name = ref.partition(":")
    fn: Callable[..., object] = getattr(importlib.import_module(module), name)
    return fn


def _export_args(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--output", "-o", help="target file (default: <data dir>/exports/…)")
    sp.add_argument("--overwrite", action="store_true", help="replace an existing file")


def _import_args(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("path", help="an export file")
    sp.add_argument("--mode", default="merge", choices=["merge"], help="how to combine")


COMMANDS: dict[str, Command] = {
    "serve": Command(
        "bigmind.cli.serve:cmd_serve",
        "Start the MCP server on stdio, or with --http the gateway for many users.",
        "bigmind serve\n         bigmind serve --http --host 0.0.0.0 --port 8700",
        "bigmind.cli.serve:serve_arguments",
    ),
    "install": Command(
        "bigmind.cli.install:cmd_install",
        "Wire BigMind into MCP clients (instruction files, client configs, Claude Code hooks): "
        "for your user, or with --project in that project's files.",
        "bigmind install --client all   # user level; --project ~/src/app for one project",
        "bigmind.cli.install:install_arguments",
        json=True,
    ),
    "uninstall": Command(
        "bigmind.cli.install:cmd_uninstall",
        "Remove exactly what `bigmind install` added (your own edits stay).",
        "bigmind uninstall --client all --project ~/src/app",
        "bigmind.cli.install:uninstall_arguments",
        json=True,
    ),
    "context": Command(
        "bigmind.cli.hooks:cmd_context",
        "Print the bootstrap context packet for the configured user.",
        "BIGMIND_USER=alice bigmind context",
        "bigmind.cli.hooks:context_arguments",
        json=True,
    ),
    "close": Command(
        "bigmind.cli.hooks:cmd_close",
        "Close the configured user's open sessions with an automatic one-liner.",
        "bigmind close --hook   # Claude Code SessionEnd hook: JSON on stdin",
        "bigmind.cli.hooks:close_arguments",
        json=True,
        stores=True,
    ),
    "export": Command(
        cmd_export,
        "Back up the configured user's memory to a JSON file.",
        "bigmind export --output ~/bigmind-backup.json",
        _export_args,
        json=True,
    ),
    "import": Command(
        cmd_import,
        "Merge a file written by export into the configured user's memory (idempotent).",
        "bigmind import ~/bigmind-backup.json",
        _import_args,
        json=True,
        stores=True,
    ),
    "import-md": Command(
        "bigmind.cli.markdown:cmd_import_md",
        "Read the bullet memories of CLAUDE.md, AGENTS.md, .cursorrules… into project facts "
        "(deduplicated; again adds nothing).",
        "bigmind import-md CLAUDE.md .github/copilot-instructions.md --project ~/src/app",
        "bigmind.cli.markdown:import_md_arguments",
        json=True,
        stores=True,
    ),
    "mirror": Command(
        "bigmind.cli.markdown:cmd_mirror",
        "Write the project's memory to a Markdown file you can read and edit; --pull applies "
        "your edits.",
        "bigmind mirror --project ~/src/app   # edit the file, then: bigmind mirror --pull",
        "bigmind.cli.markdown:mirror_arguments",
        json=True,
        stores=True,
    ),
    "model": Command(
        "bigmind.cli.model:cmd_model",
        "Get the embedding model (all-MiniLM-L6-v2) for semantic search: fetch it, or export it.",
        "bigmind model fetch    # the ready ONNX model from the hub (or --url a mirror)\n"
        "         bigmind model export   # offline: build it from a local copy (bigmind[export])",
        "bigmind.cli.model:model_arguments",
    ),
    "reindex": Command(
        cmd_reindex,
        "Re-embed every memory with the configured model (after changing BIGMIND_EMBED_MODEL).",
        "bigmind reindex",
        json=True,
    ),
    "doctor": Command(
        "bigmind.cli.doctor:cmd_doctor",
        "Check the install: driver, sqlite-vec, embedder, database, settings, client files.",
        "bigmind doctor --project ~/src/app",
        "bigmind.cli.doctor:doctor_arguments",
        json=True,
    ),
    "backup": Command(
        "bigmind.cli.backup:cmd_backup",
        "Copy the SQLite memory into one file while it is in use (WAL included, checked).",
        "bigmind backup ~/backups/bigmind-$(date +%F).db",
        "bigmind.cli.backup:backup_arguments",
        json=True,
    ),
    "recover": Command(
        "bigmind.cli.recover:cmd_recover",
        "Salvage what SQLite can read of a damaged memory file into a new one (the old is kept).",
        "bigmind recover   # then: bigmind recover --replace, or set BIGMIND_DB_PATH",
        "bigmind.cli.recover:recover_arguments",
        json=True,
    ),
    "search": Command(
        "bigmind.cli.commands:cmd_search",
        "Keyword search of the configured user's memory (fast: no model).",
        'bigmind search "test runner" --kind facts --limit 5',
        "bigmind.cli.commands:search_arguments",
        json=True,
    ),
    "recall": Command(
        "bigmind.cli.commands:cmd_recall",
        "Hybrid recall as memory_recall: keyword and meaning matches fused, with why.",
        "bigmind recall which message broker did we choose --kinds fact,chunk",
        "bigmind.cli.commands:recall_arguments",
        json=True,
    ),
    "forget": Command(
        "bigmind.cli.forget:cmd_forget",
        "Delete one memory for good (rows, index entries, vectors, history); no undo.",
        "bigmind forget fact 42 --reason 'pasted a token'",
        "bigmind.cli.forget:forget_arguments",
        json=True,
    ),
    "purge": Command(
        "bigmind.cli.forget:cmd_purge",
        "Find every memory containing a text (any case), list it, and forget it all once confirmed.",
        "bigmind purge --match 'AKIA' --dry-run",
        "bigmind.cli.forget:purge_arguments",
        json=True,
    ),
    "stats": Command(
        "bigmind.cli.commands:cmd_stats",
        "Counts per tier, facts per category, database size, calibration, token savings.",
        "bigmind stats --json",
        json=True,
    ),
    "user": Command(
        "bigmind.cli.commands:cmd_user",
        "List the database's users, add one, or change a role (member, curator, admin).",
        "bigmind user list\n"
        "         bigmind user add bob --role curator\n"
        "         bigmind user set-role bob admin",
        "bigmind.cli.commands:user_arguments",
        json=True,
    ),
    "directory": Command(
        "bigmind.cli.directory:cmd_directory",
        "The MegaMind directory: everyone's card, who worked on a topic; hide or show yours.",
        "bigmind directory kafka   # who worked on it; --hide / --show your card",
        "bigmind.cli.directory:directory_arguments",
        json=True,
    ),
    "token": Command(
        "bigmind.cli.token:cmd_token",
        "Bearer tokens for `bigmind serve --http`: create one (shown once), list, revoke.",
        "bigmind token create alice --expires 90\n"
        "         bigmind token list\n"
        "         bigmind token revoke alice",
        "bigmind.cli.token:token_arguments",
        json=True,
    ),
    "db": Command(
        "bigmind.cli.dbroles:cmd_db",
        "PostgreSQL roles: grant a runtime role what the gateway needs (run as the owner).",
        "bigmind db grant-runtime bigmind_runtime",
        "bigmind.cli.dbroles:db_arguments",
        json=True,
    ),
    "migrate-db": Command(
        "bigmind.cli.migrate:cmd_migrate_db",
        "Copy a personal SQLite memory (all users, tiers, vectors) into PostgreSQL; resumable.",
        "bigmind migrate-db --to postgresql://bigmind@db.example.com/bigmind",
        "bigmind.cli.migrate:migrate_db_arguments",
        json=True,
    ),
    "consolidate": Command(
        "bigmind.cli.consolidate:cmd_consolidate",
        "Merge duplicate facts, link contradictions, retire stale low-value facts from the packet.",
        "bigmind consolidate --stale-days 90",
        "bigmind.cli.consolidate:consolidate_arguments",
        json=True,
    ),
    "scan-secrets": Command(
        "bigmind.cli.secrets:cmd_scan_secrets",
        "Find secrets stored in the database (every user's memory) and redact them in place.",
        "bigmind scan-secrets --dry-run",
        "bigmind.cli.secrets:scan_arguments",
        json=True,
    ),
    "web": Command(
        "bigmind.cli.web:cmd_web",
        "Serve your profile page (stats, activity, facts, curation) on 127.0.0.1:BIGMIND_PORT.",
        "bigmind web --open",
        "bigmind.cli.web:web_arguments",
    ),
    "version": Command(cmd_version, "Print the installed version.", "bigmind version", json=True),
}


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser. With ``only``, just that command gets its arguments: the other
    commands' modules are not imported (a hook or ``--help`` starts faster)."""
    p = argparse.ArgumentParser(
        prog="bigmind",
        description="BigMind: persistent memory for AI coding agents (an MCP server).",
        epilog="Settings come from BIGMIND_* environment variables; see the README.",
    )
    p.add_argument("--version", action="version", version=f"bigmind {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, c in COMMANDS.items():
        sp = sub.add_parser(
            name,
            help=c.help,
            description=c.help,
            epilog=f"example: {c.example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if c.arguments is not None and name == only:
            _resolve(c.arguments)(sp)
        if c.json:
            sp.add_argument("--json", action="store_true", help="machine-readable output")
        sp.set_defaults(func=c.run)
    return p


def _run(args: argparse.Namespace) -> object:
    """Run the command; one that stores text says on stderr what it redacted (never the
    secret itself)."""
    run = _resolve(args.func)
    if not COMMANDS[args.command].stores:
        return run(args)
    from bigmind import redact

    with redact.collecting() as found:
        code = run(args)
    if found:
        print(f"bigmind: {redact.describe(found)}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    args = parser(command).parse_args(argv)
    if not getattr(args, "func", None):
        parser().print_help()
        return 0
    try:
        code = _run(args)
        return code if isinstance(code, int) else 0
    except BigMindError as exc:
        print(f"bigmind: {exc.message_for('cli')}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        # The reader went away (`bigmind search x | head`): stop quietly, as `yes | head` does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # a file or folder outside our control (permissions, disk full)
        print(f"bigmind: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
