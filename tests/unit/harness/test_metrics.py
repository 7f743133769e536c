"""pytrec_eval behind ``evaluate``: hand-derived reference values, trec_eval -c, and the tie trap."""

from __future__ import annotations

import math
from math import log2

import pytest

from turnbench.errors import BadInput
from turnbench.harness.metrics import ALL_MEASURES, MEETING_MEASURES, PASSAGE_MEASURES, Measure, evaluate
from turnbench.passages import Passage
from turnbench.rankings import RankedPassage, normalise

NDCG5, NDCG10, NDCG20 = (Measure("nDCG", k) for k in (5, 10, 20))
R5, R10, R20 = (Measure("R", k) for k in (5, 10, 20))
MRR = Measure("MRR")


def ranked(*ids):
    """A tie-free run: strictly decreasing scores in list order."""
    return [(d, float(len(ids) - i)) for i, d in enumerate(ids)]


def one(qrels, run_ids, measures=PASSAGE_MEASURES):
    return evaluate({"q": qrels}, {"q": ranked(*run_ids)}, measures)["q"]


def test_measures_are_hashable_values_with_canonical_strings():
    assert [str(m) for m in ALL_MEASURES] == ["nDCG@5", "nDCG@10", "nDCG@20", "R@5", "R@10", "R@20", "MRR",
                                              "meeting:nDCG@10", "meeting:R@10"]
    for m in ALL_MEASURES:
        assert Measure.parse(str(m)) == m and hash(Measure.parse(str(m))) == hash(m)
    assert NDCG10.trec_key == "ndcg_cut_10" and R5.trec_key == "recall_5" and MRR.trec_key == "recip_rank"
    assert MEETING_MEASURES[0] == Measure("nDCG", 10, "meeting")
    for bad in ("nDCG", "MRR@10", "P", "MAP", "Success", "AP@100", "meeting:", "nDCG@0"):
        with pytest.raises(BadInput):
            Measure.parse(bad)


def test_graded_3_2_1_with_linear_gain():
    # qrels a:3 b:2 c:1, ranked worst first [c, b, a].
    # DCG  = 1/log2(2) + 2/log2(3) + 3/log2(4) = 1 + 1.2618595 + 1.5 = 3.7618595
    # IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4) = 3 + 1.2618595 + 0.5 = 4.7618595
    v = one({"a": 3, "b": 2, "c": 1}, ["c", "b", "a"])
    expected = (1 / log2(2) + 2 / log2(3) + 3 / log2(4)) / (3 / log2(2) + 2 / log2(3) + 1 / log2(4))
    assert v[NDCG10] == pytest.approx(expected, abs=1e-12)
    assert round(v[NDCG10], 6) == 0.789998
    # exponential gain (2^g - 1) would give (1 + 3/log2(3) + 7/2) / (7 + 3/log2(3) + 1/2) = 0.6806, not this
    assert round((1 + 3 / log2(3) + 3.5) / (7 + 3 / log2(3) + 0.5), 4) == 0.6806
    assert v[MRR] == 1.0 and v[R5] == 1.0


def test_ndcg_cut_truncates_the_ideal_ranking_at_k():
    # six relevant passages (grade 1), the run returns five of them and nothing else.
    qrels = {d: 1 for d in "abcdef"}
    v = one(qrels, list("abcde"))
    # @5: the ideal list is cut at 5 too, so five relevant in five slots is perfect: 1.0
    assert v[NDCG5] == 1.0
    # @10: DCG = sum_{i=1..5} 1/log2(i+1) = 2.948459; IDCG = sum_{i=1..6} = 3.304666 -> 0.892211
    dcg5 = sum(1 / log2(i + 1) for i in range(1, 6))
    idcg6 = sum(1 / log2(i + 1) for i in range(1, 7))
    assert v[NDCG10] == pytest.approx(dcg5 / idcg6, abs=1e-12)
    assert round(v[NDCG10], 6) == 0.892211
    # recall@5 = 5 of 6
    assert v[R5] == pytest.approx(5 / 6, abs=1e-12)


def test_an_unjudged_passage_takes_a_rank_slot():
    # qrels a:1; the run puts an unjudged x first.
    v = one({"a": 1}, ["x", "a"])
    # DCG = 0 + 1/log2(3); IDCG = 1 -> 0.630930; RR = 1/2; recall@5 = 1/1
    assert round(v[NDCG10], 6) == 0.630930 == round(1 / log2(3), 6)
    assert v[MRR] == 0.5 and v[R5] == 1.0


def test_recall_and_ndcg_with_a_gap_and_graded_qrels():
    # qrels a:2 b:1 c:1 d:1; run [a, x, b].
    v = one({"a": 2, "b": 1, "c": 1, "d": 1}, ["a", "x", "b"])
    # recall@5 = 2 of 4 relevant = 0.5
    assert v[R5] == 0.5
    # DCG@5 = 2/log2(2) + 0 + 1/log2(4) = 2.5; IDCG@5 = 2 + 1/log2(3) + 1/log2(4) + 1/log2(5) = 3.561606
    expected = 2.5 / (2 + 1 / log2(3) + 1 / log2(4) + 1 / log2(5))
    assert v[NDCG5] == pytest.approx(expected, abs=1e-12)
    assert round(v[NDCG5], 6) == 0.701930


def test_mrr_reaches_over_the_whole_run_depth_while_cutoffs_do_not():
    # the only relevant passage sits at rank 25, past every cutoff
    run = [f"x{i:02d}" for i in range(24)] + ["a"]
    v = one({"a": 1}, run)
    assert v[MRR] == 1 / 25 == 0.04
    assert v[R20] == 0.0 and v[NDCG20] == 0.0


def test_unanswered_query_scores_zero_and_naive_mean_would_read_one():
    import pytrec_eval

    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ranked("a")}  # q2 was not answered at all
    # pytrec_eval alone leaves q2 out, so a mean over what came back reads 1.000 ...
    raw = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate({q: dict(r) for q, r in run.items()})
    naive = math.fsum(r["ndcg_cut_10"] for r in raw.values()) / len(raw)
    assert sorted(raw) == ["q1"] and naive == 1.0
    # ... where the truth over every judged query is 0.500 (trec_eval -c)
    ours = evaluate(qrels, run, [NDCG10])
    assert ours == {"q1": {NDCG10: 1.0}, "q2": {NDCG10: 0.0}}
    assert math.fsum(v[NDCG10] for v in ours.values()) / len(ours) == 0.5
    # an empty list counts as unanswered too; run queries without qrels are ignored
    assert evaluate(qrels, {"q1": ranked("a"), "q2": [], "zz": ranked("a")}, [NDCG10]) == ours


def test_trec_eval_breaks_score_ties_by_doc_id_and_normalise_removes_it():
    # the same tied input, two namings: trec_eval orders tied documents by id DESCENDING.
    tie_gold_first = {"q": [("gold", 1.0), ("a", 1.0)]}  # "gold" > "a": gold ranks 1st
    tie_gold_last = {"q": [("gold", 1.0), ("z", 1.0)]}  # "z" > "gold": gold ranks 2nd
    first = evaluate({"q": {"gold": 1}}, tie_gold_first, [NDCG10])["q"][NDCG10]
    last = evaluate({"q": {"gold": 1}}, tie_gold_last, [NDCG10])["q"][NDCG10]
    assert (f"{last:.6f}", f"{first:.6f}") == ("0.630930", "1.000000")
    # after docs/design.md §3 rule 5 the order is (-score, kind, meeting, index): ids no longer matter
    gold = Passage("gold", "m1", "s", 5.0, 6.0, 1)
    for other_id in ("a", "z"):
        other = Passage(other_id, "m1", "s", 0.0, 1.0, 0)  # earlier in the meeting: wins the tie
        entries = [RankedPassage("q", "gold", 1, 1.0), RankedPassage("q", other_id, 2, 1.0)]
        run = normalise(entries, {p.id: p for p in (gold, other)})
        pairs = {"q": [(e.passage_id, e.score) for e in run["q"]]}
        assert [e.passage_id for e in run["q"]] == [other_id, "gold"]
        assert f"{evaluate({'q': {'gold': 1}}, pairs, [NDCG10])['q'][NDCG10]:.6f}" == "0.630930"


def test_qrels_without_a_relevant_document_are_refused():
    with pytest.raises(BadInput, match="unjudgeable"):
        evaluate({"q": {"a": 0}}, {"q": ranked("a")}, [NDCG10])


def test_the_depth_read_is_the_deepest_cutoff_or_the_first_relevant_document_below_it():
    from turnbench.harness.metrics import depth_read

    run = [f"x{i:02d}" for i in range(24)] + ["a", "b"]
    assert depth_read(PASSAGE_MEASURES, run, {"a"}) == 25  # MRR reads down to rank 25
    assert depth_read(PASSAGE_MEASURES, run, {"x03", "b"}) == 20  # its first relevant is above the cutoffs
    assert depth_read(PASSAGE_MEASURES, run, {"zz"}) == 20  # none retrieved: MRR 0 at any depth
    assert depth_read((NDCG5, R10), run, {"b"}) == 10  # no MRR: nothing below the deepest cutoff is read
    assert depth_read(MEETING_MEASURES, run, {"b"}) == 10


@pytest.mark.parametrize("seed", range(6))
def test_a_run_cut_at_the_depth_read_scores_what_the_whole_run_scores(seed):
    """The claim scoring rests on when it hands pytrec_eval each run cut at ``depth_read``: every measure of both
    levels, on runs 100 deep with graded qrels whose relevant documents sit anywhere, or nowhere, in them."""
    import random

    from turnbench.harness.metrics import depth_read

    rng = random.Random(seed)
    docs = [f"d{i:03d}" for i in range(300)]
    qrels, whole, cut = {}, {}, {}
    for q in range(60):
        run = rng.sample(docs, rng.choice((1, 5, 19, 20, 21, 100)))
        pool = run if q % 4 else docs  # a quarter of the queries: relevant documents mostly outside the run
        qrels[f"q{q}"] = {d: rng.randint(1, 3) for d in rng.sample(pool, rng.randint(1, min(8, len(pool))))}
        whole[f"q{q}"] = ranked(*run)
        for measures in (PASSAGE_MEASURES, MEETING_MEASURES):
            cut[(measures, f"q{q}")] = ranked(*run[:depth_read(measures, run, qrels[f"q{q}"])])
    for measures in (PASSAGE_MEASURES, MEETING_MEASURES):
        want = evaluate(qrels, whole, measures)
        got = evaluate(qrels, {q: cut[(measures, q)] for q in qrels}, measures)
        assert got == want
    # the case that matters: a first relevant document deep in a 100-deep run still sets MRR exactly
    deep = [f"d{i:03d}" for i in range(100)]
    assert evaluate({"q": {"d087": 1}}, {"q": ranked(*deep[:depth_read(PASSAGE_MEASURES, deep, {"d087"})])},
                    [MRR])["q"][MRR] == 1 / 88


def test_the_engine_version_read_beside_the_module_is_the_installed_distributions():
    from importlib.metadata import version

    from turnbench.harness import metrics as M

    assert M.engine_version() == version(M.ENGINE_DIST) and M.engine_provenance()["version"] == M.engine_version()
