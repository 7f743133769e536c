"""turnbench from a notebook: a run as a dict, a DataFrame or a ranx Run scores as its file does; results come out
as DataFrames, ranx objects and TREC text, and Jupyter shows the metrics table (docs/api.md, "In a notebook")."""

from __future__ import annotations

import pandas as pd
import pytest

import turnbench
from tests.unit.harness.helpers import small_run
from turnbench.errors import BadInput


def _as_dict(run):
    out: dict[str, dict[str, float]] = {}
    for e in run:
        out.setdefault(e.query_id, {})[e.passage_id] = float(e.score)
    return out


def test_a_dict_a_dataframe_and_a_ranx_run_score_as_the_records_do(small_corpus):
    from ranx import Run

    corpus, passages = small_corpus
    as_records = turnbench.score(corpus, passages, small_run())
    mapping = _as_dict(small_run())
    frame = pd.DataFrame([(e.query_id, e.passage_id, e.score) for e in small_run()],
                         columns=["query_id", "passage_id", "score"])
    for given in (mapping, frame, Run(mapping)):
        assert turnbench.score(corpus, passages, given).document == as_records.document, type(given)


def test_results_come_out_as_dataframes_ranx_trec_and_a_table(small_corpus, tmp_path):
    corpus, passages = small_corpus
    results = turnbench.score(corpus, passages, small_run())
    per_query = results.to_dataframe()
    assert list(per_query["query_id"]) == [q.query_id for q in results.per_query]
    assert per_query.set_index("query_id").loc["q1", "nDCG@10"] == results.per_query[0].values["nDCG@10"] == 1.0
    rows = results.to_dataframe("rows")
    assert rows[rows["class"] == "all"]["nDCG@10"].item() == results.mean("nDCG@10")
    run, qrels = results.to_ranx()
    # the run as scored: rule-5 order, its scores made strictly decreasing so any reader ranks as turnbench did
    q1 = run.to_dict()["q1"]
    assert sorted(q1, key=q1.__getitem__, reverse=True) == ["m1:00001", "m1:00000"]
    assert qrels.to_dict()["q1"] == {"m1:00001": 3}
    written = results.write(tmp_path / "r")
    assert written.to_trec() == ((tmp_path / "r" / "run.passages.trec").read_text(),
                                 (tmp_path / "r" / "qrels.passages.txt").read_text()) == results.to_trec()
    html = results._repr_html_()
    assert "<table" in html and "nDCG@10" in html


@pytest.mark.parametrize("run,message", [
    (pd.DataFrame({"query_id": ["q1"], "passage": ["m1:00001"], "score": [1.0]}), "lacks the column"),
    ({"q1": {"m1:00001": float("nan")}}, "not a finite number"),
    ({"q1": {"m1:00001": "high"}}, "not a number"),
    ({"q1": ["m1:00001"]}, r"not \{passage: score\}"),
    ({"q1": {"": 1.0}}, "non-empty strings"),
])
def test_a_run_in_memory_that_is_not_a_run_is_refused_in_one_line(small_corpus, run, message):
    corpus, passages = small_corpus
    with pytest.raises(BadInput, match=message):
        turnbench.score(corpus, passages, run)


def test_what_is_asked_of_a_result_is_checked(small_corpus):
    corpus, passages = small_corpus
    results = turnbench.score(corpus, passages, small_run())
    with pytest.raises(BadInput, match='"per_query" or "rows"'):
        results.to_dataframe("queries")
    with pytest.raises(BadInput, match="level must be one of passage, meeting"):
        results.to_trec("turn")
