"""Recall of an approximate arm against its reference, worked by hand."""

from __future__ import annotations

from turnbench.engines.approximation import recall_against
from turnbench.rankings import RankedPassage


def _run(qid, ranked):
    return [RankedPassage(qid, pid, rank, score) for rank, (pid, score) in enumerate(ranked, 1)]


def test_recall_counts_the_overlap_of_the_top_k_and_credits_ties_at_the_cut_off():
    # q1: reference top 2 = {a, b}; c ties b's score, so finding c counts. approx top 2 = {a, c} -> 2/2.
    # q2: reference top 2 = {x, y}; approx top 2 = {x, z} -> 1/2.
    # q3: the approximate run returned nothing -> 0.
    reference = (_run("q1", [("a", 0.9), ("b", 0.8), ("c", 0.8), ("d", 0.1)])
                 + _run("q2", [("x", 0.9), ("y", 0.7), ("z", 0.6)]) + _run("q3", [("m", 0.5)]))
    approx = _run("q1", [("a", 9.0), ("c", 8.0), ("d", 1.0)]) + _run("q2", [("x", 5.0), ("z", 4.0)])
    got = recall_against(approx, reference, cutoffs=(2, 3))
    assert got["queries"] == 3
    assert got["recall@2"] == round((1.0 + 0.5 + 0.0) / 3, 6)
    # k = 3: q1 reference top 3 {a, b, c}, approx {a, c, d} -> 2/3; q2 {x, y, z} vs {x, z} -> 2/3; q3 0/1
    assert got["recall@3"] == round((2 / 3 + 2 / 3 + 0.0) / 3, 6)
