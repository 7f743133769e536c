"""turnbench.harness.inventory: an inventory that shares this corpus's meeting ids but not its meetings is refused.

The attack this answers: score another corpus's passages (same ids m1, m2, ...) against this corpus's gold, and
get plausible numbers. Only meeting ids used to be checked.
"""

from __future__ import annotations

import hashlib

import pytest
from click.testing import CliRunner

from tests.unit.harness.helpers import meeting, turn
from turnbench.cli import main
from turnbench.corpus.records import Meeting, Turn
from turnbench.errors import ForeignInventory, StaleBinding
from turnbench.harness.inventory import problems_in
from turnbench.harness.judgements import RelevancePolicy, judge
from turnbench.loading.chunking import chunk_meeting
from turnbench.passages import Passage, write_passages
from turnbench.runfiles import write_trec_run


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


M = Meeting("m1", "t", None, 30.0, "synthetic", ("ann", "bob"), (
    Turn(0, "ann", 0.0, 4.0, "the falcon migration is on track"),
    Turn(1, "bob", 3.0, 6.0, "good"),
    Turn(2, "ann", 4.5, 9.0, "and the budget is settled"),
    Turn(3, "bob", 10.0, 20.0, " ".join(f"w{i}" for i in range(30))),
))


def P(pid: str, speaker: str, start: float, end: float, **kw: object) -> Passage:
    return Passage(pid, "m1", speaker, start, end, 0, **kw)


def test_our_own_chunking_always_fits_whole_turns_and_windows() -> None:
    for max_words in (1, 3, 8, 200):
        passages = [c.passage for c in chunk_meeting(M.id, M.turns, max_words=max_words)]
        assert problems_in(M, passages) == ([], []), max_words


def test_a_speaker_the_meeting_does_not_have_is_foreign() -> None:
    foreign, _ = problems_in(M, [P("x", "cleo", 0.0, 4.0)])
    assert foreign == ["x: speaker 'cleo' does not speak in m1"]


def test_times_outside_the_meeting_are_foreign() -> None:
    foreign, _ = problems_in(M, [P("x", "ann", 25.0, 31.0)])
    assert foreign and "not within m1's 30.0 s" in foreign[0]


def test_a_hash_of_other_text_is_stale_and_of_a_run_of_turns_fits() -> None:
    two = "the falcon migration is on track\nand the budget is settled"
    assert problems_in(M, [P("ok", "ann", 0.0, 9.0, text_sha256=sha(two))]) == ([], [])
    _, stale = problems_in(M, [P("x", "ann", 0.0, 9.0, text_sha256=sha("the heron migration is on track"))])
    assert stale == ["x: text_sha256 is not of what ann says in m1 at [0.0, 9.0]"]


def test_text_another_chunker_formed_is_checked_by_containment() -> None:
    good = P("ok", "ann", 0.0, 9.0, text="migration is on track and   the budget")
    assert problems_in(M, [good]) == ([], [])
    _, stale = problems_in(M, [P("x", "ann", 0.0, 9.0, text="the budget is settled at last")])
    assert stale and stale[0].startswith("x: its text is not what ann says in m1")


def test_judge_refuses_naming_the_first_and_the_count() -> None:
    wrong = [P("a", "cleo", 0, 4), P("b", "dan", 0, 4)]
    with pytest.raises(ForeignInventory, match=r"^2 passage\(s\) of the inventory do not fit this corpus; first: a:"):
        judge([], [M], wrong, RelevancePolicy())
    with pytest.raises(StaleBinding, match=r"^1 passage\(s\) .* carry text this corpus does not; first: s:"):
        judge([], [M], [P("s", "ann", 0.0, 4.0, text_sha256=sha("something else"))], RelevancePolicy())


def test_score_refuses_another_corpus_s_inventory_that_shares_its_ids(tmp_path, small_corpus) -> None:
    """A corpus of the same shape and ids but other words: its inventory is refused with exit 3."""
    corpus, _ = small_corpus
    other = [meeting(m.id, [turn(t.index, t.speaker, t.start, t.end, len(t.text.split())) for t in m.turns])
             for m in corpus.iter_meetings()]
    passages = []
    for m in other:
        for c in chunk_meeting(m.id, m.turns):
            passages.append(Passage(c.passage.id, c.passage.meeting, c.passage.speaker, c.passage.start,
                                    c.passage.end, c.passage.index, text_sha256=sha(c.text.replace("w", "v"))))
    write_passages(tmp_path / "passages.jsonl", passages)
    write_trec_run(tmp_path / "run.trec", {}, "x")
    out = CliRunner().invoke(main, ["score", "--corpus", str(corpus.root), "--passages",
                                    str(tmp_path / "passages.jsonl"), "--run", str(tmp_path / "run.trec"),
                                    "--out", str(tmp_path / "r")])
    assert out.exit_code == 3, out.output
    assert out.stderr.startswith(f"turnbench: StaleBinding: {len(passages)} passage(s) of the inventory carry text")
    assert not (tmp_path / "r").exists()


def test_windows_of_a_very_long_turn_are_bound_by_the_words_they_hold_not_their_rounded_times():
    """A 2 MB turn cut into 200-word windows: their times, apportioned and rounded to the millisecond, are off by more
    than a word from where the words are, so binding by time refused the load's own passages as stale. Each window
    declares the words it holds and is bound by them exactly; a window whose words were changed is still refused."""
    from msgspec.structs import replace as with_

    from turnbench.corpus.records import Meeting, Turn
    from turnbench.harness.inventory import problems_in
    from turnbench.loading.chunking import chunk_meeting

    words = " ".join(f"w{i % 997}" for i in range(360_000))  # ~2 MB of text
    m = Meeting("m1", "t", "2026-01-05", 60.0, "synthetic", ("ann",), (Turn(0, "ann", 0.0, 60.0, words),))
    passages = [c.passage for c in chunk_meeting("m1", m.turns, max_words=200)]
    assert len(passages) == 1800 and passages[7].holds == ((0, 1400, 1600),)
    assert problems_in(m, passages) == ([], [])
    edited = with_(passages[7], text_sha256="0" * 64)
    assert problems_in(m, [edited])[1] == ["m1:00007: text_sha256 is not of the words it holds in m1"]
    beyond = with_(passages[-1], holds=((0, 359_900, 360_100),))
    assert "holds words 359900..360100 of turn 0, which has 360000" in problems_in(m, [beyond])[0][0]
