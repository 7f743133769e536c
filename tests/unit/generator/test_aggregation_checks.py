"""The aggregation checks (turnbench/generator/aggregation_checks.py) that came with the invitee list: a
corpus whose invitees are its speakers holds no trap, and a speaker missing from the invitee list is an
error. The other aggregation checks' corruptions are in test_checks.py."""

from __future__ import annotations

from tests.unit.generator.helpers import edit_meeting, read_lines, rehash
from turnbench.generator.validate import failures, validate_corpus


def _meetings(root):
    return [m for part in sorted((root / "meetings").glob("*.jsonl")) for m in read_lines(part)]


def test_the_fresh_corpus_holds_the_invitee_trap(generated):
    results = {r.name: r for r in validate_corpus(generated)}
    assert results["invitee_trap_share"].status == "pass"
    assert "R6 answers" in results["invitee_trap_share"].detail
    silent = [a for m in _meetings(generated) for a in m["attendees"] if a not in {t["speaker"] for t in m["turns"]}]
    assert silent  # some invitees never speak


def test_invitees_equal_to_speakers_fail_the_trap_share(corpus_copy):
    for m in _meetings(corpus_copy):
        edit_meeting(corpus_copy, m["id"], lambda row: row.__setitem__(
            "attendees", sorted({t["speaker"] for t in row["turns"]})))
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert failures(results.values()) == ["invitee_trap_share"]
    assert "change when invitees are counted; need at least 0.33" in results["invitee_trap_share"].detail


def test_a_speaker_missing_from_the_invitee_list_fails(corpus_copy):
    m = _meetings(corpus_copy)[0]
    speaker = m["turns"][0]["speaker"]
    edit_meeting(corpus_copy, m["id"], lambda row: row.__setitem__(
        "attendees", [a for a in row["attendees"] if a != speaker]))
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert "invitee_trap_share" in failures(results.values())
    assert f"{m['id']}: {speaker} spoke without being invited" in results["invitee_trap_share"].detail
