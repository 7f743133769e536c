"""A claim is re-derived, not trusted (docs/design.md §12 rule 5): every per-query value of a results directory
recomputed from the qrels and runs exported beside it, and compared with what metrics.json says.

A digest (claim.sha256) proves only that nothing changed since the files were written: a forger who rewrites the
per-query values, the rows and the digest together passes it. The exported files are the evidence the values came
from — ``qrels.passages.txt`` with ``run.passages.trec`` for passage measures, ``qrels.meetings.txt`` with
``run.meetings.trec`` for meeting measures — so a value they do not give, or a judged query they do not hold, is
refused (ResultsIntegrityError, exit 3) naming the first query and measure. The scoring is the scorer's own
(``turnbench.harness.metrics``: pytrec_eval, ``trec_eval -c``), so a value re-derives to the same six decimals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turnbench.canonical import q6
from turnbench.errors import ResultsIntegrityError
from turnbench.harness import exports as X
from turnbench.harness import metrics as M

NEEDED = (X.QRELS_PASSAGES, X.QRELS_MEETINGS, X.RUN_PASSAGES, X.RUN_MEETINGS)


def _run(data: X.Content, where: str) -> dict[str, dict[str, float]]:
    return {qid: dict(docs) for qid, docs in X.parse_run(data, where).items()}


def rederive(document: Mapping[str, Any], files: Mapping[str, X.Content], where: str) -> int:
    """Refuse ``document`` unless its exported ``files`` give every per-query value it claims; returns how many
    values were re-derived."""
    missing = [name for name in NEEDED if name not in files]
    if missing:
        raise ResultsIntegrityError(f"{where}: no {missing[0]} beside metrics.json, so its numbers cannot be "
                                    "re-derived from the evidence; re-score it")
    block = document["retrieval"]
    measures = [M.Measure.parse(m) for m in block["measures"]]
    by_level = {level: [m for m in measures if m.level == level] for level in M.LEVELS}
    qrels = {"passage": X.parse_qrels(X.content_bytes(files[X.QRELS_PASSAGES]), f"{where}/{X.QRELS_PASSAGES}"),
             "meeting": X.parse_qrels(X.content_bytes(files[X.QRELS_MEETINGS]), f"{where}/{X.QRELS_MEETINGS}")}
    runs = {"passage": _run(files[X.RUN_PASSAGES], f"{where}/{X.RUN_PASSAGES}"),
            "meeting": _run(files[X.RUN_MEETINGS], f"{where}/{X.RUN_MEETINGS}")}
    claimed = {r["query_id"]: r for r in block["per_query"]}
    derived: dict[str, dict[str, float]] = {}
    for level, ms in by_level.items():
        if not ms or not qrels[level]:
            continue
        stray = sorted(set(qrels[level]) - set(claimed))
        if stray:
            raise ResultsIntegrityError(f"{where}: {stray[0]} is judged in the exported {level} qrels but has no "
                                        "per-query row in metrics.json")
        for qid, values in M.evaluate(qrels[level], runs[level], ms).items():
            derived.setdefault(qid, {}).update({str(m): q6(v) for m, v in values.items()})
    count = 0
    for qid in sorted(claimed):
        said, given = claimed[qid]["values"], derived.get(qid, {})
        for m in sorted(set(said) | set(given)):
            if said.get(m) != given.get(m):
                raise ResultsIntegrityError(
                    f"{where}: query {qid} {m}: metrics.json says {said.get(m)!r}, its exported qrels and run give "
                    f"{given.get(m)!r}")
            count += 1
        if claimed[qid]["answered"] != bool(runs["passage"].get(qid)):
            raise ResultsIntegrityError(f"{where}: query {qid}: metrics.json says answered = "
                                        f"{claimed[qid]['answered']}, its exported runs say otherwise")
    return count
