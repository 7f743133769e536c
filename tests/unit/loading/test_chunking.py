"""Chunking: speaker runs, whole-segment packing, split monologues, total order — values worked by hand."""

import hashlib

import pytest

from tests.unit.stack.helpers import words
from turnbench.corpus.records import Turn
from turnbench.errors import BadInput
from turnbench.loading.chunking import chunk_meeting, passage_id


def test_speaker_runs_become_passages():
    segs = [
        Turn(0, "Ana", 0.0, 2.0, "hello there"),
        Turn(1, "Ana", 2.0, 3.0, "one more"),
        Turn(2, "Ben", 3.0, 5.0, "my turn now"),
        Turn(3, "Ana", 5.0, 6.0, "back"),
    ]
    chunks = chunk_meeting("m1", segs, max_words=200)
    got = [(c.passage.id, c.passage.speaker, c.passage.start, c.passage.end, c.passage.words, c.turns)
           for c in chunks]
    assert got == [
        ("m1:00000", "Ana", 0.0, 3.0, 4, (0, 1)),
        ("m1:00001", "Ben", 3.0, 5.0, 3, (2,)),
        ("m1:00002", "Ana", 5.0, 6.0, 1, (3,)),
    ]
    assert [c.passage.index for c in chunks] == [0, 1, 2]
    assert chunks[0].texts == ("hello there", "one more")
    assert chunks[0].passage.text_sha256 == hashlib.sha256(b"hello there\none more").hexdigest()
    assert all(c.passage.kind == "turn" for c in chunks)


def test_whole_segments_are_packed_greedily_never_cut():
    # 4 + 4 + 3 words, limit 8: the first two fit (8), the third starts a new sub-passage
    segs = [
        Turn(0, "Ana", 0.0, 4.0, words(4, "a")),
        Turn(1, "Ana", 4.0, 8.0, words(4, "b")),
        Turn(2, "Ana", 8.0, 11.0, words(3, "c")),
    ]
    chunks = chunk_meeting("m", segs, max_words=8)
    assert [(c.turns, c.passage.words, c.passage.start, c.passage.end) for c in chunks] == [
        ((0, 1), 8, 0.0, 8.0),
        ((2,), 3, 8.0, 11.0),
    ]


def test_a_long_monologue_is_cut_into_windows_with_times_apportioned_by_words():
    # 25 words over 10 s, limit 10: windows of 10, 10, 5 words → 0–4 s, 4–8 s, 8–10 s
    segs = [
        Turn(0, "Ben", 0.0, 1.0, "short intro"),
        Turn(1, "Ben", 1.0, 11.0, words(25)),
        Turn(2, "Ben", 11.0, 12.0, "and done"),
    ]
    chunks = chunk_meeting("m", segs, max_words=10)
    assert [(c.turns, c.passage.words, c.passage.start, c.passage.end) for c in chunks] == [
        ((0,), 2, 0.0, 1.0),
        ((1,), 10, 1.0, 5.0),
        ((1,), 10, 5.0, 9.0),
        ((1,), 5, 9.0, 11.0),
        ((2,), 2, 11.0, 12.0),
    ]
    assert chunks[1].texts == (words(10),)
    assert chunks[3].texts == (" ".join(f"w{i}" for i in range(20, 25)),)


def test_window_boundaries_round_to_the_millisecond_and_keep_the_segment_ends():
    # 7 words over 1 s, limit 3: boundaries at 3/7 and 6/7 of a second
    chunks = chunk_meeting("m", [Turn(0, "A", 2.0, 3.0, words(7))], max_words=3)
    assert [(c.passage.start, c.passage.end) for c in chunks] == [(2.0, 2.429), (2.429, 2.857), (2.857, 3.0)]


def test_a_phrase_inside_a_short_turn_stays_in_one_passage():
    phrase = "quarterly vendor escalation"
    segs = [Turn(i, "Ana", float(i), float(i + 1), f"{words(5)} {phrase} {words(4)}") for i in range(6)]
    for chunk in chunk_meeting("m", segs, max_words=30):
        for text in chunk.texts:
            assert text.count(phrase) == 1
    # 12 words per turn, limit 30: two turns per passage, never a turn split across two
    assert [c.turns for c in chunk_meeting("m", segs, max_words=30)] == [(0, 1), (2, 3), (4, 5)]


def test_segments_are_read_in_start_end_index_order_whatever_the_input_order():
    segs = [
        Turn(2, "Ben", 1.0, 2.0, "b"),
        Turn(0, "Ana", 0.0, 1.0, "a"),
        Turn(3, "Ana", 1.0, 1.5, "c"),  # shares a start with turn 2 but ends first
        Turn(1, "Ana", 1.0, 1.5, "d"),  # same start and end as turn 3: the lower index first
    ]
    chunks = chunk_meeting("m", segs)
    # order: 0 (Ana) · 1 (Ana, 1.0–1.5) · 3 (Ana, 1.0–1.5) · 2 (Ben, 1.0–2.0)
    assert [(c.passage.speaker, c.turns) for c in chunks] == [("Ana", (0, 1, 3)), ("Ben", (2,))]
    assert chunks == chunk_meeting("m", list(reversed(segs)))


def test_end_is_the_latest_end_when_a_short_turn_is_nested_in_a_longer_one():
    segs = [Turn(0, "Ana", 0.0, 10.0, "long turn"), Turn(1, "Ana", 2.0, 3.0, "nested")]
    [chunk] = chunk_meeting("m", segs)
    assert (chunk.passage.start, chunk.passage.end) == (0.0, 10.0)


def test_ids_sort_in_meeting_order_past_ten_passages():
    segs = [Turn(i, "AB"[i % 2], float(i), float(i + 1), "x") for i in range(12)]
    ids = [c.passage.id for c in chunk_meeting("mtg-7", segs)]
    assert ids == [passage_id("mtg-7", n) for n in range(12)] == sorted(ids)
    assert ids[10] == "mtg-7:00010"


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "200"])
def test_max_words_must_be_a_positive_integer(bad):
    with pytest.raises(BadInput):
        chunk_meeting("m", [Turn(0, "A", 0.0, 1.0, "x")], max_words=bad)




def test_overlap_carries_the_last_whole_segments_of_the_previous_passage_within_a_speaker_run():
    # Ana: 4, 3, 2, 4 words, limit 9, overlap 5. Passage 1 packs 4 + 3 + 2 = 9; the 4-word turn does not fit, so
    # passage 2 begins with the longest tail of passage 1 holding at most min(5, 9 - 4) = 5 words: turns 1 + 2
    # (3 + 2 = 5), then turn 3. Ben's turn starts fresh: nothing is shared across a change of speaker.
    segs = [Turn(0, "Ana", 0.0, 4.0, words(4, "a")), Turn(1, "Ana", 4.0, 7.0, words(3, "b")),
            Turn(2, "Ana", 7.0, 9.0, words(2, "c")), Turn(3, "Ana", 9.0, 13.0, words(4, "d")),
            Turn(4, "Ben", 13.0, 15.0, words(2, "e"))]
    got = [(c.turns, c.passage.words, c.passage.start, c.passage.end) for c in
           chunk_meeting("m", segs, max_words=9, overlap=5)]
    assert got == [((0, 1, 2), 9, 0.0, 9.0), ((1, 2, 3), 9, 4.0, 13.0), ((4,), 2, 13.0, 15.0)]
    # no overlap: the cut every load makes by default, unchanged
    assert [c.turns for c in chunk_meeting("m", segs, max_words=9)] == [(0, 1, 2), (3,), (4,)]


def test_overlap_steps_a_monologues_windows_by_size_less_overlap():
    # 25 words, windows of 10 overlapping by 4: starts 0, 6, 12, 18 (18 + 10 > 25 ends it at 25)
    seg = Turn(0, "Ana", 0.0, 25.0, words(25, "w"))
    chunks = chunk_meeting("m", [seg], max_words=10, overlap=4)
    assert [c.passage.holds for c in chunks] == [((0, 0, 10),), ((0, 6, 16),), ((0, 12, 22),), ((0, 18, 25),)]
    assert [c.passage.start for c in chunks] == [0.0, 6.0, 12.0, 18.0]
    # a window that would only repeat the last one's tail is not cut: 20 words, size 10, overlap 5 -> 0, 5, 10
    two = chunk_meeting("m", [Turn(0, "Ana", 0.0, 20.0, words(20, "w"))], max_words=10, overlap=5)
    assert [c.passage.holds for c in two] == [((0, 0, 10),), ((0, 5, 15),), ((0, 10, 20),)]


@pytest.mark.parametrize("overlap", [-1, 9, 10, 2.5, True, "3"])
def test_overlap_must_be_below_the_size(overlap):
    with pytest.raises(BadInput, match="overlap must be a whole number of words from 0 to max_words - 1"):
        chunk_meeting("m", [Turn(0, "Ana", 0.0, 1.0, "x")], max_words=9, overlap=overlap)
