"""Realism figures (turnbench/generator/realism.py), derived by hand on small meetings."""

from __future__ import annotations

import pytest

from turnbench.corpus.records import Meeting, Turn
from turnbench.generator.realism import (
    is_backchannel,
    meeting_figures,
    nearest_rank,
    overlap_seconds,
    profile_meeting,
    query_figures,
)


def _meeting(mid: str, turns: list[Turn]) -> Meeting:
    return Meeting(id=mid, title=mid, recorded_date=None, duration=100.0, timing="synthetic",
                   speakers=tuple(sorted({t.speaker for t in turns})), turns=tuple(turns))


@pytest.mark.parametrize("text, expected", [
    ("Mm-hmm.", True), ("Yeah, yeah.", True), ("Got it.", True), ("Uh", True), ("Right, right.", True),
    ("Okay so yeah sure", False),  # four words
    ("Yeah, the remote.", False), ("", False), ("Um, the plan.", False), ("'Kay", False),
])
def test_backchannels_are_short_turns_of_backchannel_words_only(text, expected):
    assert is_backchannel(text) is expected


def test_overlap_is_time_when_two_speakers_talk_and_touching_is_not_overlap():
    m = _meeting("m", [Turn(0, "a", 0.0, 10.0, "x"), Turn(1, "b", 8.0, 12.0, "y"), Turn(2, "a", 12.0, 15.0, "z"),
                       Turn(3, "c", 20.0, 20.0, "instant"), Turn(4, "b", 14.0, 16.0, "w")])
    # talk: 0..16 = 16 s (the zero-length turn adds nothing); two at once: 8..10 and 14..15 = 3 s
    assert overlap_seconds(m) == (16.0, 3.0)


def test_meeting_figures_by_hand():
    a = _meeting("a", [Turn(0, "x", 0.0, 4.0, "one two three four"), Turn(1, "y", 3.0, 5.0, "Yeah.")])
    b = _meeting("b", [Turn(0, "x", 0.0, 2.0, "five six"), Turn(1, "y", 2.0, 3.0, "seven"),
                       Turn(2, "z", 3.0, 6.0, "eight nine ten")])
    figures = meeting_figures([profile_meeting(b, "d", True), profile_meeting(a, "d", False)])
    assert figures == {
        "meetings": 2, "words_per_meeting": 5.5, "speakers_per_meeting": 2.5, "turns": 5,
        "turn_words_p10": 1, "turn_words_p25": 1, "turn_words_p50": 2, "turn_words_p75": 3, "turn_words_p90": 4,
        "turn_words_p99": 4, "backchannel_share": 0.2,
        "overlap_share": 0.0,  # only b's times count, and nobody in b overlaps
    }
    assert meeting_figures([]) == {"meetings": 0}
    assert meeting_figures([profile_meeting(a, "d", False)])["overlap_share"] is None


def test_nearest_rank_and_query_figures():
    values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert [nearest_rank(values, q) for q in (10, 25, 50, 99)] == [1, 3, 5, 10]
    assert query_figures([4, 6, 9], [0, 1, 3]) == {"queries": 3, "query_words": 6.0, "query_gold_overlap": 1.0,
                                                   "query_gold_overlap_at_most_1": pytest.approx(2 / 3)}
    assert query_figures([], []) == {"queries": 0, "query_words": None, "query_gold_overlap": None,
                                     "query_gold_overlap_at_most_1": None}
