"""What a comparison on one corpus can detect, said before any candidate runs (docs/gate.md).

A verdict of "no measurable difference" on 90 multi-file questions and on 800 lookups mean very different things.
compare states, per row, the Δ its rule finds with 80% power from the paired per-query spread (``Row.detectable``).
One results directory has no pair yet, so bench states it for the loss the power benchmark plants: a change that
takes the whole score of a share ``f`` of a class's queries. Its per-query differences are ``−x_i`` on a random
share ``f`` of the queries and 0 elsewhere, so with ``μ`` the class's mean and ``μ₂`` the mean of its squared
values the mean loss is ``f·μ`` and its variance ``f·μ₂ − f²μ²``. The rule finds it with 80% power when
``f·μ·√n ≥ K·√(f·μ₂ − f²μ²)``, ``K = c + z(0.8)`` and ``c`` the rule's critical value; the smallest such share is

    f = K²·μ₂ / (μ²·(n + K²))

and the smallest loss ``f·μ``. ``c``: for lookup, the guard's one-sided level shared over the lookup measures
(a normal bound on its max-T critical value); elsewhere Holm's first step over the family a comparison of this
directory would have.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from turnbench.canonical import q6
from turnbench.harness.compare import (
    GUARD_ALPHA,
    POWER,
    STRICT_CLASS,
    family_of,
    group_sort_key,
    holm_critical,
    table_groups,
    tables_of,
)
from turnbench.harness.stats import z_quantile
from turnbench.results.record import Results

HEADLINE = ("nDCG@10", "meeting:nDCG@10")


@dataclass(frozen=True)
class Detectable:
    """The smallest planted loss of one class × measure a comparison would find 80% of the time."""

    group: tuple[str, ...]  # (corpus, class)
    measure: str
    n: int
    mean: float
    share: float | None  # of the class's queries whose whole score is lost; None: no share of them would do
    loss: float | None  # the mean Δ that share makes


def planted_share(values: Sequence[float], critical: float) -> float | None:
    """The smallest share of these queries that, losing their whole score, a rule with this critical value finds
    with 80% power; None when even all of them would not do (or the class scores nothing to lose)."""
    n = len(values)
    mean = math.fsum(values) / n if n else 0.0
    if n < 2 or mean <= 0.0:
        return None
    square = math.fsum(v * v for v in values) / n
    k2 = (critical + z_quantile(POWER)) ** 2
    share = k2 * square / (mean * mean * (n + k2))
    return share if share <= 1.0 else None


@dataclass(frozen=True)
class Detection:
    """What a comparison against one record could detect: the size of the Holm family it would gate (``family``)
    and the smallest planted loss per class and headline measure (``rows``)."""

    family: int
    rows: tuple[Detectable, ...]


def detection(results: Results) -> Detection:
    """Per corpus × class (and ``all``) and headline measure of the retrieval block, the smallest planted loss."""
    tables = tables_of(results)
    family = family_of(tables)
    table = tables.get("retrieval")
    if table is None:
        return Detection(family, ())
    lookup_measures = len(table.measures)
    out = []
    for g, qids in table_groups(table).items():
        lookup = dict(zip(table.group_keys, g, strict=True)).get("class") == STRICT_CLASS
        critical = z_quantile(1 - GUARD_ALPHA / lookup_measures) if lookup else holm_critical(family)
        for m in HEADLINE:
            values = [table.records[q][1][m] for q in qids if m in table.records[q][1]]
            if not values:
                continue
            share = planted_share(values, critical)
            mean = math.fsum(values) / len(values)
            out.append(Detectable(g, m, len(values), q6(mean), None if share is None else q6(share),
                                  None if share is None else q6(share * mean)))
    return Detection(family, tuple(sorted(out, key=lambda d: (group_sort_key(d.group), HEADLINE.index(d.measure)))))
