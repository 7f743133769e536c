"""turnbench.submissions: answers.jsonl round-trips and re-scores to the same block."""

from __future__ import annotations

from tests.unit.harness.helpers import QUERIES, SUBMITTED
from turnbench import canonical
from turnbench.corpus.records import Answer
from turnbench.harness.answers import answers_block, score_answers
from turnbench.submissions import SubmittedAnswer, read_answers, write_answers


def test_answers_file_round_trip(tmp_path):
    sha = write_answers(tmp_path / "answers.jsonl", reversed(SUBMITTED))
    back = read_answers(tmp_path / "answers.jsonl")
    assert [a.query_id for a in back] == sorted(a.query_id for a in SUBMITTED)
    assert answers_block([score_answers(QUERIES, back)]) == answers_block([score_answers(QUERIES, SUBMITTED)])
    assert sha == canonical.sha256_file(tmp_path / "answers.jsonl")
    assert back[0] == SubmittedAnswer("q1", Answer("count", count=3), "test", {})
