"""Strict rows: every passage measure again with only grades 2 and 3 relevant — the sensitivity check of a graded
judgement (does a verdict hold when grade-1 passages, those with some gold but under ``high`` of it, count for
nothing?).

The strict qrels are the passage qrels less their grade-1 lines (``qrels.passages.strict.txt``), scored exactly as
the graded ones. For R@k and MRR that is ``trec_eval -l 2`` on the graded qrels; for nDCG it is not — trec_eval's
``-l`` does not touch the gains nDCG reads — which is why the file is exported rather than a flag stated. A query
with no passage of grade 2 or more has nothing to find under this rule: it is dropped from the strict rows and
counted, as an unjudgeable query is from the graded ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from turnbench.canonical import q6
from turnbench.corpus.records import RANKED_CLASSES, Query
from turnbench.harness import exports, metrics
from turnbench.harness.rows import aggregate_rows
from turnbench.results.tables import Block, QueryValues

THRESHOLD = 2


def strict_qrels(p_qrels: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """The passage qrels with only grades ≥ ``THRESHOLD``; a query left with none is absent."""
    out = {}
    for qid, docs in p_qrels.items():
        kept = {d: g for d, g in docs.items() if g >= THRESHOLD}
        if kept:
            out[qid] = kept
    return out


Values = Mapping[str, Mapping[metrics.Measure, float]]


def block(corpus_id: str, ranked: Sequence[Query], graded_rows: Sequence[QueryValues],
          qrels: Mapping[str, Mapping[str, int]], evaluate: Callable[[Mapping[str, Mapping[str, int]]], Values],
          graded: tuple[Mapping[str, Mapping[str, int]], Values] | None = None) -> Block:
    """The ``strict`` block of metrics.json: rows and per-query values of the passage measures over ``qrels`` (the
    strict qrels), for the turn-level queries the graded rows judged (``graded_rows``); ``evaluate`` scores qrels
    against the run as the graded rows were. With ``graded`` (the graded qrels and their per-query values), a query
    whose strict qrels are its graded ones (no grade-1 passage: most queries) takes its graded values, which are the
    same numbers (a query's values read its own qrels and list only), and only the others are evaluated."""
    if graded is None:
        values = dict(evaluate(qrels))
    else:
        graded_qrels, graded_values = graded
        same = {qid for qid, docs in qrels.items() if graded_qrels.get(qid) == docs and qid in graded_values}
        values = dict(evaluate({qid: docs for qid, docs in qrels.items() if qid not in same}))
        values.update({qid: graded_values[qid] for qid in same})
    names = [str(m) for m in metrics.PASSAGE_MEASURES]
    # each row the graded row's head (no domain, no entry-point error) with its strict values
    per_query = [r.with_values({str(m): q6(v) for m, v in values[r.query_id].items()})
                 for r in graded_rows if r.level == "turn" and r.query_id in qrels]
    turn_level = {r.query_id for r in graded_rows if r.level == "turn"}
    dropped_ids = sorted(turn_level - set(qrels))
    cls_of = {q.id: q.cls for q in ranked}
    dropped = {c: sum(1 for qid in dropped_ids if cls_of[qid] == c) for c in RANKED_CLASSES}
    return Block("strict", tuple(names), ("corpus", "class"), tuple(aggregate_rows(corpus_id, per_query, names,
                                                                                     dropped)),
                 tuple(per_query), threshold=THRESHOLD, dropped=tuple(dropped_ids),
                 rule=f"only grades >= {THRESHOLD} relevant: the passage qrels less their grade-1 lines "
                      "(qrels.passages.strict.txt), scored as the graded ones")


def block_and_qrels(corpus_id: str, ranked: Sequence[Query], graded_rows: Sequence[QueryValues],
                    p_qrels: Mapping[str, Mapping[str, int]],
                    evaluate: Callable[[Mapping[str, Mapping[str, int]]], Values], graded_values: Values | None = None
                    ) -> tuple[Block, bytes]:
    """The strict block over the passage qrels ``p_qrels`` (``graded_values``, when given: their per-query values,
    taken where the strict qrels are the same), and its qrels file (qrels.passages.strict.txt)."""
    qrels = strict_qrels(p_qrels)
    graded = None if graded_values is None else (p_qrels, graded_values)
    return block(corpus_id, ranked, graded_rows, qrels, evaluate, graded), exports.qrels_text(qrels)
