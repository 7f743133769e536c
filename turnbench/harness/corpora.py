"""One change judged over several corpora: a real corpus can veto what the synthetic one passes (docs/gate.md).

A synthetic corpus sees what its generator planted; a real one sees what real meetings do, approximate search
over transcripts full of repeated backchannels among them. ``compare BASE CAND --gate --also BASE2 CAND2`` takes
the same two arms benched on each corpus and

* pairs each corpus's sides with every check a single comparison makes (queries, policy, gold, stale bindings),
  and refuses sides of two corpora mixed, the same corpus given twice, or other arms on another corpus;
* puts every corpus's gated rows into one Holm family (a change tested on K corpora has K times the chances to
  be named worse by luck), and tests lookup on each corpus with the guard at its share of the level, α / K;
* fails the gate on a regression on any corpus; names a difference "better" across corpora only when it is
  better on every one (the seed rule: a win that holds on one corpus and not on another is not a win); and
* says per corpus the Δ, its relative size (the figure that carries between corpora: absolute effects on the
  synthetic corpus run 2–4× a real one's, relative ones are close) and the corpus's licence tier.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from turnbench.errors import UnpairedComparison
from turnbench.harness.compare import (
    BETTER,
    GUARD_ALPHA,
    REPORT_ONLY,
    SAME,
    WORSE,
    Comparison,
    Row,
    adjust_by_family,
    gated,
    guard_fires,
)
from turnbench.results.record import Results

MIXED = "not on every corpus"


@dataclass(frozen=True)
class Corpus:
    """One corpus's comparison, adjusted with the others'."""

    name: str  # the corpus id (or the seeds pooled)
    tier: str  # its licence tier, as the results record it
    comparison: Comparison


@dataclass(frozen=True)
class Cell:
    """One block × group × measure over every corpus: its rows in corpus order and the verdict across them."""

    block: str
    groups: tuple[tuple[str, str], ...]  # without the corpus
    measure: str
    rows: tuple[Row | None, ...]  # None where a corpus has no such row (a class it does not ask)
    verdict: str


@dataclass(frozen=True)
class CorporaComparison:
    corpora: tuple[Corpus, ...]
    guard_level: float

    @property
    def baseline(self) -> str:
        return self.corpora[0].comparison.baseline

    @property
    def candidate(self) -> str:
        return self.corpora[0].comparison.candidate

    def gate_failures(self) -> list[str]:
        return [_named(c.name, f) for c in self.corpora for f in c.comparison.gate_failures()]

    def warnings(self) -> list[str]:
        return [_named(c.name, w) for c in self.corpora for w in c.comparison.warnings()]

    def family(self) -> int:
        return gated([r for c in self.corpora for r in c.comparison.rows])

    def cells(self) -> list[Cell]:
        """Every cell any corpus has, in the first corpus's row order, then the others' new ones."""
        keyed = [{_cell(r): r for r in c.comparison.rows} for c in self.corpora]
        order = list(dict.fromkeys(k for rows in keyed for k in rows))
        out = []
        for key in order:
            rows = tuple(k.get(key) for k in keyed)
            out.append(Cell(key[0], key[1], key[2], rows, across(rows, self.guard_level)))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "candidate": self.candidate,
                "corpora": [{"corpus": c.name, "licence_tier": c.tier, **c.comparison.to_json()}
                            for c in self.corpora],
                "verdicts": {"family": self.family(), "guard_level": self.guard_level,
                             "across": "worse when worse on any corpus; better only when better on every corpus"},
                "across": [{"block": x.block, **dict(x.groups), "measure": x.measure, "verdict": x.verdict,
                            "per_corpus": {c.name: None if r is None else {"delta": r.delta, "relative": r.relative,
                                                                           "verdict": r.verdict}
                                           for c, r in zip(self.corpora, x.rows, strict=True)}}
                           for x in self.cells()],
                "gate_failures": self.gate_failures(), "warnings": self.warnings()}


def _named(corpus: str, line: str) -> str:
    """``line`` with the corpus it is about, unless its row names it already (pooled seeds' rows do not)."""
    return line if corpus in line else f"{corpus}: {line}"


def _cell(r: Row) -> tuple[str, tuple[tuple[str, str], ...], str]:
    return (r.block, tuple((k, v) for k, v in r.groups if k != "corpus"), r.measure)


def across(rows: Sequence[Row | None], guard_level: float) -> str:
    """Worse if any corpus finds it worse (by Holm or, for lookup, by the guard); better only if every corpus
    finds it better; no measurable difference when none names it; otherwise it does not hold on every corpus."""
    present = [r for r in rows if r is not None]
    if any(r.verdict == WORSE or (r.block not in REPORT_ONLY and guard_fires(r, guard_level)) for r in present):
        return WORSE
    if present and all(r.verdict == BETTER for r in present) and len(present) == len(rows):
        return BETTER
    if all(r.verdict == SAME for r in present):
        return SAME
    return MIXED


def guard_level(corpora: int) -> float:
    """The lookup guard's level on each of ``corpora`` corpora: the gate's level shared out (Bonferroni)."""
    return GUARD_ALPHA / max(1, corpora)


def check_corpora(sides: Sequence[tuple[Results, Results]]) -> None:
    """Refuse a set of pairs that is not one change over distinct corpora. Each pair's own checks (same corpus on
    both sides, same queries, ...) are compare's; here: the same two arms on every corpus, and no corpus twice."""
    first_b, first_c = sides[0]
    seen: dict[str, int] = {}
    for i, (b, c) in enumerate(sides):
        for what, doc, ref in (("baseline", b, first_b), ("candidate", c, first_c)):
            if _arm(doc) != _arm(ref):
                raise UnpairedComparison(
                    f"corpus {i + 1}'s {what} is arm {_arm(doc)!r} and corpus 1's {_arm(ref)!r}: a change over "
                    "several corpora compares the same two arms on each")
        sha = b.provenance.corpus.sha256
        if sha in seen:
            raise UnpairedComparison(f"corpora {seen[sha] + 1} and {i + 1} are one corpus (sha256 {sha[:12]}…): "
                                     "its queries would count twice")
        seen[sha] = i


def _arm(results: Results) -> Any:
    arm = results.provenance.arm
    return arm.get("name") if isinstance(arm, Mapping) else arm


def combine(corpora: Sequence[Corpus]) -> CorporaComparison:
    """The corpora's comparisons (each made with the guard at ``guard_level(len(corpora))``) Holm-adjusted as
    one family: the gated rows of every corpus together, each report-only block over every corpus."""
    rows = [r for c in corpora for r in c.comparison.rows]
    adjusted = adjust_by_family(rows)
    out, at = [], 0
    family = gated(rows)
    for c in corpora:
        n = len(c.comparison.rows)
        cmp = c.comparison
        facts = dict(cmp.facts) | {"verdicts": dict(cmp.facts["verdicts"]) | {"family": family,
                                                                            "corpora": len(corpora)}}
        out.append(replace(c, comparison=replace(cmp, rows=tuple(adjusted[at:at + n]), facts=facts)))
        at += n
    return CorporaComparison(tuple(out), guard_level(len(corpora)))
