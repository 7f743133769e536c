"""Results directories: metrics.json, metrics.md and runinfo.json (DESIGN §10).

metrics.json and metrics.md are the claim: canonical JSON and fixed formatting (6 decimals in JSON,
4 in markdown), every list sorted, no wall-clock value, hostname or absolute path — so two runs, or two
processes with different ``PYTHONHASHSEED``, write the same bytes. runinfo.json holds what legitimately
differs between runs (timings, latency quantiles, concurrency, host facts) and is outside the claim.
"""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.errors import BadInput
from turnbench.harness import markdown, ties
from turnbench.harness.integrity import read_results, write_digest
from turnbench.harness.score import ALL, Results, arm_label

METRICS_JSON = "metrics.json"
METRICS_MD = "metrics.md"
RUNINFO_JSON = "runinfo.json"
CLAIM_FILES = (METRICS_JSON, METRICS_MD)
DASH = "—"
_HEADERS = {"meeting:nDCG@10": "mtg nDCG@10", "meeting:R@10": "mtg R@10"}


def fmt4(x: float | None) -> str:
    return DASH if x is None else f"{x:.4f}"


def _describe(value: Any) -> str:
    """A one-line rendering of a provenance entry: a string as is, a dict as its scalar fields."""
    if isinstance(value, Mapping):
        if "name" in value and isinstance(value["name"], str):
            return f"`{value['name']}`"
        scalars = [f"{k}={value[k]}" for k in sorted(value) if isinstance(value[k], (str, int, float, bool))]
        return ", ".join(scalars) if scalars else "(see metrics.json)"
    return str(value)


def render_metrics_md(document: Mapping[str, Any]) -> str:
    prov = document["provenance"]
    corpus = prov["corpus"]
    scope = document["scope"]
    block = document["retrieval"]
    engine = prov["metric_engine"]
    lines = [f"# Retrieval metrics: {corpus['id']}", ""]
    if scope["oracle"]:
        lines += [f"**ORACLE scope `{scope['label']}`: {scope['meaning']}.**", ""]
    lines += [
        f"- corpus: `{corpus['id']}` sha256 `{corpus['sha256']}` seed `{corpus.get('seed')}` "
        f"licence tier `{prov['licence_tier']}`",
        f"- scope: `{scope['label']}` · arm: `{arm_label(prov['arm'])}` · stack: {_describe(prov['stack'])}",
        f"- relevance policy: `{prov['relevance_policy']['name']}` · metric engine: {engine['name']} "
        f"{engine['version']} ({engine['semantics']}, {engine['ndcg']})",
        "",
    ]
    measures = block["measures"]
    lines += _table(block["rows"], measures)
    counts = block["counts"]
    passage_n = {r["corpus"]: r["passage_level_queries"] for r in block["rows"] if r["class"] == ALL}
    lines += [
        "",
        f"n counts judged queries; an unanswered query scores 0 and is in n (trec_eval -c); dropped queries "
        f"(gold reaches no passage) are not. {_levels_note(block['rows'])}in the `all` row passage columns "
        f"average the {', '.join(str(v) for _, v in sorted(passage_n.items()))} passage-level queries. "
        f"`mtg` columns: the run collapsed to meetings by first occurrence, gold meetings relevant.",
        "",
        f"queries: {counts['queries_ranked']} ranked, {counts['queries_judged']} judged, "
        f"{counts['queries_unanswered']} unanswered, {counts['queries_dropped_unjudgeable']} dropped unjudgeable · "
        f"judged passages: {counts['judged_passages']} (by grade "
        f"{', '.join(f'{g}: {n}' for g, n in counts['judged_passages_by_grade'].items()) or 'none'})",
    ]
    if "ties" in block:
        lines += ["", ties.note(block["ties"])]
    for domain, rows in sorted(block.get("rows_by_domain", {}).items()):
        lines += ["", f"## Domain: {domain}", "", *_table(rows, measures)]
    return "\n".join(lines) + "\n"


def _table(rows: Sequence[Mapping[str, Any]], measures: Sequence[str]) -> list[str]:
    header = ["corpus", "class", "n", "unanswered", "dropped", *(_HEADERS.get(m, m) for m in measures)]
    cells = ([row["corpus"], f"**{ALL}**" if row["class"] == ALL else row["class"], str(row["queries"]),
              str(row["unanswered"]), str(row["dropped_unjudgeable"]), *(fmt4(row["means"][m]) for m in measures)]
             for row in rows)
    return markdown.table(header, cells, "ll" + "r" * (len(header) - 2))


def _levels_note(rows: Sequence[Mapping[str, Any]]) -> str:
    """Say, from the rows themselves, which classes have no passage-level queries and which mix levels."""
    notes = []
    for row in rows:
        if row["class"] == ALL or not row["queries"]:
            continue
        turn, n = row["passage_level_queries"], row["queries"]
        if turn == 0:
            notes.append(f"`{row['class']}` is judged at meeting level only, so its passage columns read {DASH}; ")
        elif turn < n:
            notes.append(f"`{row['class']}` mixes {turn} passage-level and {n - turn} meeting-level queries: its "
                         f"passage columns average the {turn}, its `mtg` columns all {n}; ")
    return "".join(notes)


def nearest_rank(sorted_values: Sequence[float], p: float | str) -> float:
    """The nearest-rank p-th percentile: the value at 1-based rank ⌈p/100 · n⌉ (rank 1 when p is 0)."""
    n = len(sorted_values)
    if n == 0:
        raise BadInput("no values to take a percentile of")
    rank = max(1, math.ceil(Fraction(str(p)) * n / 100))
    return sorted_values[min(rank, n) - 1]


def runinfo(elapsed: Mapping[str, float], latencies_ms: Sequence[float] = (), concurrency: int | None = None,
            **extra: Any) -> dict[str, Any]:
    """runinfo.json's content: timings outside the claim, quantiles by nearest rank."""
    lat = sorted(latencies_ms)
    return {
        "elapsed_seconds": {k: round(float(v), 3) for k, v in elapsed.items()},
        "latency_ms": {f"p{p}": round(nearest_rank(lat, p), 3) for p in (50, 95, 99)} if lat else None,
        "queries_timed": len(lat),
        "concurrency": concurrency,
        "host": {"python": platform.python_version(), "machine": platform.machine(), "system": platform.system()},
        **extra,
    }


def write_results(out_dir: Path, results: Results, info: Mapping[str, Any] | None = None) -> Path:
    """Write a results directory. It must not exist or be empty: an old claim is never half-overwritten."""
    out_dir = canonical.refuse_non_empty(Path(out_dir), "results directory")
    with canonical.staged_directory(out_dir) as tmp:
        canonical.write_json(tmp / METRICS_JSON, results.document)
        canonical.write_bytes_atomic(tmp / METRICS_MD, render_metrics_md(results.document).encode("utf-8"))
        for name in sorted(results.extra_files):
            content = results.extra_files[name]
            canonical.write_bytes_atomic(tmp / name, content if isinstance(content, bytes) else content.chunks())
        canonical.write_json(tmp / RUNINFO_JSON, dict(info) if info is not None else runinfo({}))
        write_digest(tmp)
    return out_dir


def runinfo_notes(baseline: Path, candidate: Path) -> tuple[str, ...]:
    """What differs between the two runs' stacks outside the claim (provider, exact server versions, JVM,
    images, binaries): not a reason to refuse a comparison, but a reader should see it."""
    def facts(directory: Path) -> dict[str, Any]:
        path = Path(directory) / RUNINFO_JSON
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        stack = info.get("stack") if isinstance(info, dict) else None
        return _flatten(stack) if isinstance(stack, dict) else {}

    a, b = facts(baseline), facts(candidate)
    return tuple(f"{key} differs: baseline {a.get(key)!s}, candidate {b.get(key)!s}"
                 for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key) and key != "chosen_because")


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, Mapping):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def read_metrics(path: Path) -> dict[str, Any]:
    """metrics.json of a results directory (or the file itself), refused unless it is exactly as written."""
    return read_results(Path(path))
