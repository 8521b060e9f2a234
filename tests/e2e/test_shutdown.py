"""Runtime.close, the one shutdown of a process: background threads joined within a bound,
the model released, the database closed; and it says when a thread could not be stopped."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from bigmind.config import Settings
from bigmind.errors import BackendUnavailable
from bigmind.runtime import Runtime
from bigmind.search.embedder import Embedder, OnnxEmbedder


def test_close_reports_a_model_still_loading_and_leaves_the_database_to_it(
    settings: Settings,
) -> None:
    loading, release = threading.Event(), threading.Event()

    def slow(_: Settings) -> Embedder | None:
        loading.set()
        release.wait(60)
        return None

    rt = Runtime(settings.model_copy(update={"embed_model": "any"}), background=True, loader=slow)
    store = rt.store
    assert loading.wait(60)
    try:
        assert rt.close(timeout=0.01) is False  # the caller must not finalise the interpreter
        store.db.query("SELECT 1 AS one")  # still open for the thread that may use it
    finally:
        release.set()
    assert rt.close() is True  # the thread has ended: now the rest is closed
    with pytest.raises(BackendUnavailable, match="shutting down"):
        _ = rt.store  # never reopened behind the shutdown's back


def test_close_releases_the_model_once_its_thread_stopped(
    settings: Settings, model_dir: Path
) -> None:
    model = OnnxEmbedder(model_dir)
    rt = Runtime(
        settings.model_copy(update={"embed_model": str(model_dir)}),
        background=True,
        loader=lambda _: model,
    )
    rt.store.store_fact("preference", "Prefers tabs")
    assert rt.semantic is not None and rt.semantic.wait_idle(60)
    assert model.embed(["tabs"]).shape == (1, model.dim)
    assert rt.close() is True
    with pytest.raises(BackendUnavailable, match="closed"):
        model.embed(["tabs"])  # ONNX Runtime's session is gone before the interpreter exits
