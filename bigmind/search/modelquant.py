"""The int8 model: ``model_int8.onnx`` made from ``model.onnx`` by ONNX Runtime's dynamic
quantisation, and checked against the reference embeddings.

Dynamic quantisation stores every weight matrix (the MatMuls and the word-embedding table) as
int8 with one scale per output channel, and quantises activations on the fly; the attention's
activation-by-activation products stay float. For all-MiniLM-L6-v2 that is 23 MB instead of
90, about twice the throughput on CPU, and vectors within cosine 0.99 of the float model's
(median on chunk texts and questions; 0.96 at worst for a one-word query; one scale per
tensor instead gave 0.95 median, 0.86 at worst, and was dropped), with
LoCoMo retrieval unchanged within 0.01 (bench/README.md, "Embedding model"). Making it needs
``onnx`` (``onnxruntime.quantization`` reads and writes the graph with it: the ``export``
extra); running it needs only onnxruntime.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from bigmind.errors import BackendUnavailable, BigMindError, ExportError
from bigmind.search.embedder import INT8_FILE, ONNX_FILE, OnnxEmbedder

# How close the int8 model's vectors of the reference sentences must be to the float model's:
# on average (measured 0.986; a per-tensor quantisation, which is worse, 0.943), and each one
# (the shortest text, "ok", is the farthest: 0.945; per-tensor 0.863).
MEAN_COSINE = 0.975
MIN_COSINE = 0.9


def can_quantise() -> bool:
    """Whether ``onnx`` is installed, which making the int8 model needs."""
    try:
        import onnx  # noqa: F401
    except ImportError:
        return False
    return True


class _DropAdvice(logging.Filter):
    """onnxruntime.quantization advises "pre-processing" on the root logger at every call;
    quantising a transformer this way does not need it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing" not in record.getMessage()


def quantise(model_dir: Path, error: type[BigMindError] = ExportError) -> None:
    """Write ``model_int8.onnx`` beside ``model.onnx`` in ``model_dir`` (int8 weights, one
    scale per channel). Raises ``error`` when ONNX Runtime cannot quantise the graph."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    advice = _DropAdvice()
    root = logging.getLogger()
    root.addFilter(advice)
    try:
        quantize_dynamic(
            model_dir / ONNX_FILE,
            model_dir / INT8_FILE,
            weight_type=QuantType.QInt8,
            per_channel=True,
        )
    except (ValueError, RuntimeError, OSError) as exc:
        (model_dir / INT8_FILE).unlink(missing_ok=True)
        raise error(f"Cannot quantise {model_dir / ONNX_FILE} to int8 ({exc}).") from exc
    finally:
        root.removeFilter(advice)


def check(
    model_dir: Path, sentences: Sequence[str], error: type[BigMindError] = ExportError
) -> float:
    """The int8 model's mean cosine to the float model's vectors of ``sentences`` (the float
    model is checked against the reference first); raises ``error``, and deletes the int8
    file, when it or the worst one is too low (:data:`MEAN_COSINE`, :data:`MIN_COSINE`) or the
    file does not load."""
    import numpy as np

    try:
        int8 = OnnxEmbedder(model_dir, precision="int8").embed(sentences)
    except BackendUnavailable as exc:
        (model_dir / INT8_FILE).unlink(missing_ok=True)
        raise error(f"The int8 model does not load ({exc}); it was not installed.") from exc
    cosines = np.nan_to_num((int8 * OnnxEmbedder(model_dir).embed(sentences)).sum(axis=1))
    worst, mean = int(cosines.argmin()), float(cosines.mean())
    if not (mean >= MEAN_COSINE and cosines[worst] >= MIN_COSINE):
        (model_dir / INT8_FILE).unlink(missing_ok=True)
        shown = sentences[worst][:57] + "..." if len(sentences[worst]) > 60 else sentences[worst]
        raise error(
            f"The int8 model's vectors are too far from the float model's (cosine {mean:.4f} "
            f"on average, {cosines[worst]:.4f} for {shown!r}; at least {MEAN_COSINE} and "
            f"{MIN_COSINE}); it was not installed. Run the float model "
            "(BIGMIND_EMBED_PRECISION=float) and report a bug."
        )
    return mean
