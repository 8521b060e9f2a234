"""Local sentence embeddings on ONNX Runtime and Hugging Face ``tokenizers``.

A model directory (written by ``bigmind model fetch`` or ``export``) holds ``model.onnx``,
``tokenizer.json`` and ``bigmind-model.json``, and usually ``model_int8.onnx``: the same
model with its weights quantised to int8 (``modelquant.py``), which runs about twice as fast
from a quarter of the memory and is the default (``BIGMIND_EMBED_PRECISION``; docs/models.md
has the figures). :class:`OnnxEmbedder` reproduces what sentence-transformers does for
mean-pooling models: truncate at ``max_seq_length``, run the transformer, average the token
vectors under the attention mask, and L2-normalise. numpy, onnxruntime and tokenizers are
imported only when a model is loaded, so importing this module is cheap.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from bigmind.errors import BackendUnavailable, InvalidInput

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from bigmind.config import Settings

ONNX_FILE = "model.onnx"
INT8_FILE = "model_int8.onnx"
INT8_SUFFIX = "-int8"  # of the model id: int8 vectors are not the float model's
TOKENIZER_FILE = "tokenizer.json"
METADATA_FILE = "bigmind-model.json"
FORMAT_VERSION = 2  # 2: model_int8.onnx beside model.onnx
DEFAULT_BATCH_SIZE = 32
# A batch holds at most this many tokens (rows x the longest row): the attention scores take
# rows x heads x width^2 floats, 100 MB for 32 rows of 256 tokens, and that peak stays in the
# process's resident set. Measured on 128 chunk texts (int8, VmHWM after the batch / texts/s,
# busy machine): no cap 490 MB / 3.4, 2,048 tokens 204-218 / 6-8, 1,024 165-179 / 7-15, 512
# 152-157 / 10-12. Short texts (facts, questions) still go 32 to a batch.
BATCH_TOKENS = 1024
OFF_VALUES = frozenset({"off", "none", ""})
_MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_HF_MARKERS = ("config.json", "model.safetensors", "pytorch_model.bin", "modules.json")

log = logging.getLogger(__name__)


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Return an array of shape ``(len(texts), dim)`` whose rows have unit length."""
        ...


@dataclass(frozen=True)
class ModelMetadata:
    """The contents of ``bigmind-model.json``."""

    model_id: str
    dim: int
    max_seq_length: int
    pooling: str = "mean"
    normalize: bool = True
    source: str = ""
    exported_at: str = ""
    onnx_sha256: str = ""
    opset: int = 0
    int8_sha256: str = ""  # "" when the directory has no model_int8.onnx
    format_version: int = FORMAT_VERSION

    def write(self, model_dir: Path) -> None:
        """Write the metadata file into ``model_dir``."""
        text = json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"
        (model_dir / METADATA_FILE).write_text(text, encoding="utf-8")

    @classmethod
    def read(cls, model_dir: Path) -> ModelMetadata:
        """Read and validate ``bigmind-model.json``; unknown keys are ignored."""
        path = model_dir / METADATA_FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BackendUnavailable(
                f"Cannot read {path} ({exc}); re-create the model with `bigmind model export`."
            ) from exc
        known = {f.name for f in fields(cls)}
        try:
            meta = cls(**{k: v for k, v in raw.items() if k in known})
        except TypeError as exc:
            raise BackendUnavailable(
                f"{path} is incomplete ({exc}); re-create the model with `bigmind model export`."
            ) from exc
        if meta.pooling != "mean" or meta.dim <= 0 or meta.max_seq_length <= 0:
            raise BackendUnavailable(
                f"{path} describes an unsupported model (pooling={meta.pooling!r}, "
                f"dim={meta.dim}, max_seq_length={meta.max_seq_length}); "
                "export a mean-pooling sentence-transformers model with `bigmind model export`."
            )
        return meta


class OnnxEmbedder:
    """A sentence-embedding model on ONNX Runtime (CPU).

    ``model_id`` and ``dim`` never change after construction, so any thread may
    read them while another calls :meth:`embed`. ``precision`` "int8" runs
    ``model_int8.onnx`` and names the model ``<model_id>-int8``: its vectors are close to the
    float model's (cosine 0.99 median) but not the same, so the vector tables must not mix them.
    """

    def __init__(
        self,
        model_dir: Path,
        *,
        threads: int = 1,
        batch_size: int = DEFAULT_BATCH_SIZE,
        precision: str = "float",
    ) -> None:
        import onnxruntime as ort
        from onnxruntime.capi import onnxruntime_pybind11_state as ort_state
        from tokenizers import Tokenizer

        if threads < 0 or batch_size < 1 or precision not in ("int8", "float"):
            raise InvalidInput("threads must be >= 0, batch_size >= 1, precision int8 or float.")
        self.model_dir = Path(model_dir)
        _require_model_files(self.model_dir)
        self.metadata = ModelMetadata.read(self.model_dir)
        self.precision = precision
        onnx_file = ONNX_FILE
        self.model_id: str = self.metadata.model_id
        self.model_id = model_id_of(self.metadata, precision)
        if precision == "int8":
            onnx_file = INT8_FILE
            if not (self.model_dir / INT8_FILE).is_file():
                raise BackendUnavailable(
                    f"{self.model_dir} has no {INT8_FILE}; re-create it with `bigmind model "
                    "fetch --force` or `bigmind model export`, or set "
                    "BIGMIND_EMBED_PRECISION=float."
                )
        self.dim: int = self.metadata.dim
        self.max_seq_length: int = self.metadata.max_seq_length
        self.batch_size = batch_size

        try:
            tokenizer = Tokenizer.from_file(str(self.model_dir / TOKENIZER_FILE))
        except Exception as exc:  # tokenizers raises only bare Exception; re-raised below
            raise BackendUnavailable(
                f"Cannot load {self.model_dir / TOKENIZER_FILE} ({exc}); "
                "re-create the model with `bigmind model export`."
            ) from exc
        self._pad_id = _pad_id(tokenizer)
        tokenizer.no_padding()  # batches are padded here, after sorting by length
        tokenizer.enable_truncation(max_length=self.max_seq_length)
        self._tokenizer = tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # The arena keeps the largest batch's buffers for the life of the process (the float
        # model: 415 MB resident after 128 chunks with it, 303 MB without); without it they
        # return to the allocator. Throughput unchanged (int8, interleaved: 4.4 vs 4.2 texts/s).
        opts.enable_cpu_mem_arena = False
        opts.log_severity_level = 3
        try:
            self._session: Any = ort.InferenceSession(
                str(self.model_dir / onnx_file), opts, providers=["CPUExecutionProvider"]
            )
        except (
            ort_state.Fail,
            ort_state.InvalidArgument,
            ort_state.InvalidGraph,
            ort_state.InvalidProtobuf,
            ort_state.NoSuchFile,
            ort_state.NotImplemented,
            ort_state.RuntimeException,
        ) as exc:
            raise BackendUnavailable(
                f"ONNX Runtime cannot load {self.model_dir / onnx_file} ({exc}); "
                "re-create the model with `bigmind model export`."
            ) from exc
        self._input_names = [i.name for i in self._session.get_inputs()]
        unknown = sorted(set(self._input_names) - set(_MODEL_INPUTS))
        if unknown or "input_ids" not in self._input_names:
            raise BackendUnavailable(
                f"{self.model_dir / onnx_file} has inputs {self._input_names}, expected a subset "
                f"of {list(_MODEL_INPUTS)}; re-create it with `bigmind model export`."
            )
        self._output_name = self._session.get_outputs()[0].name

    def close(self) -> None:
        """Release the ONNX Runtime session now rather than during the interpreter's exit,
        where native threads torn down late abort the process. Embedding afterwards fails."""
        self._session = None

    def __repr__(self) -> str:
        return f"OnnxEmbedder(model_id={self.model_id!r}, dim={self.dim}, dir={self.model_dir})"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``; rows are L2-normalised and in the order given."""
        import numpy as np

        if isinstance(texts, str):
            raise InvalidInput("embed() takes a sequence of strings, not a single string.")
        items = list(texts)
        if not all(isinstance(t, str) for t in items):
            raise InvalidInput("embed() takes only strings.")
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        # No lock: ONNX Runtime sessions and tokenizers are safe to call from several threads,
        # so a query embedding never waits behind a background batch.
        encodings = self._tokenizer.encode_batch(items)
        lengths = [len(e.ids) for e in encodings]
        for idx in batches(lengths, self.batch_size, BATCH_TOKENS):
            out[idx] = self._run([encodings[i] for i in idx])
        return out

    def _run(self, encodings: Sequence[Any]) -> npt.NDArray[np.float32]:
        """Pad one batch, run the graph, mean-pool and normalise."""
        import numpy as np

        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n] = enc.ids
            mask[row, :n] = enc.attention_mask
            types[row, :n] = enc.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        if self._session is None:
            raise BackendUnavailable("The embedding model was closed; restart BigMind.")
        result = self._session.run([self._output_name], {k: feed[k] for k in self._input_names})[0]
        hidden = np.asarray(result, dtype=np.float32)
        if hidden.ndim == 3:  # token embeddings: mean over the real (unmasked) tokens
            m = mask[:, :, None].astype(np.float32)
            summed = (hidden * m).sum(axis=1)
            pooled = summed / np.clip(m.sum(axis=1), 1e-9, None)
        else:  # the graph already pooled
            pooled = hidden
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normed: npt.NDArray[np.float32] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return normed


def batches(lengths: Sequence[int], rows: int, tokens: int) -> list[list[int]]:
    """Indexes of texts of these token ``lengths`` in batches, shortest first (little
    padding), each of at most ``rows`` texts and ``tokens`` padded tokens (one text at least)."""
    out: list[list[int]] = []
    current: list[int] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        if current and (len(current) >= rows or (len(current) + 1) * lengths[i] > tokens):
            out.append(current)
            current = []
        current.append(i)
    if current:
        out.append(current)
    return out


def _pad_id(tokenizer: Any) -> int:
    """The padding token id (0 for BERT; position ids of some models depend on it)."""
    padding = tokenizer.padding
    if padding and isinstance(padding.get("pad_id"), int):
        return int(padding["pad_id"])
    for token in ("[PAD]", "<pad>"):
        found = tokenizer.token_to_id(token)
        if found is not None:
            return int(found)
    return 0


def _require_model_files(model_dir: Path) -> None:
    """Raise a helpful BackendUnavailable unless ``model_dir`` is an exported model."""
    if not model_dir.is_dir():
        raise BackendUnavailable(
            f"Embedding model directory {model_dir} does not exist; run `bigmind model export` "
            "to create it, or set BIGMIND_EMBED_MODEL=off to disable semantic search."
        )
    if not (model_dir / ONNX_FILE).is_file():
        if any((model_dir / marker).exists() for marker in _HF_MARKERS):
            raise BackendUnavailable(
                f"{model_dir} is a Hugging Face model without {ONNX_FILE}; convert it with "
                f"`bigmind model export --source {model_dir}` and point BIGMIND_EMBED_MODEL "
                "at the result."
            )
        raise BackendUnavailable(
            f"{model_dir} has no {ONNX_FILE}; re-create it with `bigmind model export`."
        )
    for name in (TOKENIZER_FILE, METADATA_FILE):
        if not (model_dir / name).is_file():
            raise BackendUnavailable(
                f"{model_dir} has no {name}; re-create it with `bigmind model export`."
            )


def resolve_model_dir(settings: Settings) -> Path | None:
    """Where the configured embedding model lives, or None when embeddings are off.

    ``embed_model`` is "off"/"none"/"" (disabled), a path to a directory (anything
    with a path separator, starting with ``~``, or naming an existing directory),
    or a model name: looked up in the model cache (``settings.models_dir``), then
    where versions before it exported models (beside the database); when it is in
    neither, the cache's path, where ``bigmind model fetch`` puts it.
    """
    target = model_target(settings)
    if target is None or target.parent != settings.models_dir or target.is_dir():
        return target
    legacy = settings.legacy_models_dir / target.name
    return legacy if legacy.is_dir() else target


def model_target(settings: Settings) -> Path | None:
    """Where ``bigmind model fetch`` / ``export`` write the configured model (None: off): the
    directory it names, or its name in the model cache."""
    name = settings.embed_model.strip()
    if name.lower() in OFF_VALUES:
        return None
    seps = {os.sep, "/"} | ({os.altsep} if os.altsep else set())
    as_path = Path(name).expanduser()
    if name.startswith("~") or any(s in name for s in seps) or as_path.is_dir():
        return as_path.resolve()
    return settings.models_dir / name


def missing_model(settings: Settings, model_dir: Path) -> str:
    """Why no model is at ``model_dir`` and how to get one."""
    from bigmind.config import DEFAULT_EMBED_MODEL

    name = settings.embed_model.strip()
    if model_dir.parent != settings.models_dir:
        return (
            f"Embedding model directory {model_dir} does not exist; run `bigmind model export "
            f"--to {model_dir}` or `bigmind model fetch --to {model_dir}` to create it, or set "
            "BIGMIND_EMBED_MODEL=off to disable semantic search."
        )
    if name == DEFAULT_EMBED_MODEL:
        return (
            f"The embedding model {name} is not in {settings.models_dir}: run `bigmind model "
            "fetch` to download it (about 90 MB; without internet, `bigmind model export`), or "
            "set BIGMIND_EMBED_MODEL=off to disable semantic search."
        )
    return (
        f"No embedding model named {name!r} in {settings.models_dir} (nor in "
        f"{settings.legacy_models_dir}): make it with `bigmind model export --source DIR`, "
        "point BIGMIND_EMBED_MODEL at a model directory, or unset it to use "
        f"{DEFAULT_EMBED_MODEL} (`bigmind model fetch`)."
    )


def load_embedder(settings: Settings) -> OnnxEmbedder | None:
    """Load the configured model, or return None when ``embed_model`` is off.

    With ``embed_precision`` int8 and a model directory made before there was an int8 file
    (or by a fetch without ``onnx`` to quantise), the float model runs, as it did before:
    its vectors stay valid, and a warning says how to get the faster one. Raises
    BackendUnavailable, naming the command that fixes it, when the model directory is
    missing or incomplete.
    """
    model_dir = resolve_model_dir(settings)
    if model_dir is None:
        return None
    if not model_dir.is_dir():
        raise BackendUnavailable(missing_model(settings, model_dir))
    precision = precision_of(settings, model_dir)
    if precision != settings.embed_precision:
        log.warning(
            "%s has no %s: running the float model (slower); `bigmind model fetch --force` "
            "or `bigmind model export` adds it (then `bigmind reindex`)",
            model_dir,
            INT8_FILE,
        )
    return OnnxEmbedder(model_dir, threads=settings.embed_threads, precision=precision)


def precision_of(settings: Settings, model_dir: Path) -> str:
    """The precision :func:`load_embedder` runs in ``model_dir``: the setting's, or float when
    int8 is asked for but the directory has no int8 file (made before there was one)."""
    if settings.embed_precision == "int8" and not (model_dir / INT8_FILE).is_file():
        return "float"
    return settings.embed_precision


def model_id_of(meta: ModelMetadata, precision: str) -> str:
    """The model id vectors made at ``precision`` are recorded with."""
    return meta.model_id + INT8_SUFFIX if precision == "int8" else meta.model_id
