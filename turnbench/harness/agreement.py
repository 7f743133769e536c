"""Does one corpus rank engines as another does? Kendall's tau-b between two corpora's orderings of the same arms.

Given results directories of three or more arms on each of two corpora (say the synthetic default corpus and an
imported QMSum corpus), for every class and measure both corpora report: each corpus's arms ordered by the
class row's mean (best first), tau-b between the two orderings over the arms both have, and the pairs of arms
that swap. A synthetic corpus is only a good proxy for real meetings where tau-b is high and nothing swaps.

tau-b = (C − D) / sqrt((C + D + T_x)(C + D + T_y)) over pairs of arms: C concordant, D discordant, T_x and T_y
the pairs tied in only one of the two orderings (a pair tied in both counts in neither). It is undefined when
either corpus ties every pair; that is reported, never replaced by a number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from turnbench.errors import BadInput
from turnbench.harness.score import arm_label

MIN_ARMS = 3


@dataclass(frozen=True)
class Cell:
    cls: str
    measure: str
    orders: Mapping[str, tuple[tuple[str, float], ...]]  # corpus id -> (arm, mean) best first
    arms: tuple[str, ...]  # the arms both corpora have for this cell
    tau_b: float | None
    swaps: tuple[tuple[str, str], ...]  # pairs ordered one way on the first corpus, the other way on the second

    def to_json(self) -> dict[str, Any]:
        return {"class": self.cls, "measure": self.measure, "arms": list(self.arms),
                "orders": {c: [[a, m] for a, m in o] for c, o in sorted(self.orders.items())},
                "tau_b": self.tau_b, "swaps": [list(p) for p in self.swaps]}


def tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b of two paired score lists; None when either list ties every pair."""
    concordant = discordant = tied_x = tied_y = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            tied_x += 1
        elif dy == 0:
            tied_y += 1
        elif (dx > 0) == (dy > 0):
            concordant += 1
        else:
            discordant += 1
    denominator = math.sqrt((concordant + discordant + tied_x) * (concordant + discordant + tied_y))
    if denominator == 0:
        return None
    return round((concordant - discordant) / denominator, 6) + 0.0


def _means(document: Mapping[str, Any]) -> dict[tuple[str, str], float]:
    out = {}
    for row in document["retrieval"]["rows"]:
        for measure, value in row["means"].items():
            if value is not None:
                out[(row["class"], measure)] = float(value)
    return out


def agreement(documents: Sequence[Mapping[str, Any]]) -> list[Cell]:
    """Every (class, measure) both corpora report, from metrics.json documents of arms on exactly two corpora."""
    by_corpus: dict[str, dict[str, dict[tuple[str, str], float]]] = {}
    for doc in documents:
        corpus = doc["provenance"]["corpus"]["id"]
        arm = arm_label(doc["provenance"].get("arm"))
        arms = by_corpus.setdefault(corpus, {})
        if arm in arms:
            raise BadInput(f"arm {arm} is given twice for corpus {corpus}")
        if doc["scope"].get("oracle"):
            raise BadInput(f"arm {arm} on {corpus} was run in an ORACLE scope: only product results agree or not")
        arms[arm] = _means(doc)
    if len(by_corpus) != 2:
        raise BadInput(f"agreement compares two corpora; the results name {len(by_corpus)}: "
                       f"{', '.join(sorted(by_corpus))}")
    (a, arms_a), (b, arms_b) = sorted(by_corpus.items())
    common = sorted(set(arms_a) & set(arms_b))
    if len(common) < MIN_ARMS:
        raise BadInput(f"agreement needs at least {MIN_ARMS} arms on both corpora; both have {len(common)}: "
                       f"{', '.join(common) or 'none'}")
    keys = sorted(set.intersection(*(set(arms_a[x]) & set(arms_b[x]) for x in common)))
    cells = []
    for cls, measure in keys:
        xa = [arms_a[x][(cls, measure)] for x in common]
        xb = [arms_b[x][(cls, measure)] for x in common]
        swaps = tuple((common[i], common[j]) for i, j in combinations(range(len(common)), 2)
                      if (xa[i] - xa[j]) * (xb[i] - xb[j]) < 0)
        orders = {c: tuple(sorted(((x, v[(cls, measure)]) for x, v in arms.items() if (cls, measure) in v),
                                  key=lambda t: (-t[1], t[0])))
                  for c, arms in ((a, arms_a), (b, arms_b))}
        cells.append(Cell(cls, measure, orders, tuple(common), tau_b(xa, xb), swaps))
    return cells


