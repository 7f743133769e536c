"""Rows: per-query values into the means a table shows, by class, and by class within each domain and surface.

Means are ``math.fsum`` over per-query values rounded to ``DECIMALS``, in sorted query-id order, then rounded again,
so a mean recomputed from the per-query rows of metrics.json is the mean the row reports (the integrity check and
``compare`` both recompute them). A measure no query of a row has is None (shown as "—").
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from turnbench.canonical import q6
from turnbench.corpus.records import RANKED_CLASSES, Query

ALL = "all"


def fmean(values: Sequence[float]) -> float | None:
    return q6(math.fsum(values) / len(values)) if values else None


def _median(values: Sequence[float]) -> float | None:
    return q6(statistics.median(sorted(values))) if values else None


def aggregate_rows(corpus_id: str, per_query: Sequence[Mapping[str, Any]], measures: Sequence[str],
                   dropped: Mapping[str, int]) -> list[dict[str, Any]]:
    """Rows per class plus an ``all`` row. A row whose queries record entry-point errors also gives their median
    (seconds) and how many queries found gold to have one."""
    mine = sorted(per_query, key=lambda r: r["query_id"])
    classes = [c for c in RANKED_CLASSES if dropped.get(c) or any(r["class"] == c for r in mine)]
    rows = []
    for cls in [*classes, ALL]:
        group = mine if cls == ALL else [r for r in mine if r["class"] == cls]
        row: dict[str, Any] = {
            "corpus": corpus_id,
            "class": cls,
            "queries": len(group),
            "passage_level_queries": sum(1 for r in group if r["level"] == "turn"),
            "unanswered": sum(1 for r in group if not r["answered"]),
            "dropped_unjudgeable": sum(dropped.values()) if cls == ALL else dropped.get(cls, 0),
            "means": _means(group, measures),
        }
        if any("entry_error_s" in r for r in group):
            errors = [r["entry_error_s"] for r in group if r.get("entry_error_s") is not None]
            row["entry_error_s"] = {"median": _median(errors), "queries_with_gold_found": len(errors)}
        rows.append(row)
    return rows


def _means(group: Sequence[Mapping[str, Any]], measures: Sequence[str]) -> dict[str, float | None]:
    """Each measure's ``fmean`` over the rows that have it, in row order."""
    values = [r["values"] for r in group]
    return {m: fmean([v[m] for v in values if m in v]) for m in measures}


def grouped_rows(key: str, corpus_id: str, per_query: Sequence[Mapping[str, Any]], measures: Sequence[str],
                 ranked: Sequence[Query], unjudgeable: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Per value of ``key`` (``domain`` or ``surface``): its class rows. Empty when no query has the key."""
    def value_of(q: Query) -> str | None:
        return q.surface if key == "surface" else q.meta.get(key)

    values = sorted({r[key] for r in per_query if key in r} | {v for q in ranked if (v := value_of(q)) is not None})
    out = {}
    for v in values:
        group = [r for r in per_query if r.get(key) == v]
        dropped = {c: sum(1 for q in ranked if q.cls == c and value_of(q) == v and q.id in unjudgeable)
                   for c in RANKED_CLASSES}
        out[v] = aggregate_rows(corpus_id, group, measures, dropped)
    return out
