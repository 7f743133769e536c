"""What a comparison's rows mean: verdicts, the Holm families, the lookup guard, the gate, and what each row could
have detected (docs/design.md §7, docs/gate.md).

A row is one block × group × measure of a comparison (``turnbench.harness.compare`` makes them). Its verdict is
Holm-adjusted across the family of rows one comparison gates (the retrieval and answer blocks): a difference is
named only when its adjusted p-value is below ``ALPHA``. The gate fails on a gated row worse after that, or on a
lookup measure the lookup guard finds worse beyond noise (a one-sided sign-flip max-T test at ``GUARD_ALPHA``,
outside the family, ``turnbench.harness.stats.guard``); a lookup loss within noise is a warning. Each row states
the |Δ| its rule finds with ``POWER`` power, from the spread of its paired differences.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from turnbench.canonical import q6
from turnbench.harness.stats import holm, z_quantile

ALPHA = 0.05
# the lookup guard's one-sided level, outside the Holm family: the gate's chance of failing a change that changes
# nothing is at most the worse half of Holm's two-sided 0.05 plus this (docs/gate.md has it measured)
GUARD_ALPHA = 0.025
POWER = 0.8  # the power a stated detectable effect is stated at
BETTER, WORSE, SAME = "better", "worse", "no measurable difference"
STRICT_CLASS = "lookup"
VERDICT_FACTS = {"adjustment": "Holm over the gated rows (retrieval and answers); each report-only block (comparable, "
                               "strict) Holm over its own rows", "alpha": ALPHA,
                 "gate": "fails on any gated row worse after adjustment, or on any lookup retrieval measure worse "
                         "beyond noise by the lookup guard (one-sided paired sign-flip max-T over the lookup measures, "
                         "outside the Holm family); a lookup delta below 0 within noise is a warning; report-only "
                         "rows never gate",
                 "guard_alpha": GUARD_ALPHA,
                 "detectable": "the delta a row's rule finds with 80% power: (c + z(0.8)) * sd / sqrt(n), c the "
                               "rule's critical value (Holm's first step, z(1 - alpha / 2m), or the guard's max-T "
                               "quantile), sd the per-query differences' standard deviation"}
# compared and shown, each its own Holm family, never gated: the sensitivity checks and the measures comparable
# across chunkings were added beside the gate's rows, and a gate that grew with every report would mean another thing
# (and ``extra``: the measures asked for with --measure, beside the headline ones)
REPORT_ONLY = frozenset({"comparable", "strict", "extra"})


@dataclass(frozen=True)
class Row:
    block: str
    groups: tuple[tuple[str, str], ...]  # (key, value) pairs, e.g. (("corpus", "c"), ("class", "lookup"))
    measure: str
    n: int
    baseline: float
    candidate: float
    delta: float
    low: float
    high: float
    verdict: str  # Holm-adjusted across the comparison's rows: what the gate reads
    p: float = 1.0  # two-sided, from the bootstrap
    p_holm: float = 1.0
    verdict_unadjusted: str = SAME  # the 95% interval's own verdict
    relative: float | None = None  # delta / baseline; None when the baseline is 0
    wins: int = 0  # queries where the candidate scores higher
    ties: int = 0
    losses: int = 0
    sd: float = 0.0  # of the per-query differences
    p_guard: float | None = None  # lookup retrieval rows: the guard's one-sided max-T p-value
    guard_critical: float | None = None  # the guard's critical value at its level, in standard units
    detectable: float | None = None  # |delta| its rule finds with 80% power; None when it cannot be said

    def group(self, key: str) -> str:
        return dict(self.groups)[key]

    def to_json(self) -> dict[str, Any]:
        return {"block": self.block, **dict(self.groups), "measure": self.measure, "n": self.n,
                "baseline": self.baseline, "candidate": self.candidate, "delta": self.delta,
                "relative": self.relative, "interval": [self.low, self.high], "p": self.p, "p_holm": self.p_holm,
                "verdict": self.verdict, "verdict_unadjusted": self.verdict_unadjusted,
                "wins": self.wins, "ties": self.ties, "losses": self.losses, "sd": self.sd,
                "detectable": self.detectable, "p_guard": self.p_guard}

    @property
    def guarded(self) -> bool:
        return self.p_guard is not None


def guard_fires(r: Row, level: float) -> bool:
    return r.p_guard is not None and r.delta < 0 and r.p_guard < level


def gate_failures(rows: Sequence[Row], level: float) -> list[str]:
    """What the gate fails on: a gated row worse after Holm, or a lookup measure the guard finds worse."""
    failures = []
    for r in rows:
        where = " ".join(v for _, v in r.groups)
        if r.block in REPORT_ONLY:
            continue
        if r.verdict == WORSE:
            failures.append(f"{r.block} {where} {r.measure} is worse: Δ {r.delta:+.4f} "
                            f"[{r.low:+.4f}, {r.high:+.4f}], Holm p {r.p_holm:.4f}")
        elif guard_fires(r, level):
            failures.append(f"{r.block} {where} {r.measure} is worse beyond noise: Δ {r.delta:+.4f} "
                            f"[{r.low:+.4f}, {r.high:+.4f}], lookup guard p {r.p_guard:.4f} < {level:g}")
    return failures


def guard_warnings(rows: Sequence[Row], level: float) -> list[str]:
    out = []
    for r in rows:
        if r.guarded and r.delta < 0 and r.verdict != WORSE and not guard_fires(r, level):
            where = " ".join(v for _, v in r.groups)
            out.append(f"{where} {r.measure} Δ {r.delta:+.4f} is below zero but within noise (lookup guard p "
                       f"{r.p_guard:.4f}; a loss of {detectable_text(r.detectable)} would be found 80% of the time)")
    return out


def detectable_text(x: float | None) -> str:
    return "—" if x is None else f"{x:.4f}"


def verdict(low: float, high: float) -> str:
    """The 95% interval's verdict, before any adjustment for the number of rows."""
    if low > 0.0:
        return BETTER
    if high < 0.0:
        return WORSE
    return SAME


def adjusted_verdict(delta: float, p_adjusted: float) -> str:
    if p_adjusted < ALPHA and delta > 0.0:
        return BETTER
    if p_adjusted < ALPHA and delta < 0.0:
        return WORSE
    return SAME


def adjust(rows: Sequence[Row]) -> tuple[Row, ...]:
    """``rows`` with Holm-adjusted p-values and verdicts over the family they form."""
    adjusted = holm([r.p for r in rows])
    return tuple(replace(r, p_holm=q6(a), verdict=adjusted_verdict(r.delta, a)) for r, a in zip(rows, adjusted,
                                                                                                 strict=True))


def adjust_by_family(rows: Sequence[Row]) -> tuple[Row, ...]:
    """Holm over the gated rows together, and over each report-only block's rows on its own; each row then says
    what its rule could have found (``detectable``)."""
    families = [[i for i, r in enumerate(rows) if r.block not in REPORT_ONLY]]
    families += [[i for i, r in enumerate(rows) if r.block == name] for name in sorted({r.block for r in rows}
                                                                                        & REPORT_ONLY)]
    out = list(rows)
    for family in families:
        for i, a in zip(family, adjust([rows[i] for i in family]), strict=True):
            out[i] = replace(a, detectable=detectable(a.sd, a.n, holm_critical(len(family))))
    return tuple(replace(r, detectable=detectable(r.sd, r.n, r.guard_critical)) if r.guarded else r for r in out)


def holm_critical(m: int) -> float:
    """Holm's strictest step over m rows as a two-sided normal critical value: what the first row must pass."""
    return z_quantile(1.0 - ALPHA / (2 * max(1, m)))


def detectable(sd: float, n: int, critical: float | None) -> float | None:
    """The |Δ| a rule with this critical value finds with 80% power on n paired queries of this spread (normal
    approximation; the power benchmark holds it to planted losses). None when no query moved (sd 0): the corpus
    then says nothing about what it could have seen."""
    if critical is None or n < 2 or sd <= 0.0 or not math.isfinite(critical):
        return None
    return q6((critical + z_quantile(POWER)) * sd / math.sqrt(n))


def gated(rows: Sequence[Row]) -> int:
    return sum(1 for r in rows if r.block not in REPORT_ONLY)
