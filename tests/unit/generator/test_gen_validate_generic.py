"""The generic checks on a corpus the generator did not write (a QMSum-style import, no facts.jsonl):
they run and can fail; the synthetic checks say n/a."""

from __future__ import annotations

from turnbench.corpus.format import CorpusWriter
from turnbench.corpus.records import Meeting, Query, Turn
from turnbench.generator.validate import GENERIC, SYNTHETIC, failures, validate_corpus


def write(root, meetings, queries):
    with CorpusWriter(root) as w:
        w.write_meetings(meetings)
        w.write_queries(queries)
        w.write_manifest(corpus_id="qmsum-mini", licence={"tier": "A", "name": "MIT"},
                         producer={"name": "turnbench.qmsum", "version": "x"},
                         counts={"meetings": len(meetings), "queries": len(queries)})
    return root


def m(mid, turns, duration=100.0):
    return Meeting(id=mid, title=mid, recorded_date=None, duration=duration, timing="synthetic",
                   speakers=tuple(sorted({t.speaker for t in turns})), turns=tuple(turns))


GOOD = [m("a", [Turn(0, "x", 0.0, 5.0, "hello there"), Turn(1, "y", 4.0, 9.0, "overlap is fine"),
                Turn(2, "x", 4.0, 6.0, "same start is fine")]),
        m("b", [Turn(0, "y", 1.0, 2.0, "one")], duration=2.0)]
QUERIES = [Query("q1", "lookup", "R1", "qmsum", "what", "retrieval", ("a",), {"a": ((0, 1),)}, {"a": (1,)}),
           Query("q2", "summarize", "R8", "qmsum", "sum", "retrieval", ("a", "b"), {"a": ((0, 2),), "b": ((0, 0),)},
                 gold_level="meeting")]


def test_generic_checks_pass_and_synthetic_checks_are_na(tmp_path):
    results = validate_corpus(write(tmp_path / "c", GOOD, QUERIES))
    by = {r.name: r.status for r in results}
    assert [by[c.__name__.removeprefix("check_")] for c in GENERIC] == ["pass"] * len(GENERIC)
    assert [by[c.__name__.removeprefix("check_")] for c in SYNTHETIC] == ["n/a"] * len(SYNTHETIC)
    assert failures(results) == []


def test_times_out_of_order_or_beyond_the_meeting_fail(tmp_path):
    bad = [m("a", [Turn(0, "x", 3.0, 5.0, "t"), Turn(1, "y", 2.0, 4.0, "earlier start")]),
           m("b", [Turn(0, "y", 1.0, 2.5, "past the end")], duration=2.0)]
    assert failures(validate_corpus(write(tmp_path / "c", bad, QUERIES[:1]))) == ["times_ordered"]


def test_sparse_turn_indices_and_duplicate_query_ids_fail(tmp_path):
    sparse = [m("a", [Turn(0, "x", 0.0, 1.0, "t"), Turn(2, "y", 1.0, 2.0, "u"), Turn(3, "x", 2.0, 3.0, "v")]),
              GOOD[1]]
    dup = [QUERIES[0], QUERIES[0]]
    failed = failures(validate_corpus(write(tmp_path / "c", sparse, dup)))
    assert failed == ["turn_indices_dense", "query_ids_unique"] or sorted(failed) == ["query_ids_unique",
                                                                                     "turn_indices_dense"]


def test_gold_naming_missing_meetings_or_turns_and_uncovered_answers_fail(tmp_path):
    qs = [Query("q1", "lookup", "R1", "s", "t", "retrieval", ("a",), {"a": ((0, 7),)}, {"a": (1,)}),
          Query("q2", "lookup", "R1", "s", "t", "retrieval", ("zz",), {"zz": ((0, 0),)}),
          Query("q3", "lookup", "R1", "s", "t", "retrieval", ()),
          Query("q4", "lookup", "R1", "s", "t", "retrieval", ("a",), {"a": ((0, 0),)}, {"a": (2,)})]
    results = {r.name: r for r in validate_corpus(write(tmp_path / "c", GOOD, qs))}
    assert results["gold_refs_real"].status == "fail"
    detail = results["gold_refs_real"].detail
    assert "q1: range [0, 7] outside a's 3 turns" in detail and "q2: gold meeting zz does not exist" in detail
    assert "q3: no gold meetings" in detail
    assert results["gold_spans_cover_answers"].status == "fail"
    assert "q4: answer turn a#2 outside its gold spans" in results["gold_spans_cover_answers"].detail


def test_a_real_qmsum_import_passes_the_generic_checks(tmp_path):
    from tests.unit.generator.helpers import REPO
    from turnbench.corpus.qmsum import import_qmsum

    import_qmsum([REPO / "tests" / "fixtures" / "qmsum" / "ALL"], tmp_path / "qm")
    results = validate_corpus(tmp_path / "qm")
    assert failures(results) == []
    assert sum(r.status == "pass" for r in results) == len(GENERIC)
