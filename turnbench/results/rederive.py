"""A claim is re-derived, not trusted (docs/design.md §12 rule 5): every per-query value of a results directory
recomputed from the qrels and runs exported beside it, and compared with what metrics.json says.

A digest (claim.sha256) proves only that nothing changed since the files were written: a forger who rewrites the
per-query values, the rows and the digest together passes it. The exported files are the evidence the values came
from — ``qrels.passages.txt`` with ``run.passages.trec`` for passage measures, ``qrels.meetings.txt`` with
``run.meetings.trec`` for meeting measures, ``qrels.passages.strict.txt`` for the strict rows, ``spans.jsonl`` and
``passages.jsonl`` for the span and entry-point measures — so a value they do not give, or a judged query they do
not hold, is refused (ResultsIntegrityError, exit 3) naming the first query and measure. The scoring is the scorer's
own (pytrec_eval, ``trec_eval -c``; ``turnbench.harness.spans``), so a value re-derives to the same six decimals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turnbench import canonical
from turnbench.canonical import q6
from turnbench.errors import ResultsIntegrityError
from turnbench.harness import exports, metrics
from turnbench.harness.exports import (
    PASSAGES,
    QRELS_MEETINGS,
    QRELS_PASSAGES,
    QRELS_STRICT,
    RUN_MEETINGS,
    RUN_PASSAGES,
    SPANS,
)
from turnbench.harness.spans import entry_values, span_values

NEEDED = (QRELS_PASSAGES, QRELS_MEETINGS, RUN_PASSAGES, RUN_MEETINGS, QRELS_STRICT, SPANS, PASSAGES)


def _run(data: exports.Content, where: str) -> dict[str, dict[str, float]]:
    return {qid: dict(docs) for qid, docs in exports.parse_run(data, where).items()}


def rederive(document: Mapping[str, Any], files: Mapping[str, exports.Content], where: str) -> int:
    """Refuse ``document`` unless its exported ``files`` give every per-query value it claims; returns how many
    values were re-derived."""
    missing = [name for name in NEEDED if name not in files]
    if missing:
        raise ResultsIntegrityError(f"{where}: no {missing[0]} beside metrics.json, so its numbers cannot be "
                                    "re-derived from the evidence; re-score it")
    block = document["retrieval"]
    runs = {"passage": _run(files[RUN_PASSAGES], f"{where}/{RUN_PASSAGES}"),
            "meeting": _run(files[RUN_MEETINGS], f"{where}/{RUN_MEETINGS}")}
    qrels = {"passage": exports.parse_qrels(exports.content_bytes(files[QRELS_PASSAGES]), f"{where}/{QRELS_PASSAGES}"),
             "meeting": exports.parse_qrels(exports.content_bytes(files[QRELS_MEETINGS]), f"{where}/{QRELS_MEETINGS}")}
    # each passage's start and meeting: read only when a meeting or comparable measure reads them
    starts, meeting_of = (_inventory(files) if any(m.startswith(("meeting:", "span:", "entry:"))
                                                    for m in block["measures"]) else ({}, {}))
    if any(m.startswith("meeting:") for m in block["measures"]):
        _check_meeting_run(runs, meeting_of, where)
    derived = _trec_values(block, qrels, runs, where)
    for qid, values in _comparable_values(block, files, runs["passage"], starts, meeting_of).items():
        derived.setdefault(qid, {}).update(values)
    count = _same(block, derived, where, "metrics.json")
    for row in block["per_query"]:
        if row["answered"] != bool(runs["passage"].get(row["query_id"])):
            raise ResultsIntegrityError(f"{where}: query {row['query_id']}: metrics.json says answered = "
                                        f"{row['answered']}, its exported runs say otherwise")
    if "extra" in document:  # the measures asked for: on the same qrels and runs
        count += _same(document["extra"], _trec_values(document["extra"], qrels, runs, where), where,
                       "metrics.json's extra block")
    if "strict" in document:
        strict_q = {"passage": exports.parse_qrels(exports.content_bytes(files[QRELS_STRICT]),
                                                   f"{where}/{QRELS_STRICT}"),
                    "meeting": {}}
        count += _same(document["strict"], _trec_values(document["strict"], strict_q, runs, where), where,
                       "metrics.json's strict block")
    return count


def _trec_values(block: Mapping[str, Any], qrels: Mapping[str, Mapping[str, Mapping[str, int]]],
                 runs: Mapping[str, Mapping[str, Mapping[str, float]]], where: str) -> dict[str, dict[str, float]]:
    measures = [metrics.Measure.parse(m) for m in block["measures"] if not m.startswith(("span:", "entry:"))]
    claimed = {r["query_id"] for r in block["per_query"]}
    derived: dict[str, dict[str, float]] = {}
    for level in metrics.LEVELS:
        ms = [m for m in measures if m.level == level]
        if not ms or not qrels[level]:
            continue
        stray = sorted(set(qrels[level]) - claimed)
        if stray:
            raise ResultsIntegrityError(f"{where}: {stray[0]} is judged in the exported {level} qrels but has no "
                                        "per-query row in metrics.json")
        for qid, values in metrics.evaluate(qrels[level], runs[level], ms).items():
            derived.setdefault(qid, {}).update({str(m): q6(v) for m, v in values.items()})
    return derived


def _inventory(files: Mapping[str, exports.Content]) -> tuple[dict[str, float], dict[str, str]]:
    """Each passage's start and meeting, from passages.jsonl."""
    starts, meeting_of = {}, {}
    for line in exports.content_bytes(files[PASSAGES]).decode("utf-8").splitlines():
        p = canonical.parse_json(line)
        starts[p["id"]], meeting_of[p["id"]] = float(p["start"]), str(p["meeting"])
    return starts, meeting_of


def _check_meeting_run(runs: Mapping[str, Mapping[str, Mapping[str, float]]], meeting_of: Mapping[str, str],
                       where: str) -> None:
    """run.meetings.trec must be run.passages.trec collapsed to meetings by first occurrence, query by query."""
    meetings = runs["meeting"]
    for qid in sorted(set(runs["passage"]) | set(meetings)):
        collapsed = list(dict.fromkeys(meeting_of.get(pid, "") for pid in runs["passage"].get(qid, {})))
        if collapsed != list(meetings.get(qid, {})):
            raise ResultsIntegrityError(f"{where}: query {qid}: {RUN_MEETINGS} is not {RUN_PASSAGES} collapsed to "
                                        f"meetings by first occurrence ({PASSAGES} names each passage's meeting)")


def _comparable_values(block: Mapping[str, Any], files: Mapping[str, exports.Content],
                       run: Mapping[str, Mapping[str, float]], starts: Mapping[str, float],
                       meeting_of: Mapping[str, str]) -> dict[str, dict[str, float]]:
    """The span and entry-point values spans.jsonl and passages.jsonl give, for the measures the block names."""
    names = [m for m in block["measures"] if m.startswith(("span:", "entry:"))]
    if not names:
        return {}
    gold, words, held = {}, {}, {}
    for line in exports.content_bytes(files[SPANS]).decode("utf-8").splitlines():
        row = canonical.parse_json(line)
        if "query" in row:
            gold[row["query"]] = row
        else:
            words[row["passage"]] = int(row["words"])
            held[row["passage"]] = [tuple(s) for s in row.get("spans", ())]
    # a query's gold is a few turns: look only at the passages holding words of those turns, in file order
    position = {pid: i for i, pid in enumerate(held)}
    by_turn: dict[tuple[str, int], list[str]] = {}
    for pid, spans in held.items():
        for t, _, _ in spans:  # a passage listed twice under a turn is found once: the holders are a set
            by_turn.setdefault((meeting_of[pid], t), []).append(pid)
    out = {}
    timed = any(m.startswith("entry:") for m in names)
    for qid, g in gold.items():
        ranked = list(run.get(qid, {}))
        mine = {}
        for m, spans in g["gold"].items():
            turns = {t for t, _, _ in spans}
            holding = {pid for t in turns for pid in by_turn.get((m, t), ())}
            for pid in sorted(holding, key=position.__getitem__):
                mine[pid] = tuple(s for s in held[pid] if s[0] in turns)
        values = span_values(ranked, int(g["gold_words"]), mine, words, meeting_of)
        if timed:
            values.update(entry_values(ranked, g["gold_start"], mine, starts, meeting_of)[0])
        out[qid] = {m: q6(v) for m, v in values.items() if m in names}
    return out


def _same(block: Mapping[str, Any], derived: Mapping[str, Mapping[str, float]], where: str, what: str) -> int:
    count = 0
    for r in sorted(block["per_query"], key=lambda r: r["query_id"]):
        said, given = r["values"], derived.get(r["query_id"], {})
        for m in sorted(set(said) | set(given)):
            if said.get(m) != given.get(m):
                raise ResultsIntegrityError(f"{where}: query {r['query_id']} {m}: {what} says {said.get(m)!r}, its "
                                            f"exported qrels and run give {given.get(m)!r}")
            count += 1
    return count
