"""The QMSum adapter's judgement calls (turnbench/corpus/qmsum_rules.py), by hand: domains, summary
requests, synthetic times and spans."""

from __future__ import annotations

import pytest

from turnbench.corpus import qmsum_rules


def test_domain_rules():
    assert qmsum_rules.domain_of("ES2002a", []) == "product"
    assert qmsum_rules.domain_of("IS1000b", []) == "product"
    assert qmsum_rules.domain_of("TS3003d", []) == "product"
    assert qmsum_rules.domain_of("Bed003", []) == "academic"
    assert qmsum_rules.domain_of("Bro019", []) == "academic"
    assert qmsum_rules.domain_of("education_17", []) == "committee"
    assert qmsum_rules.domain_of("covid_4", []) == "committee"
    assert qmsum_rules.domain_of("x", ["PhD A", "Grad B", "Professor C"]) == "academic"
    assert qmsum_rules.domain_of("x", ["The Chair", "Mr. Smith"]) == "committee"
    assert qmsum_rules.domain_of("x", ["Alice", "Bob"]) == "unknown"


def test_parse_spans_reasons():
    assert qmsum_rules.parse_spans([["0", "2"], ["2", "3"]], 5) == (((0, 3),), "", "")
    assert qmsum_rules.parse_spans([["3", "1"]], 5)[1] == "span_reversed"
    assert qmsum_rules.parse_spans([["3", "5"]], 5)[1] == "span_out_of_range"
    assert qmsum_rules.parse_spans([["-1", "2"]], 5)[1] == "span_malformed"
    assert qmsum_rules.parse_spans([["1"]], 5)[1] == "span_malformed"
    assert qmsum_rules.parse_spans([], 5)[1] == "no_span"
    assert qmsum_rules.parse_spans([[1, 4]], 5) == (((1, 4),), "", "")


def test_summary_rule():
    yes = ["Summarize the whole meeting.", "summarise the talk", "  Sum up the decisions",
           "Give a summary of the budget", "What did the team discuss about the cost?"]
    no = ["What did Marketing say?", "What did the group think of the beep?", "Why did they summarize?"]
    assert all(qmsum_rules.is_summary_request(t) for t in yes)
    assert not any(qmsum_rules.is_summary_request(t) for t in no)


def test_merge_ranges_merges_overlapping_and_adjacent_ranges_only():
    assert qmsum_rules.merge_ranges([]) == ()
    assert qmsum_rules.merge_ranges([(4, 5), (0, 1), (2, 2)]) == ((0, 2), (4, 5))  # [0,1] and [2,2] touch
    assert qmsum_rules.merge_ranges([(3, 4), (4, 5), (9, 9), (1, 8)]) == ((1, 9),)
    assert qmsum_rules.merge_ranges([(6, 7), (4, 4)]) == ((4, 4), (6, 7))  # a gap of one turn stays


def test_synthetic_turns_last_by_word_count_with_gaps_in_whole_milliseconds():
    turns, duration = qmsum_rules.synthetic_turns([
        {"speaker": " A ", "content": "one two three"},
        {"speaker": "B", "content": ""},
        {"speaker": "A", "content": "four five"},
    ])
    assert [(t.index, t.speaker, t.start, t.end) for t in turns] == [
        (0, "A", 0.0, 1.2), (1, "B", 1.7, 2.1), (2, "A", 2.6, 3.4)]
    assert duration == 3.4


@pytest.mark.parametrize("spans, reason", [("0-2", "no_span"), ([[0, 1], [True, 2]], "span_malformed"),
                                           ([[0, 1], [2, 1]], "span_reversed")])
def test_one_bad_span_refuses_the_whole_query(spans, reason):
    ranges, got, detail = qmsum_rules.parse_spans(spans, 5)
    assert (ranges, got) == ((), reason) and detail
