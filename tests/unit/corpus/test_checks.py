"""The generic checks (turnbench/corpus/checks.py) on corpora the generator did not write: a hand-built
QMSum-style corpus with no facts.jsonl, and a real QMSum import. They run, pass, and can fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.corpus.helpers import GOOD, QMSUM_FIXTURE, QUERIES, fixture_release_of, m, write
from turnbench.corpus.checks import (
    GENERIC,
    CheckResult,
    check_name,
    failures,
    generic_results,
    result_of,
    run_check,
    scan_corpus,
)
from turnbench.corpus.format import open_corpus
from turnbench.corpus.records import Query, Turn


def validate(root: Path) -> list[CheckResult]:
    return generic_results(scan_corpus(open_corpus(root)))


def test_generic_checks_pass_in_their_fixed_order(tmp_path):
    results = validate(write(tmp_path / "c", GOOD, QUERIES))
    assert [r.name for r in results] == [check_name(c) for c in GENERIC] == [
        "manifest_hashes", "manifest_counts", "meeting_ids_unique", "query_ids_unique", "ids_portable",
        "meetings_have_turns", "turn_indices_dense", "times_ordered", "speaker_turns_disjoint", "gold_refs_real",
        "gold_spans_cover_answers"]
    assert [r.status for r in results] == ["pass"] * len(GENERIC)
    assert results[1].detail == "2 meetings, 4 turns, 2 queries"


def test_ids_a_run_line_cannot_carry_and_meetings_without_turns_fail(tmp_path):
    bad = [m("a b", [Turn(0, "x", 0.0, 1.0, "t")]), m("c/d", [Turn(0, "x", 0.0, 1.0, "t")]), m("e", [])]
    queries = [Query("q\t1", "summarize", "R8", "qmsum", "sum", "retrieval", ("e",), gold_level="meeting")]
    results = {r.name: r for r in validate(write(tmp_path / "c", bad, queries))}
    assert failures(results.values()) == ["ids_portable", "meetings_have_turns"]
    assert results["ids_portable"].detail.startswith("3 problem(s): meeting id 'a b' holds ' '")
    assert "meeting id 'c/d' holds '/'" in results["ids_portable"].detail
    assert "query id 'q\\t1' holds '\\t'" in results["ids_portable"].detail
    assert results["meetings_have_turns"].detail == "1 problem(s): meeting e has no turns"


def test_times_out_of_order_or_beyond_the_meeting_fail(tmp_path):
    bad = [m("a", [Turn(0, "x", 3.0, 5.0, "t"), Turn(1, "y", 2.0, 4.0, "earlier start")]),
           m("b", [Turn(0, "y", 1.0, 2.5, "past the end")], duration=2.0)]
    assert failures(validate(write(tmp_path / "c", bad, QUERIES[:1]))) == ["times_ordered"]


def test_a_speaker_overlapping_themselves_fails_naming_both_turns(tmp_path):
    # other speakers may overlap and share starts; one speaker may not, not even with a zero-length turn
    bad = [m("a", [Turn(0, "x", 0.0, 5.0, "long turn"), Turn(1, "y", 1.0, 2.0, "other speaker inside"),
                   Turn(2, "x", 4.5, 6.0, "starts before x's first turn ends"), Turn(3, "x", 6.0, 7.0, "touching")]),
           m("b", [Turn(0, "y", 0.0, 2.0, "t"), Turn(1, "y", 1.0, 1.0, "an instant inside")], duration=2.0)]
    results = {r.name: r for r in validate(write(tmp_path / "c", bad, QUERIES[:1]))}
    assert failures(results.values()) == ["speaker_turns_disjoint"]
    detail = results["speaker_turns_disjoint"].detail
    assert detail.startswith("2 problem(s): ")
    assert "a#2 starts at 4.5 before x's #0 ends at 5.0" in detail and "b#1 starts at 1.0 before y's #0" in detail


def test_sparse_turn_indices_and_duplicate_query_ids_fail(tmp_path):
    sparse = [m("a", [Turn(0, "x", 0.0, 1.0, "t"), Turn(2, "y", 1.0, 2.0, "u"), Turn(3, "x", 2.0, 3.0, "v")]),
              GOOD[1]]
    dup = [QUERIES[0], QUERIES[0]]
    failed = failures(validate(write(tmp_path / "c", sparse, dup)))
    assert failed == ["query_ids_unique", "turn_indices_dense"]


def test_gold_naming_missing_meetings_or_turns_and_uncovered_answers_fail(tmp_path):
    qs = [Query("q1", "lookup", "R1", "s", "t", "retrieval", ("a",), {"a": ((0, 7),)}, {"a": (1,)}),
          Query("q2", "lookup", "R1", "s", "t", "retrieval", ("zz",), {"zz": ((0, 0),)}),
          Query("q3", "lookup", "R1", "s", "t", "retrieval", ()),
          Query("q4", "lookup", "R1", "s", "t", "retrieval", ("a",), {"a": ((0, 0),)}, {"a": (2,)})]
    results = {r.name: r for r in validate(write(tmp_path / "c", GOOD, qs))}
    assert results["gold_refs_real"].status == "fail"
    detail = results["gold_refs_real"].detail
    assert "q1: range [0, 7] outside a's 3 turns" in detail and "q2: gold meeting zz does not exist" in detail
    assert "q3: no gold meetings" in detail
    assert results["gold_spans_cover_answers"].status == "fail"
    assert "q4: answer turn a#2 outside its gold spans" in results["gold_spans_cover_answers"].detail


def test_a_real_qmsum_import_passes_the_generic_checks(tmp_path):
    from turnbench.corpus.qmsum import import_qmsum

    import_qmsum([QMSUM_FIXTURE / "ALL"], tmp_path / "qm", release=fixture_release_of(tmp_path, "qmsum"))
    results = validate(tmp_path / "qm")
    assert failures(results) == []
    assert sum(r.status == "pass" for r in results) == len(GENERIC)


def test_the_scan_reads_each_meeting_once_in_file_order_and_keeps_repeats_visible(tmp_path):
    again = m("a", [Turn(0, "z", 0.0, 1.0, "repeat")])
    corpus = open_corpus(write(tmp_path / "c", [*GOOD, again], QUERIES))
    seen: list[str] = []
    scan = scan_corpus(corpus, on_meeting=lambda meeting: seen.append(meeting.id))
    assert seen == ["a", "b", "a"] and scan.meeting_order == ("a", "b", "a")
    assert scan.duplicate_meetings == ("a",)
    assert scan.turn_count("a") == 1 and scan.turn_count("b") == 1 and scan.turn_count("nowhere") == 0
    assert scan.meetings["b"].duration == 2.0 and scan.meetings["a"].title == "a"
    assert scan.queries == tuple(QUERIES) and scan.dense_problems == () and scan.time_problems == ()
    # the repeat replaced the first "a", so q1's span [0, 1] no longer fits in it
    assert failures(generic_results(scan)) == ["meeting_ids_unique", "gold_refs_real"]


def test_given_queries_are_used_instead_of_reading_them(tmp_path):
    corpus = open_corpus(write(tmp_path / "c", GOOD, QUERIES))
    assert scan_corpus(corpus, QUERIES[:1]).queries == (QUERIES[0],)


def test_result_helpers_name_the_first_problems_and_count_the_rest():
    assert result_of("x", [], "fine") == CheckResult("x", "pass", "fine")
    r = result_of("x", [f"p{i}" for i in range(7)], "fine")
    assert r.status == "fail" and not r.ok
    assert r.detail == "7 problem(s): p0; p1; p2; p3; p4 ... and 2 more"
    assert r.line() == "FAIL  x                           7 problem(s): p0; p1; p2; p3; p4 ... and 2 more"
    assert CheckResult("y", "n/a", "why").ok
    assert failures([r, CheckResult("y", "n/a", "why")]) == ["x"]


@pytest.mark.parametrize("exc", [KeyError("turn"), ValueError("bad"), TypeError("t"), AttributeError("a")])
def test_a_check_that_cannot_read_its_data_fails_instead_of_raising(exc):
    def check_broken(record: object) -> CheckResult:
        raise exc

    r = run_check(check_broken, None)
    assert (r.name, r.status) == ("broken", "fail")
    assert r.detail == f"malformed corpus data: {type(exc).__name__}: {exc}"
