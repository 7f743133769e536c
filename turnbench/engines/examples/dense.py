"""Exact dense search in numpy over a turnbench encoder: the passages embedded as passages, each question as a
query, from turnbench's embedding cache (turnbench.engines.embeddings) — the vectors an index of this encoder holds.

The score is the cosine of the rounded unit vectors, computed exactly: components are whole numbers of 1e-6, so
each product is a whole number below 2**53 and so is every partial sum — float64 arithmetic is exact in any order,
on any CPU. Scores are returned as that whole number times 1e-12; equal scores keep the inventory order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from turnbench.engines.protocol import EngineContext, Question
from turnbench.passages import Passage


class DenseEngine:
    version = "1"

    def __init__(self, encoder: str = "minilm-l6-v2-int8", name: str = "dense-numpy") -> None:
        from turnbench.engines.encoders import check_name

        self.name = name
        self.config: dict[str, Any] = {"encoder": check_name(encoder), "similarity": "cosine of the rounded unit "
                                       "vectors, exact (whole numbers of 1e-12)", "roles": {"question": "query",
                                                                                           "passage": "passage"},
                                       "hits": "every passage, ties in inventory order"}
        self._ids: list[str] = []
        self._matrix: Any = None

    def index(self, passages: Sequence[Passage], context: EngineContext) -> None:
        import numpy as np

        from turnbench.engines import encoders
        from turnbench.engines.embeddings import embed

        found = embed(encoders.get(self.config["encoder"]), [(p.id, p.text or "") for p in passages], role="passage")
        self._ids = [p.id for p in passages]
        self._matrix = found.micro[[found.index[i] for i in self._ids]].astype(np.float64)

    def search(self, questions: Sequence[Question], depth: int) -> list[list[tuple[str, float]]]:
        import numpy as np

        from turnbench.engines import encoders
        from turnbench.engines.embeddings import embed

        asked = embed(encoders.get(self.config["encoder"]), [(q.id, q.text) for q in questions], role="query")
        out = []
        for q in questions:
            scores = self._matrix @ asked.micro[asked.index[q.id]].astype(np.float64)
            top = np.argsort(-scores, kind="stable")[:depth]
            out.append([(self._ids[i], float(scores[i]) / 1e12) for i in top.tolist()])
        return out


def engine() -> DenseEngine:
    return DenseEngine()


def engine_bge() -> DenseEngine:
    return DenseEngine("bge-small-en-v15-int8", "dense-numpy-bge")
