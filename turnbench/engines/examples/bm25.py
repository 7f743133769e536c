"""BM25 in memory: rank_bm25's BM25Okapi over each passage's text, as lowercased ``\\w+`` tokens.

No stemming and no stop words (OpenSearch's ``bm25`` arm has both, through its english analyzer), and BM25Okapi's
own idf floor (``epsilon`` times the mean idf for a term in more than half the passages): two BM25s, measured on the
same passages. Scores are BM25Okapi's float64 sums; a passage sharing no word with the question is not returned, and
equal scores keep the inventory order (a stable sort), so which tied passage makes the depth cut never varies.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from turnbench.engines.protocol import EngineContext, Question
from turnbench.passages import Passage

TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


class Bm25Engine:
    name = "bm25-python"
    version = f"1 (rank-bm25 {metadata.version('rank-bm25')})"

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.config = {"implementation": "rank_bm25.BM25Okapi", "k1": k1, "b": b, "epsilon": epsilon,
                       "tokens": "lowercased \\w+ words of the passage text; no stemming, no stop words",
                       "hits": "passages with a positive score, ties in inventory order"}
        self._ids: list[str] = []
        self._bm25: Any = None

    def index(self, passages: Sequence[Passage], context: EngineContext) -> None:
        from rank_bm25 import BM25Okapi

        self._ids = [p.id for p in passages]
        self._bm25 = BM25Okapi([tokens(p.text or "") for p in passages], k1=self.config["k1"], b=self.config["b"],
                               epsilon=self.config["epsilon"])

    def search(self, questions: Sequence[Question], depth: int) -> list[list[tuple[str, float]]]:
        import numpy as np

        out = []
        for q in questions:
            scores = np.asarray(self._bm25.get_scores(tokens(q.text)), dtype=np.float64)
            top = np.argsort(-scores, kind="stable")[:depth]
            out.append([(self._ids[i], float(scores[i])) for i in top.tolist() if scores[i] > 0])
        return out


def engine() -> Bm25Engine:
    return Bm25Engine()
