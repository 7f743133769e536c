"""The records of corpus format v1 (turnbench/corpus/records.py): to_json/from_json are the only
translation, and what they write is sorted so that equal records give equal bytes."""

from __future__ import annotations

import pytest

from tests.unit.corpus.helpers import GOOD, QUERIES
from turnbench.corpus.records import Answer, Meeting, Query


def test_meetings_and_queries_survive_a_round_trip():
    for m in GOOD:
        assert Meeting.from_json(m.to_json()) == m
    for q in QUERIES:
        assert Query.from_json(q.to_json()) == q


def test_sets_are_written_sorted_and_read_back_sorted():
    q = Query("q", "aggregation", "R4", "list", "t", "answer", ("b", "a"), {"b": ((3, 4), (0, 1))},
              {"b": (4, 0)}, Answer("meeting_set", meetings=("m2", "m1")))
    d = q.to_json()
    assert d["gold_meetings"] == ["a", "b"] and d["gold_turns"] == {"b": [[0, 1], [3, 4]]}
    assert d["answer_turns"] == {"b": [0, 4]} and d["answer"] == {"type": "meeting_set", "meetings": ["m1", "m2"]}
    back = Query.from_json(d)
    assert back.gold_meetings == ("a", "b") and back.answer == Answer("meeting_set", meetings=("m1", "m2"))


def test_each_answer_type_writes_only_its_fields():
    assert Answer("count", count=0).to_json() == {"type": "count", "count": 0}
    assert Answer("speaker_count", count=3, speaker="Ann Lee").to_json() == {
        "type": "speaker_count", "count": 3, "speaker": "Ann Lee"}
    with pytest.raises(ValueError, match="unknown answer type 'sum'"):
        Answer.from_json({"type": "sum"})


def test_optional_meeting_fields_default_when_absent():
    d = GOOD[1].to_json()
    for key in ("attendees", "agenda", "meta"):
        del d[key]
    m = Meeting.from_json(d)
    assert (m.attendees, m.agenda, m.meta) == ((), (), {})
    with pytest.raises(KeyError):
        Meeting.from_json({k: v for k, v in d.items() if k != "turns"})
