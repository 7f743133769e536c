"""A sweep's summary as a record: what ``OUT/sweep.json`` holds, read and written only here (docs/design.md §10).

A sweep benches every arm on every chunking of a grid and keeps, per cell, each arm's class means; a decision rule
fixed before the numbers is then read per comparison and cell. The pipeline builds a ``Sweep``, the renderer reads
its fields, and ``to_tree`` is the file's text: JSON appears only at the file boundary, as for metrics.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Means = Mapping[str, Mapping[str, float | None]]  # class → measure → mean (None: the class has no query)


@dataclass(frozen=True)
class ArmCell:
    """One arm benched on one chunking."""

    results: str  # its results directory, relative to OUT
    judged_passages: int
    means: Means
    entry_median_s: Mapping[str, float | None]  # class → median |Δ| seconds from the gold start


@dataclass(frozen=True)
class CellResults:
    """One chunking of the grid and every arm benched on it."""

    name: str
    max_words: int
    overlap: int
    passages: int | None  # as the first arm's provenance records them
    arms: Mapping[str, ArmCell]


@dataclass(frozen=True)
class CellVerdict:
    cell: str
    holds: bool
    failed: tuple[str, ...]  # the clauses that fail, each with the Δ that fails it


@dataclass(frozen=True)
class RuleComparison:
    """The rule read for one candidate against its baseline, in every cell, and each Δ's sign across the grid."""

    baseline: str
    candidate: str
    cells: tuple[CellVerdict, ...]
    signs: Mapping[str, Mapping[str, str]]  # class → measure → "+", "−", "0" or "mixed"

    @property
    def holds_in(self) -> int:
        return sum(c.holds for c in self.cells)

    @property
    def stable(self) -> bool:
        return len({c.holds for c in self.cells}) <= 1


@dataclass(frozen=True)
class Rule:
    text: str
    clauses: tuple[str, ...]
    reads: str
    comparisons: tuple[RuleComparison, ...]


@dataclass(frozen=True)
class Sweep:
    corpus_id: str
    corpus_sha256: str
    max_words: tuple[int, ...]  # the grid's values, ascending
    overlaps: tuple[int, ...]
    arms: tuple[str, ...]
    comparable: tuple[str, ...]  # measures comparable across chunkings (gold words, seconds)
    not_comparable: tuple[str, ...]  # passage-counting measures: read within a cell only
    cells: tuple[CellResults, ...]
    rule: Rule | None = None

    def to_tree(self) -> dict[str, Any]:
        """sweep.json's document (its bytes: ``canonical.pretty`` of this)."""
        tree: dict[str, Any] = {
            "corpus": {"id": self.corpus_id, "sha256": self.corpus_sha256},
            "grid": {"max_words": list(self.max_words), "overlap": list(self.overlaps)},
            "arms": list(self.arms),
            "comparable_across_chunkings": list(self.comparable),
            "not_comparable": list(self.not_comparable),
            "cells": [{"cell": c.name, "max_words": c.max_words, "overlap": c.overlap, "passages": c.passages,
                       "arms": {arm: {"results": a.results, "judged_passages": a.judged_passages,
                                      "means": {k: dict(v) for k, v in a.means.items()},
                                      "entry_median_s": dict(a.entry_median_s)} for arm, a in c.arms.items()}}
                      for c in self.cells],
        }
        if self.rule is not None:
            r = self.rule
            tree["rule"] = {"text": r.text, "clauses": list(r.clauses), "reads": r.reads, "comparisons": [
                {"baseline": c.baseline, "candidate": c.candidate,
                 "cells": [{"cell": v.cell, "holds": v.holds, "failed": list(v.failed)} for v in c.cells],
                 "stable": c.stable, "holds_in": c.holds_in, "of": len(c.cells),
                 "signs": {cls: dict(s) for cls, s in c.signs.items()}} for c in r.comparisons]}
        return tree


def from_tree(tree: Mapping[str, Any]) -> Sweep:
    """The record of a sweep.json document (as ``to_tree`` writes it)."""
    rule = tree.get("rule")
    return Sweep(
        str(tree["corpus"]["id"]), str(tree["corpus"]["sha256"]), tuple(tree["grid"]["max_words"]),
        tuple(tree["grid"]["overlap"]), tuple(tree["arms"]), tuple(tree["comparable_across_chunkings"]),
        tuple(tree["not_comparable"]),
        tuple(CellResults(c["cell"], c["max_words"], c["overlap"], c["passages"],
                   {arm: ArmCell(a["results"], a["judged_passages"], a["means"], a["entry_median_s"])
                    for arm, a in c["arms"].items()}) for c in tree["cells"]),
        None if rule is None else Rule(
            rule["text"], tuple(rule["clauses"]), rule["reads"],
            tuple(RuleComparison(c["baseline"], c["candidate"],
                                 tuple(CellVerdict(v["cell"], v["holds"], tuple(v["failed"])) for v in c["cells"]),
                                 c["signs"]) for c in rule["comparisons"])))
