"""Build the ONNX graph of a BERT encoder from its safetensors weights, without torch.

all-MiniLM-L6-v2 (and bge-small, e5-small, most sentence-transformers models) is a plain
BERT encoder: embeddings, then N identical layers of self-attention and a feed-forward block,
each followed by a residual LayerNorm. This module writes that graph with ``onnx.helper``
from ``config.json`` and ``model.safetensors`` alone, so making the model needs ``onnx``
and ``safetensors`` (a few tens of MB) instead of torch and transformers (about 900 MB).
Its inputs and output are those of a transformers export (``input_ids``, ``attention_mask``,
``token_type_ids`` → ``last_hidden_state``), so :class:`~bigmind.search.embedder.OnnxEmbedder`
loads either. Whether the graph is right is checked by the caller against reference
embeddings that sentence-transformers computed (``reference.py``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bigmind.errors import ExportError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
OPSET = 17


@dataclass(frozen=True, slots=True)
class BertConfig:
    """The few ``config.json`` fields the graph depends on."""

    hidden: int
    heads: int
    layers: int
    eps: float
    max_positions: int

    @classmethod
    def read(cls, src: Path) -> BertConfig:
        """Read ``config.json``, refusing what this builder does not reproduce exactly."""
        path = src / CONFIG_FILE
        try:
            raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ExportError(f"Cannot read {path}: {exc}") from exc
        if raw.get("model_type") != "bert":
            raise ExportError(
                f"{src} is a {raw.get('model_type', 'unknown')!r} model; `bigmind model export` "
                "builds BERT encoders only (all-MiniLM, bge-small, e5-small…)."
            )
        unsupported = {
            "hidden_act": (raw.get("hidden_act", "gelu"), "gelu"),
            "position_embedding_type": (raw.get("position_embedding_type", "absolute"), "absolute"),
        }
        for key, (got, want) in unsupported.items():
            if got != want:
                raise ExportError(f"{src}: {key}={got!r} is not supported (only {want!r}).")
        hidden, heads = int(raw["hidden_size"]), int(raw["num_attention_heads"])
        if hidden % heads:
            raise ExportError(f"{src}: hidden_size {hidden} is not a multiple of {heads} heads.")
        return cls(
            hidden=hidden,
            heads=heads,
            layers=int(raw["num_hidden_layers"]),
            eps=float(raw.get("layer_norm_eps", 1e-12)),
            max_positions=int(raw.get("max_position_embeddings", 512)),
        )


def is_bert_dir(src: Path) -> bool:
    """True when ``src`` holds what :func:`build` reads."""
    return (src / CONFIG_FILE).is_file() and (src / WEIGHTS_FILE).is_file()


def build(src: Path, dest: Path) -> BertConfig:
    """Write the ONNX model of the BERT encoder in ``src`` to ``dest``; return its config."""
    import onnx

    cfg = BertConfig.read(src)
    weights = _Weights(src / WEIGHTS_FILE)
    g = _Graph(weights)
    x = g.embeddings(cfg)
    mask = g.attention_bias()
    for i in range(cfg.layers):
        x = g.layer(cfg, f"encoder.layer.{i}.", x, mask)
    g.nodes.append(onnx.helper.make_node("Identity", [x], ["last_hidden_state"]))
    dims = ["batch", "sequence"]
    inputs = [
        onnx.helper.make_tensor_value_info(name, onnx.TensorProto.INT64, dims)
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = onnx.helper.make_tensor_value_info(
        "last_hidden_state", onnx.TensorProto.FLOAT, [*dims, cfg.hidden]
    )
    graph = onnx.helper.make_graph(g.nodes, "bert", inputs, [output], g.initializers)
    model = onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid("", OPSET)], producer_name="bigmind"
    )
    model.ir_version = 8  # what onnxruntime ≥ 1.14 reads
    try:
        onnx.checker.check_model(model)
        onnx.save_model(model, str(dest))
    except (onnx.checker.ValidationError, OSError) as exc:
        raise ExportError(f"Cannot write the ONNX model to {dest}: {exc}") from exc
    return cfg


class _Weights:
    """The tensors of ``model.safetensors``, found with or without a ``bert.`` prefix."""

    def __init__(self, path: Path) -> None:
        from safetensors import SafetensorError
        from safetensors.numpy import load_file

        try:
            self._tensors = load_file(str(path))
        except (OSError, SafetensorError) as exc:
            raise ExportError(f"Cannot read the weights in {path}: {exc}") from exc
        prefixed = any(k.startswith("bert.") for k in self._tensors)
        self._prefix = "bert." if prefixed else ""
        self._path = path

    def get(self, name: str) -> npt.NDArray[np.float32]:
        import numpy as np

        try:
            tensor = self._tensors[self._prefix + name]
        except KeyError as exc:
            raise ExportError(f"{self._path} has no tensor {name!r}: not a BERT encoder.") from exc
        return np.ascontiguousarray(tensor, dtype=np.float32)


class _Graph:
    """Nodes and initializers under construction; each helper returns its output's name."""

    def __init__(self, weights: _Weights) -> None:
        self.w = weights
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._consts: set[str] = set()
        self._n = 0

    def _name(self, hint: str) -> str:
        self._n += 1
        return f"{hint}_{self._n}"

    def const(self, name: str, value: Any) -> str:
        """An initializer; a name already added (a shared scalar) is reused."""
        from onnx import numpy_helper

        if name not in self._consts:
            self._consts.add(name)
            self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def op(self, kind: str, inputs: list[str], **attrs: Any) -> str:
        from onnx import helper

        out = self._name(kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def scalar(self, name: str, value: float) -> str:
        import numpy as np

        return self.const(name, np.array(value, dtype=np.float32))

    def linear(self, x: str, prefix: str) -> str:
        """``x @ W.T + b`` for a torch ``Linear`` stored as (out, in)."""
        w = self.const(prefix + "weight", self.w.get(prefix + "weight").T.copy())
        b = self.const(prefix + "bias", self.w.get(prefix + "bias"))
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def norm(self, x: str, prefix: str, eps: float) -> str:
        scale = self.const(prefix + "weight", self.w.get(prefix + "weight"))
        bias = self.const(prefix + "bias", self.w.get(prefix + "bias"))
        return self.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)

    def embeddings(self, cfg: BertConfig) -> str:
        import numpy as np

        p = "embeddings."
        words = self.const(p + "word", self.w.get(p + "word_embeddings.weight"))
        positions = self.const(p + "position", self.w.get(p + "position_embeddings.weight"))
        types = self.const(p + "type", self.w.get(p + "token_type_embeddings.weight"))
        zero = self.const("i64_zero", np.array(0, dtype=np.int64))
        one = self.const("i64_one", np.array(1, dtype=np.int64))
        length = self.op("Gather", [self.op("Shape", ["input_ids"]), one], axis=0)
        position_ids = self.op("Range", [zero, length, one])
        summed = self.op(
            "Add",
            [
                self.op(
                    "Add",
                    [
                        self.op("Gather", [words, "input_ids"], axis=0),
                        self.op("Gather", [types, "token_type_ids"], axis=0),
                    ],
                ),
                self.op("Gather", [positions, position_ids], axis=0),
            ],
        )
        return self.norm(summed, p + "LayerNorm.", cfg.eps)

    def attention_bias(self) -> str:
        """(1 - mask) × float32 min, shaped (batch, 1, 1, sequence), as transformers adds it."""
        import numpy as np

        axes = self.const("mask_axes", np.array([1, 2], dtype=np.int64))
        mask = self.op("Cast", ["attention_mask"], to=1)  # FLOAT
        expanded = self.op("Unsqueeze", [mask, axes])
        inverted = self.op("Sub", [self.scalar("f_one", 1.0), expanded])
        lowest = self.scalar("f_lowest", float(np.finfo(np.float32).min))
        return self.op("Mul", [inverted, lowest])

    def layer(self, cfg: BertConfig, p: str, x: str, bias: str) -> str:
        import numpy as np

        head = cfg.hidden // cfg.heads
        split = self.const(p + "split", np.array([0, 0, cfg.heads, head], dtype=np.int64))
        merge = self.const(p + "merge", np.array([0, 0, cfg.hidden], dtype=np.int64))

        def heads(prefix: str, perm: list[int]) -> str:
            projected = self.linear(x, p + prefix)
            return self.op("Transpose", [self.op("Reshape", [projected, split])], perm=perm)

        q = heads("attention.self.query.", [0, 2, 1, 3])
        k = heads("attention.self.key.", [0, 2, 3, 1])
        v = heads("attention.self.value.", [0, 2, 1, 3])
        scores = self.op("MatMul", [q, k])
        scaled = self.op("Div", [scores, self.scalar(p + "sqrt_d", math.sqrt(head))])
        probs = self.op("Softmax", [self.op("Add", [scaled, bias])], axis=-1)
        context = self.op("Transpose", [self.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        merged = self.op("Reshape", [context, merge])
        attended = self.linear(merged, p + "attention.output.dense.")
        x = self.norm(self.op("Add", [attended, x]), p + "attention.output.LayerNorm.", cfg.eps)
        inner = self.gelu(self.linear(x, p + "intermediate.dense."))
        out = self.linear(inner, p + "output.dense.")
        return self.norm(self.op("Add", [out, x]), p + "output.LayerNorm.", cfg.eps)

    def gelu(self, x: str) -> str:
        """The exact GELU: x · ½ · (1 + erf(x / √2))."""
        scaled = self.op("Div", [x, self.scalar("f_sqrt2", math.sqrt(2.0))])
        shifted = self.op("Add", [self.op("Erf", [scaled]), self.scalar("f_one_g", 1.0)])
        return self.op("Mul", [self.op("Mul", [x, shifted]), self.scalar("f_half", 0.5)])
