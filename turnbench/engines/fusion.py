"""Client-side fusion of two or more runs of the same queries over the same passages (docs/design.md §11).

The server-side hybrid arms fuse inside OpenSearch; ``fuse`` does the same for any runs — ours or another
team's — so an engine that is two services can be measured as one. Two methods, both on each run's ranking
as it was handed over (scores from the run, ties broken by docs/design.md §3 rule 5, so naming cannot move a rank):

* ``rrf`` — reciprocal rank fusion: a passage scores Σ 1 / (k + rank) over the runs that returned it, rank
  1-based; ``k`` (60 by default, as OpenSearch's score-ranker-processor) is recorded.
* ``minmax`` — each run's scores for a query are scaled to [0, 1] by that query's highest and lowest returned
  score (all 1.0 when they are equal), then summed with the run's weight; a passage a run did not return adds
  0. With weights that sum to 1 this is OpenSearch's min_max normalisation with arithmetic_mean combination.

The fused run holds, per query, the ``depth`` best passages by fused score (ties by rule 5 again).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from turnbench.errors import BadInput, UnpairedComparison
from turnbench.passages import Passage
from turnbench.rankings import RankedPassage, normalised_order

METHODS = ("rrf", "minmax")
DEFAULT_K = 60
DEFAULT_DEPTH = 100


@dataclass(frozen=True)
class Fusion:
    method: str
    k: int = DEFAULT_K
    weights: tuple[float, ...] = ()
    depth: int = DEFAULT_DEPTH

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise BadInput(f"fusion method must be one of {', '.join(METHODS)}, not {self.method!r}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise BadInput(f"the RRF constant k must be a positive whole number, not {self.k!r}")
        if any(not (w >= 0.0 and w < float("inf")) for w in self.weights) or (self.weights and sum(self.weights) <= 0):
            raise BadInput("weights must be finite, not negative, and not all zero")
        if isinstance(self.depth, bool) or not isinstance(self.depth, int) or not 1 <= self.depth <= 10000:
            raise BadInput(f"depth must be a whole number from 1 to 10000, not {self.depth!r}")

    def config(self, n_runs: int) -> dict[str, object]:
        out: dict[str, object] = {"method": self.method, "depth": self.depth}
        if self.method == "rrf":
            out["k"] = self.k
        else:
            out["weights"] = list(self.weights_for(n_runs))
            out["normalisation"] = "min-max per query over the returned scores; equal scores give 1.0"
        return out

    def weights_for(self, n_runs: int) -> tuple[float, ...]:
        if not self.weights:
            return tuple(1.0 / n_runs for _ in range(n_runs))
        if len(self.weights) != n_runs:
            raise BadInput(f"{len(self.weights)} weights for {n_runs} runs")
        return self.weights


def fuse(runs: Sequence[Sequence[RankedPassage]], passages: Mapping[str, Passage],
         fusion: Fusion) -> dict[str, list[RankedPassage]]:
    """The fused run: per query, ranked passages with their fused scores (rank 1 first)."""
    if len(runs) < 2:
        raise BadInput("fuse needs two or more runs")
    weights = fusion.weights_for(len(runs))
    ordered = [normalised_order(list(run), passages) for run in runs]  # refuses a passage not in the inventory
    scores = [_scores(run) for run in runs]
    queries = [set(o) for o in ordered]
    if any(q != queries[0] for q in queries[1:]):
        i = next(i for i, q in enumerate(queries) if q != queries[0])
        only = sorted(queries[0] ^ queries[i])
        raise UnpairedComparison(f"runs 1 and {i + 1} answer different queries ({len(only)} differ, e.g. "
                                 f"{', '.join(only[:3])}); fuse needs runs of the same queries")
    fused_run: dict[str, list[RankedPassage]] = {}
    rank_of = {p.id: (p.kind, p.meeting, p.index, p.id) for p in passages.values()}
    for qid in sorted(queries[0]):
        total: dict[str, float] = {}
        for r, (order, score) in enumerate(zip(ordered, scores, strict=True)):
            ids = order[qid]
            if fusion.method == "rrf":
                for rank, pid in enumerate(ids, 1):
                    total[pid] = total.get(pid, 0.0) + 1.0 / (fusion.k + rank)
            else:
                values = [score[(qid, pid)] for pid in ids]
                hi, lo = max(values), min(values)
                for pid, v in zip(ids, values, strict=True):
                    # halves first: the difference of two finite scores near ±1.8e308 would overflow to inf (halving
                    # is exact, so every other run fuses to the same bits)
                    scaled = (v / 2 - lo / 2) / (hi / 2 - lo / 2) if hi > lo else 1.0
                    total[pid] = total.get(pid, 0.0) + weights[r] * scaled
        best = sorted(total, key=lambda pid: (-total[pid], rank_of[pid]))[:fusion.depth]
        fused_run[qid] = [RankedPassage(qid, pid, rank, total[pid]) for rank, pid in enumerate(best, 1)]
    return fused_run


def _scores(run: Sequence[RankedPassage]) -> dict[tuple[str, str], float]:
    """Each passage's best score per query (a passage listed twice keeps its best, as rule 5 does)."""
    out: dict[tuple[str, str], float] = {}
    for e in run:
        key = (e.query_id, e.passage_id)
        if key not in out or e.score > out[key]:
            out[key] = e.score
    return out
