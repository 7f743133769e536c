"""A chunk sweep's numbers: one row per chunking × arm × class from the results each cell wrote, and the decision
rule fixed before the numbers, evaluated in every cell (docs/harness.md, "Chunk sweep").

Every cell of the grid is scored against the same turn gold, so its span and entry-point measures (words and
seconds, ``turnbench.harness.spans``) can be set beside each other; its passage measures cannot (the number of
relevant passages moves with the cut) and are shown marked as such.

The rule is a comma-separated list of clauses, each a claim about Δ = candidate − baseline of class rows' means:

* ``<measure> up on every class`` — Δ > 0 on every ranked class that has the measure;
* ``<measure> up on <class>`` — Δ > 0 on that class;
* ``<measure> never down on <class>`` — Δ ≥ 0 on that class;
* ``<class> never down`` — Δ ≥ 0 for every comparable measure of that class.

What is compared: with two or more arms, each later arm against the first, within each cell; with one arm, each
cell against the first cell of the grid (then only measures comparable across chunkings may be named). Δ is read at
the 6 decimals the rows are written with; it is the sign of a difference of means, not a significance test —
``turnbench compare`` on any two of the cells' results directories gives intervals. The verdict is *stable* when it
is the same in every cell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from turnbench.canonical import q6
from turnbench.corpus.records import RANKED_CLASSES
from turnbench.errors import BadInput
from turnbench.harness.spans import COMPARABLE
from turnbench.results.record import Results

# the columns a sweep shows: the comparable measures, then two passage measures for orientation
SHOWN_COMPARABLE = ("span:R@10", "span:P@10", "span:IoU@10", "span:P_best", "entry:30s", "entry:mGAP150")
SHOWN_PASSAGE = ("nDCG@10", "R@10")
MEDIAN = "entry |Δ| median s"


@dataclass(frozen=True)
class Cell:
    """One chunking of the grid."""

    max_words: int
    overlap: int

    @property
    def name(self) -> str:
        return f"w{self.max_words}-o{self.overlap}"


@dataclass(frozen=True)
class Clause:
    measure: str | None  # None: every comparable measure of ``cls``
    cls: str | None  # None: every class
    up: bool  # True: Δ > 0; False: Δ ≥ 0

    def __str__(self) -> str:
        if self.measure is None:
            return f"{self.cls} never down"
        where = "every class" if self.cls is None else self.cls
        return f"{self.measure} {'up' if self.up else 'never down'} on {where}"


_CLAUSES = (
    (re.compile(r"(?P<m>\S+) up on every class"), lambda g: Clause(g["m"], None, True)),
    (re.compile(r"(?P<m>\S+) up on (?P<c>\w+)"), lambda g: Clause(g["m"], g["c"], True)),
    (re.compile(r"(?P<m>\S+) never down on (?P<c>\w+)"), lambda g: Clause(g["m"], g["c"], False)),
    (re.compile(r"(?P<c>\w+) never down"), lambda g: Clause(None, g["c"], False)),
)


def parse_rule(text: str, measures: Sequence[str], *, across_cells: bool) -> tuple[Clause, ...]:
    """The clauses of ``text``; refused (BadInput) when a clause, measure or class is unknown, or — comparing one arm
    across cells — when a measure is not comparable across chunkings."""
    clauses = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise BadInput(f"rule {text!r} has an empty clause")
        for pattern, make in _CLAUSES:
            found = pattern.fullmatch(part)
            if found:
                clause = make(found.groupdict())
                break
        else:
            raise BadInput(f"rule clause {part!r} is not '<measure> up on every class', '<measure> up on <class>', "
                           "'<measure> never down on <class>' or '<class> never down'")
        if clause.cls is not None and clause.cls not in RANKED_CLASSES:
            raise BadInput(f"rule clause {part!r}: {clause.cls!r} is not a ranked class ({', '.join(RANKED_CLASSES)})")
        if clause.measure is not None and clause.measure not in measures:
            raise BadInput(f"rule clause {part!r}: {clause.measure!r} is not a measure of these results "
                           f"({', '.join(measures)})")
        if across_cells and clause.measure is not None and clause.measure not in COMPARABLE:
            raise BadInput(f"rule clause {part!r}: {clause.measure} counts passages, so it is not comparable across "
                           "chunkings; with one arm the rule compares cells, so name a span: or entry: measure")
        clauses.append(clause)
    return tuple(clauses)


def class_means(results: Results) -> dict[str, dict[str, float | None]]:
    """``{class: {measure: mean}}`` of the retrieval rows (the ``all`` row included)."""
    return {r.cls: dict(r.means) for r in (results.retrieval.rows if results.retrieval else ())}


def deltas(base: Mapping[str, Mapping[str, float | None]], cand: Mapping[str, Mapping[str, float | None]]
           ) -> dict[str, dict[str, float]]:
    """Δ of every (class, measure) both sides have a value for."""
    out: dict[str, dict[str, float]] = {}
    for cls, means in base.items():
        for m, b in means.items():
            c = cand.get(cls, {}).get(m)
            if b is not None and c is not None:
                out.setdefault(cls, {})[m] = q6(c - b)
    return out


def holds(clauses: Sequence[Clause], delta: Mapping[str, Mapping[str, float]]) -> tuple[bool, list[str]]:
    """Whether every clause holds on ``delta``, and the first reasons it does not (one per failed clause)."""
    failed = []
    for clause in clauses:
        classes = [c for c in RANKED_CLASSES if c in delta] if clause.cls is None else [clause.cls]
        bad = []
        for cls in classes:
            values = delta.get(cls, {})
            measures = [m for m in values if m in COMPARABLE] if clause.measure is None else [clause.measure]
            for m in measures:
                if m not in values:
                    continue
                if (values[m] <= 0.0) if clause.up else (values[m] < 0.0):
                    bad.append(f"{cls} {m} Δ {values[m]:+.4f}")
        if classes and not any(clause.measure is None or clause.measure in delta.get(c, {}) for c in classes):
            bad.append(f"no class has {clause.measure}")
        if bad:
            failed.append(f"{clause}: {bad[0]}" + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""))
    return not failed, failed


def sign_pattern(values: Sequence[float]) -> str:
    """'+' when every Δ is above zero, '−' below, '0' all zero, 'mixed' otherwise."""
    signs = {(v > 0) - (v < 0) for v in values}
    if signs == {1}:
        return "+"
    if signs == {-1}:
        return "−"
    if signs == {0}:
        return "0"
    return "mixed"
