"""The exported qrels and runs: anyone can score them, and they give metrics.json back (checked with ir_measures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.harness.helpers import reproduce_with_ir_measures, score, small_run
from turnbench.errors import BadInput
from turnbench.harness import exports as X
from turnbench.rankings import RankedPassage
from turnbench.results.directory import write_results

ROOT = Path(__file__).resolve().parents[3]


def _assert_reproduced(directory: Path) -> None:
    doc = json.loads((directory / "metrics.json").read_text())
    again = reproduce_with_ir_measures(directory)
    trec = json.loads((directory / "trec.json").read_text())["measures"]
    for r in doc["retrieval"]["per_query"]:
        for m, v in r["values"].items():
            if m not in trec:
                continue  # words and seconds, not trec measures: re-derived in test_spans
            assert round(again[r["query_id"]][m], 6) == v, (r["query_id"], m)


def test_ir_measures_reproduces_every_number_including_unanswered_and_dropped(tmp_path, small_corpus):
    corpus, passages = small_corpus
    # q3 (summarize) is left unanswered: trec_eval -c scores it 0; q4 is unjudgeable and in no qrels file
    run = [e for e in small_run() if e.query_id != "q3"]
    out = write_results(tmp_path / "r", score(corpus, passages, run))
    side = json.loads((out / X.TREC_JSON).read_text())
    assert side["unanswered_scored_zero"] == ["q3"] and side["unjudgeable_dropped"] == ["q4"]
    assert side["relevance_level"] == 1 and side["relevance_policy"]["name"] == "graded(high=0.5,low=0.0,answer=0.5)"
    assert "q4" not in (out / X.QRELS_PASSAGES).read_text() + (out / X.QRELS_MEETINGS).read_text()
    _assert_reproduced(out)


def test_the_committed_baseline_reproduces_with_ir_measures():
    _assert_reproduced(ROOT / "baselines" / "bm25")


def test_file_formats_on_a_worked_example(small_corpus):
    corpus, passages = small_corpus
    res = score(corpus, passages, small_run())
    f = {name: X.content_bytes(content) for name, content in res.extra_files.items()}
    # the runs are made as they are written, never held whole
    assert all(isinstance(res.extra_files[n], X.Lazy) for n in (X.RUN_PASSAGES, X.RUN_MEETINGS, X.RUN_RAW))
    assert f[X.QRELS_PASSAGES].decode() == "q1 0 m1:00001 3\nq2 0 m1:00002 2\nq2 0 m2:00000 2\n"
    assert f[X.QRELS_MEETINGS].decode() == "q1 0 m1 1\nq2 0 m1 1\nq2 0 m2 1\nq3 0 m2 1\nq3 0 m3 1\n"
    # as scored: rule 5 put q2's three tied passages in (meeting, index) order, scores strictly decreasing
    assert f[X.RUN_PASSAGES].decode().splitlines()[2:5] == [
        "q2 Q0 m1:00000 1 3 hand", "q2 Q0 m1:00002 2 2 hand", "q2 Q0 m2:00000 3 1 hand"]
    assert f[X.RUN_MEETINGS].decode().splitlines()[1:3] == ["q2 Q0 m1 1 2 hand", "q2 Q0 m2 2 1 hand"]
    # raw: the engine's scores, tie and all
    assert "q2 Q0 m2:00000 0 1.0 hand" in f[X.RUN_RAW].decode()


def test_raw_scores_round_trip_and_the_tag_is_one_token():
    data = X.raw_run_text([RankedPassage("q", "d", 1, 0.1 + 0.2)], X.run_tag("my arm/v2"))
    assert data == b"q Q0 d 1 0.30000000000000004 my_arm_v2\n"
    assert X.parse_run(data, "x") == {"q": [("d", 0.30000000000000004)]}
    lazy = X.Lazy(lambda: iter([b"q Q0 a 1 3.0 t\nq Q0 b 2 2.0 t\n", b"q Q0 c 3 1.0 t\nr Q0 a 1 1.0 t\n"]))
    assert X.parse_run(lazy, "x", depth=2) == {"q": [("a", 3.0), ("b", 2.0)], "r": [("a", 1.0)]}
    with pytest.raises(BadInput, match="line 3 has 2 columns"):
        X.parse_run(X.Lazy(lambda: iter([b"q Q0 a 1 3.0 t\nq Q0 b 2 2.0 t\n", b"q c\n"])), "x", depth=1)
    assert X.parse_qrels(b"q 0 d 2\n", "x") == {"q": {"d": 2}}


def test_read_back_refuses_what_is_not_a_trec_file(tmp_path):
    import pytest

    from turnbench.errors import BadInput

    with pytest.raises(BadInput, match="line 1 is not 'query 0 document grade'"):
        X.parse_qrels(b"q 0 d\n", "qrels")
    with pytest.raises(BadInput, match="line 2 has 3 columns"):
        X.parse_run(b"q Q0 d 1 1.0 t\nq Q0 d\n", "run")


_PLAIN = (b"q2 Q0 p9 1 3.5 t\nq1 Q0 p1 1 9 t\nq1 Q0 p2 2 8 t\nq10 Q0 p7 1 2 t\nq1 Q0 p3 3 7 t\n"
          b"q1 Q0 p4 4 6 t\nq2 Q0 p8 2 1 t")


def test_the_tops_a_page_shows_are_the_tops_a_whole_reading_gives() -> None:
    """``run_tops`` finds a few queries' first lines by searching the bytes; on a plainly written run it must give
    exactly what ``parse_run(depth=…)`` gives, whatever the order of the lines, the first line, a last line without
    a newline, or a query id that is another's prefix (q1, q10)."""
    assert X.plain_run(_PLAIN)
    whole = {q: [d for d, _ in docs] for q, docs in X.parse_run(_PLAIN, "run", depth=3).items()}
    assert X.run_tops(_PLAIN, ["q1", "q2", "q10", "q404"], 3) == {q: whole[q] for q in ("q1", "q2", "q10")}
    assert whole["q1"] == ["p1", "p2", "p3"] and whole["q2"] == ["p9", "p8"]


@pytest.mark.parametrize("variant", [b"q1\tQ0 p1 1 9 t\n", b" q1 Q0 p1 1 9 t\n", b"q1 Q0  p1 1 9 t\n",
                                     b"q1 Q0 p1 1 9 t\r\n", "q1 Q0 p\u00e91 1 9 t\n".encode(),
                                     b"q1 Q0 p1 1 9 t\x1f\n"])
def test_a_run_written_any_other_way_is_read_whole(variant: bytes) -> None:
    """Tabs, leading blanks, double spaces, carriage returns, non-ASCII ids or other separators: not plain, so the
    page reads the run line by line as before instead of trusting a byte search."""
    assert not X.plain_run(variant + _PLAIN)


def test_a_passages_row_of_spans_jsonl_is_its_canonical_json_line():
    """spans.jsonl's passage rows are written out by hand; each must be the canonical line of its row as a dict."""
    from types import SimpleNamespace

    from turnbench import canonical
    from turnbench.harness.exports import spans_text

    judged = SimpleNamespace(gold_spans={}, gold_words={}, gold_start={},
                             words={"m1:00001": 12, 'q"uote\\é:2': 0},
                             gold_held={"q1": {"m1:00001": ((1, 0, 12),)}, "q2": {"w☃": ()}},
                             held={"m1:00001": ((1, 0, 12), (2, 3, 40)), "w☃": ()})
    meeting_of = {"m1:00001": "m1", 'q"uote\\é:2': "m\u00e9\t2", "w☃": "m3", "plain": "m4"}
    got = spans_text(judged, ['q"uote\\é:2', "plain"], {}, meeting_of)
    want = b"".join(canonical.dumps_line(r) for r in [
        {"passage": "m1:00001", "meeting": "m1", "words": 12, "spans": [[1, 0, 12], [2, 3, 40]]},
        {"passage": "plain", "meeting": "m4", "words": 0},
        {"passage": 'q"uote\\é:2', "meeting": "m\u00e9\t2", "words": 0},
        {"passage": "w☃", "meeting": "m3", "words": 0, "spans": []}])
    assert got == want
