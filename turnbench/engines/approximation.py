"""How close an approximate arm comes to the arm it approximates, on the same queries (docs/design.md §11).

An arm file may say ``approximates = "dense-exact"``: the run then also sends every query through that arm and
records, per cut-off k, the mean over queries of |A_k ∩ R_k⁺| / |R_k| — A_k the approximate arm's top k, R_k the
reference's top k, R_k⁺ that set plus every passage the reference scored equal to its k-th (a tie at the cut-off is
not a miss). Both runs are deterministic, so the figure is too, and it belongs with the arm's results (the claim),
not with timings. The engine never asks what kind of arm it runs: the file names its reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from turnbench import canonical
from turnbench.rankings import RankedPassage

CUTOFFS = (10, 100)


def recall_against(approx: Sequence[RankedPassage], reference: Sequence[RankedPassage],
                   cutoffs: Sequence[int] = CUTOFFS) -> dict[str, Any]:
    """Mean recall@k of ``approx`` against ``reference`` (both raw runs, engine ranks) over the reference's
    queries; a query the approximate run left empty counts 0."""
    def by_query(entries: Sequence[RankedPassage]) -> dict[str, list[RankedPassage]]:
        out: dict[str, list[RankedPassage]] = {}
        for e in entries:
            out.setdefault(e.query_id, []).append(e)
        return {q: sorted(v, key=lambda e: e.rank) for q, v in out.items()}

    ref, got = by_query(reference), by_query(approx)
    result: dict[str, Any] = {"queries": len(ref), "ties": "a passage scored equal to the reference's k-th counts"}
    for k in cutoffs:
        values = []
        for qid in sorted(ref):
            r = ref[qid]
            top = r[:k]
            floor = top[-1].score
            accepted = {e.passage_id for e in r if e.score >= floor or e.rank <= k}
            found = {e.passage_id for e in got.get(qid, [])[:k]} & accepted
            values.append(min(len(found), len(top)) / len(top))
        result[f"recall@{k}"] = canonical.q6(math.fsum(values) / len(values)) if values else None
    return result
