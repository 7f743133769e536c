"""Rows: per-query values into the means a table shows, by class, and by class within each domain and surface.

Means are ``math.fsum`` over per-query values rounded to ``DECIMALS``, in sorted query-id order, then rounded again,
so a mean recomputed from the per-query rows of metrics.json is the mean the row reports (the integrity check and
``compare`` both recompute them). A measure no query of a row has is None (shown as "—").
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from operator import attrgetter

from turnbench.canonical import q6
from turnbench.corpus.records import RANKED_CLASSES, Query
from turnbench.results.tables import EntryError, QueryValues, Row

ALL = "all"


def fmean(values: Sequence[float]) -> float | None:
    return q6(math.fsum(values) / len(values)) if values else None


def _median(values: Sequence[float]) -> float | None:
    return q6(statistics.median(sorted(values))) if values else None


def aggregate_rows(corpus_id: str, per_query: Sequence[QueryValues], measures: Sequence[str],
                   dropped: Mapping[str, int]) -> list[Row]:
    """Rows per class plus an ``all`` row. A row whose queries record entry-point errors also gives their median
    (seconds) and how many queries found gold to have one."""
    mine = sorted(per_query, key=attrgetter("query_id"))
    classes = [c for c in RANKED_CLASSES if dropped.get(c) or any(r.cls == c for r in mine)]
    rows = []
    for cls in [*classes, ALL]:
        group = mine if cls == ALL else [r for r in mine if r.cls == cls]
        entry = None
        if any(r.entry_recorded for r in group):
            errors = [r.entry_error_s for r in group if r.entry_recorded and r.entry_error_s is not None]
            entry = EntryError(_median(errors), len(errors))
        rows.append(Row(corpus_id, cls, len(group), sum(1 for r in group if not r.answered),
                        sum(dropped.values()) if cls == ALL else dropped.get(cls, 0), _means(group, measures),
                        sum(1 for r in group if r.level == "turn"), entry))
    return rows


def _means(group: Sequence[QueryValues], measures: Sequence[str]) -> dict[str, float | None]:
    """Each measure's ``fmean`` over the rows that have it, in row order."""
    values = [r.values for r in group]
    return {m: fmean([v[m] for v in values if m in v]) for m in measures}


def grouped_rows(key: str, corpus_id: str, per_query: Sequence[QueryValues], measures: Sequence[str],
                 ranked: Sequence[Query], unjudgeable: set[str]) -> dict[str, tuple[Row, ...]]:
    """Per value of ``key`` (``domain`` or ``surface``): its class rows. Empty when no query has the key."""
    def value_of(q: Query) -> str | None:
        return q.surface if key == "surface" else q.meta.get(key)

    def row_value(r: QueryValues) -> str | None:
        return r.surface if key == "surface" else r.domain

    values = sorted({v for r in per_query if (v := row_value(r)) is not None}
                    | {v for q in ranked if (v := value_of(q)) is not None})
    out = {}
    for v in values:
        group = [r for r in per_query if row_value(r) == v]
        dropped = {c: sum(1 for q in ranked if q.cls == c and value_of(q) == v and q.id in unjudgeable)
                   for c in RANKED_CLASSES}
        out[v] = tuple(aggregate_rows(corpus_id, group, measures, dropped))
    return out
