"""A numpy fp32 forward pass of all-MiniLM-L6-v2 (BERT: 6 layers, 12 heads, 384 wide) from the model's own
safetensors weights: the reference the int8 ONNX encoder is checked against. No torch, no safetensors package:
the file is an 8-byte header length, a JSON header (dtype, shape, byte offsets per tensor) and the raw tensors.

One text at a time, so no padding and no attention mask; mean pooling over every token, L2-normalised.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

HEADS, LAYERS, EPS = 12, 6, 1e-12


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


class ReferenceMiniLM:
    def __init__(self, weights: Path) -> None:
        w = load_safetensors(weights)
        # some snapshots prefix every tensor with the architecture's name
        self.w = {k.removeprefix("bert."): v for k, v in w.items()}

    def _dense(self, x, name):  # a PyTorch Linear: weight is (out, in)
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def encode_one(self, ids: list[int]) -> np.ndarray:
        w, n = self.w, len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        d = x.shape[1] // HEADS
        for i in range(LAYERS):
            p = f"encoder.layer.{i}"
            q, k, v = (self._dense(x, f"{p}.attention.self.{t}").reshape(n, HEADS, d).transpose(1, 0, 2)
                       for t in ("query", "key", "value"))
            ctx = _softmax(q @ k.transpose(0, 2, 1) / math.sqrt(d)) @ v
            a = self._dense(ctx.transpose(1, 0, 2).reshape(n, -1), f"{p}.attention.output.dense")
            x = _layer_norm(x + a, w[f"{p}.attention.output.LayerNorm.weight"],
                            w[f"{p}.attention.output.LayerNorm.bias"])
            h = self._dense(_gelu(self._dense(x, f"{p}.intermediate.dense")), f"{p}.output.dense")
            x = _layer_norm(x + h, w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"])
        pooled = x.mean(0)
        return (pooled / np.linalg.norm(pooled)).astype(np.float32)
