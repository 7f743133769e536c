"""Extra measures: those a paper's table reports beside ours — R@1, P@5, P@10, MAP@100 and Success@1/5/10, at
passage and meeting level — computed only when asked for (``--measure NAME``; docs/harness.md, "Extra measures").

They are computed as the headline measures are (pytrec_eval-terrier over the same qrels and the same run in rule-5
order, ``trec_eval -c``, a grade of 1 or more relevant) and written to a block of their own, ``extra`` in
metrics.json, which exists only when a measure was asked for: the headline tables, the gate and every default claim
byte stay as they were. The block has the retrieval block's shape (measures, class rows, per-query rows), so the
integrity check, the re-derivation from the exported files and ``compare --measure`` read it as they read the others;
trec.json says what each is called in trec_eval and ir_measures (``extra_measures``).

A measure that reads deeper than the run goes (P@10 of a run 5 deep, MAP@100 of one 20 deep) is computed as
trec_eval computes it: the missing ranks are misses (P@k still divides by k). Nothing is refused; metrics.json
records the run's depth (``provenance.inputs.run.max_depth``) beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from turnbench.canonical import q6
from turnbench.harness import metrics
from turnbench.harness.rows import aggregate_rows
from turnbench.results.tables import Block, QueryValues

BLOCK = "extra"
WHAT = ("measures asked for with --measure: computed as the retrieval block's (pytrec_eval, trec_eval -c), "
        "report-only, never in the headline tables or the gate")
# the measure family -> ir_measures' name for it (trec_eval's is the family itself, ``Measure.trec_family``)
_IR_MEASURES = {"R": "R", "P": "P", "MAP": "AP", "Success": "Success"}


def tool_names(measures: Sequence[metrics.Measure]) -> dict[str, dict[str, str]]:
    """Each measure as trec_eval (``-m``) and ir_measures name it, and its level (what trec.json records)."""
    return {str(m): {"level": m.level, "trec_eval": f"{m.trec_family}.{m.cutoff}",
                     "ir_measures": f"{_IR_MEASURES[m.name]}@{m.cutoff}"} for m in measures}


def block(measures: Sequence[metrics.Measure],
          qrels: tuple[Mapping[str, Mapping[str, int]], Mapping[str, Mapping[str, int]]],
          runs: tuple[Mapping[str, Sequence[str]], Mapping[str, Sequence[str]]], scored: metrics.Scorer,
          per_query: Sequence[QueryValues], corpus_id: str, dropped: Mapping[str, int],
          group_by: Sequence[str]) -> Block:
    """The ``extra`` block: ``measures`` (passage ones on the passage qrels and run, meeting ones on the meeting qrels
    and the run collapsed to meetings) for every judged query of ``per_query`` (the retrieval block's rows, whose
    heads it repeats), and their class rows."""
    values: dict[str, dict[str, float]] = {}
    for level, level_qrels, run in zip(metrics.LEVELS, qrels, runs, strict=True):
        mine = [m for m in measures if m.level == level]
        if mine:
            for qid, vals in metrics.evaluate_lists(level_qrels, run, scored, mine).items():
                values.setdefault(qid, {}).update({str(m): q6(v) for m, v in vals.items()})
    rows = [r.with_values(values.get(r.query_id, {}), domain=r.domain) for r in per_query]
    names = [str(m) for m in measures]
    return Block(BLOCK, tuple(names), tuple(group_by), tuple(aggregate_rows(corpus_id, rows, names, dropped)),
                 tuple(rows), what=WHAT)
