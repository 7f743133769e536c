"""Bindings: every judgement target carries the sha256 of the text it was judged on, and a changed text is
refused naming the first stale target."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.harness.helpers import meeting, score, small_run, small_world, turn, write_corpus
from turnbench.corpus import Turn, open_corpus
from turnbench.errors import StaleBinding
from turnbench.harness import bindings as B


def replace(row, **changes):
    import msgspec

    return msgspec.structs.replace(row, **changes)


def _rows(res):
    return B.parse(res.extra_files[B.BINDINGS], B.BINDINGS)


def test_bindings_cover_queries_judged_passages_and_the_top_of_the_run(small_corpus):
    corpus, passages = small_corpus
    rows = _rows(score(corpus, passages, small_run()))
    queries = [r.id for r in rows if r.target == "query"]
    shown = {r.id: r for r in rows if r.target == "passage"}
    assert queries == ["q1", "q2", "q3", "q4"]  # every ranked query, the unjudgeable one too
    # judged (m1:00001, m1:00002, m2:00000) and returned (m1:00000, m3:00000)
    assert sorted(shown) == ["m1:00000", "m1:00001", "m1:00002", "m2:00000", "m3:00000"]
    assert shown["m1:00001"].spans == ((1, 0, 10),) and shown["m1:00001"].speaker == "bob"
    B.check(rows, corpus, "here")  # the corpus they were made from holds them


def _changed_corpus(tmp_path, change):
    meetings, queries = small_world()
    meetings = [change(m) for m in meetings]
    m9 = meeting("m9", [turn(0, "fay", 0, 10, 10)])
    return open_corpus(write_corpus(tmp_path / "changed", [*meetings, m9], queries))


def test_a_changed_gold_turn_text_is_refused_naming_the_first_stale_target(tmp_path, small_corpus):
    corpus, passages = small_corpus
    rows = _rows(score(corpus, passages, small_run()))

    def reword_bobs_turn(m):
        if m.id != "m1":
            return m
        turns = tuple(Turn(t.index, t.speaker, t.start, t.end, "something else entirely") if t.index == 1 else t
                      for t in m.turns)
        return type(m)(m.id, m.title, m.recorded_date, m.duration, m.timing, m.speakers, turns)

    changed = _changed_corpus(tmp_path, reword_bobs_turn)
    with pytest.raises(StaleBinding, match=r"here: query q1 is stale: its gold turns or record in corpus tiny"):
        B.check(rows, changed, "here")
    # a passage bound to that turn is stale as well; queries come first in the file, so q1 is named first
    only_passages = [r for r in rows if r.target == "passage"]
    with pytest.raises(StaleBinding, match=r"passage m1:00001 is stale: the words it holds"):
        B.check(only_passages, changed, "here")


def test_a_gone_meeting_or_query_is_stale(tmp_path, small_corpus):
    corpus, passages = small_corpus
    rows = _rows(score(corpus, passages, small_run()))
    with pytest.raises(StaleBinding, match="query q9 is bound to text of corpus tiny that it no longer holds"):
        B.check([B.QueryBinding("q9", "0" * 64)], corpus, "here")
    gone = [replace(r, meeting="m7") for r in rows if r.id == "m3:00000"]
    with pytest.raises(StaleBinding, match="bound to meeting m7, which corpus tiny no longer holds"):
        B.check(gone, corpus, "here")


def test_first_difference_names_a_shared_target_only():
    a = [B.QueryBinding("q1", "x"), B.QueryBinding("q2", "y")]
    assert B.first_difference(a, a) is None
    assert B.first_difference(a, [B.QueryBinding("q2", "z")]) == "query q2"
    assert B.first_difference(a, [B.QueryBinding("q3", "z")]) is None
    with pytest.raises(Exception, match="line 1 is not a binding"):
        B.parse(b'{"target": "meeting"}\n', "b")


@pytest.mark.parametrize("order", ["corpus", "reversed", "half missing"])
def test_query_digests_fed_meeting_by_meeting_equal_the_digests_of_the_whole_corpus(order):
    """The judge's one pass hashes each query as its meetings go by; any arrival order, and meetings the pass never
    sees (hashed as turns the corpus lacks), give the bytes query_sha256 gives from every meeting at once."""
    corpus = open_corpus(Path(__file__).resolve().parents[3] / "fixtures" / "small")
    queries, meetings = corpus.queries(), list(corpus.iter_meetings())
    seen = {"corpus": meetings, "reversed": meetings[::-1], "half missing": meetings[::2]}[order]
    digests = B.QueryDigests(queries)
    for m in seen:
        digests.see(m)
    turns = {m.id: {t.index: t for t in m.turns} for m in seen}
    want = {q.id: B.query_sha256(q, turns) for q in queries}
    assert digests.digests() == want
    assert len(set(want.values())) == len(queries)  # none collapsed to the record alone
    if order == "half missing":  # a meeting that is gone changes the digest of every query bound to it
        whole = {m.id: {t.index: t for t in m.turns} for m in meetings}
        assert sum(want[q.id] != B.query_sha256(q, whole) for q in queries) > len(queries) // 3


def test_a_memo_shared_by_two_results_of_one_corpus_computes_each_target_once_and_still_refuses_a_stale_one(
        small_corpus, monkeypatch):
    """compare and report check both sides' bindings against one corpus: the second side reuses the first's
    digests (same corpus text, same target record), and a row whose recorded digest differs is still stale."""
    corpus, passages = small_corpus
    rows = _rows(score(corpus, passages, small_run()))
    computed = []
    real = B.compute
    monkeypatch.setattr(B, "compute", lambda q, p, *a, **k: computed.append(len(q) + len(p)) or real(q, p, *a, **k))
    memo: dict = {}
    B.check(rows, corpus, "base", memo=memo)
    B.check(rows, corpus, "candidate", memo=memo)
    assert computed == [len(rows), 0] and len(memo) == len(rows)
    # a passage record that differs (another speaker) is its own target, computed and checked on its own
    moved = [replace(r, speaker="zed") if r.id == "m1:00001" else r for r in rows]
    with pytest.raises(StaleBinding, match=r"candidate: passage m1:00001 is stale: the words it holds"):
        B.check(moved, corpus, "candidate", memo=memo)
    assert computed[-1] == 1
    forged = [replace(r, sha256="0" * 64) if r.id == "q2" else r for r in rows]
    with pytest.raises(StaleBinding, match=r"candidate: query q2 is stale"):
        B.check(forged, corpus, "candidate", memo=memo)


def test_reading_the_rows_of_some_targets_gives_those_rows_as_a_whole_reading_does() -> None:
    """A page's cards need a few targets' rows of a file of tens of thousands: lines turnbench wrote whose id is
    not asked for are skipped unread; every other line, including one with an escaped id, is read."""
    import json

    rows = [{"id": "q1", "sha256": "a" * 64, "target": "query"},
            {"id": "p1", "meeting": "m", "sha256": "b" * 64, "spans": [[0, 0, 3]], "target": "passage",
             "speaker": "A", "start": 0.0, "end": 1.0},
            {"id": "p\"2", "meeting": "m", "sha256": "c" * 64, "spans": [[1, 0, 2]], "target": "passage",
             "speakers": "unknown", "start": 1.0, "end": 2.0},
            {"id": "p3", "meeting": "m", "sha256": "d" * 64, "spans": [[2, 0, 1]], "target": "passage",
             "speakers": ["A", "B"], "start": 2.0, "end": 3.5}]
    data = "".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in rows).encode()
    whole = B.parse(data, "bindings.jsonl")
    some = B.parse(data, "bindings.jsonl", {"q1", "p\"2"})
    assert [r.id for r in some] == ["q1", "p\"2"] and some == [r for r in whole if r.id in {"q1", "p\"2"}]
    assert B.text(whole) == data  # read and written again: the same bytes
    with pytest.raises(Exception, match="line 2 is not a binding"):
        B.parse(data.replace(b'"target":"passage"', b'"target":"nothing"', 1), "bindings.jsonl", {"p1"})


@pytest.mark.parametrize("line", [
    b'{"id":"p1","sha256":"x","spans":[],"start":0.0,"end":1.0,"speaker":"A","target":"passage"}',  # no meeting
    b'{"end":1.0,"id":"p1","meeting":"m","sha256":"x","spans":[[1,2]],"speaker":"A","start":0.0,"target":"passage"}',
    b'{"end":"1","id":"p1","meeting":"m","sha256":"x","spans":[],"speaker":"A","start":0.0,"target":"passage"}',
    b'{"id":"q1","sha256":7,"target":"query"}',
    b'{"id":"q1","sha256":"x","target":"meeting"}',
    b'{"id":"q\xff","sha256":"x","target":"query"}',  # not UTF-8
    b'["q1","x"]',
])
def test_a_line_that_is_no_binding_is_refused_naming_it_wherever_it_is_read(line):
    """A passage line without its meeting, with a span that is not (turn, first, end), times that are not numbers; a
    question's digest that is not a string; another target; bytes that are not UTF-8; JSON of another shape: each is
    refused in one line naming the file and the line, by ``parse`` (all rows or some) and, for a question's line,
    by ``query_digests``."""
    from turnbench.errors import BadInput

    data = b'{"id":"q0","sha256":"y","target":"query"}\n' + line + b"\n"
    for ids in (None, {"q1", "p1"}):
        with pytest.raises(BadInput, match=r"^b\.jsonl: line 2 is not a binding$"):
            B.parse(data, "b.jsonl", ids)
    if line.endswith(b'"target":"query"}'):
        with pytest.raises(BadInput, match=r"^b\.jsonl: line 2 is not a binding$"):
            B.query_digests(data, "b.jsonl")
    assert B.query_digests(data.splitlines(keepends=True)[0], "b.jsonl") == {"q0": "y"}


def test_the_lines_are_the_canonical_lines_by_either_writer_and_read_back_as_the_rows():
    """``text`` writes by msgspec's encoder where that is certain to be ``canonical.dumps_line``'s bytes, and line by
    line otherwise (a time msgspec would write as 1e16, not 1e+16); either way the lines read back as the rows, a
    passage's one speaker, its speakers and none known alike."""
    from turnbench import canonical

    rows = [B.QueryBinding("q1", "a" * 64),
            B.PassageBinding("p2", "m", 0.5, 2.0, (), "c" * 64, speakers=("A", "B")),
            B.PassageBinding("p3", "m", 0.5, 2.25, ((1, 0, 4),), "d" * 64, speakers="unknown"),
            B.PassageBinding("p1", "m", 0.0, 1e16, ((0, 0, 3), (1, 2, 5)), "b" * 64, speaker="A")]
    for some in (rows[:3], rows):
        want = b"".join(canonical.dumps_line(r.to_json()) for r in some)
        assert B.text(some) == want and B.parse(want, "b") == some
    assert b'"end":1e+16' in B.text(rows)
