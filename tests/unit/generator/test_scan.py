"""The synthetic scan (turnbench/generator/scan.py): one pass over a generated corpus finds every planted
phrase, deferral and turn where facts.jsonl says, and nowhere else."""

from __future__ import annotations

from tests.unit.generator.helpers import facts, read_lines
from turnbench.corpus.format import open_corpus
from turnbench.generator.contracts import tokens
from turnbench.generator.scan import Hit, scan_synthetic, split_facts


def test_the_scan_finds_every_planted_phrase_deferral_and_turn_in_the_text(generated):
    scan = scan_synthetic(open_corpus(generated))
    fs = facts(generated)
    assert scan.corpus.meeting_order == tuple(sorted(scan.corpus.meetings))
    assert len(scan.targets) == sum(f["type"] == "aggregation_target" for f in fs)
    assert len(scan.located) == sum(f["meeting"] is not None for f in fs)
    # every marker written is found where facts.jsonl says, and nowhere a fact does not name
    markers = {(f["meeting"], f["turn"]) for f in fs if f["type"] == "marker"}
    found = {(h.meeting, h.turn) for t in scan.targets if "phrase" in t for h in scan.phrase_hits_of(t["phrase"])}
    assert found == markers
    deferrals = sorted((f["meeting"], f["turn"]) for f in fs if f["type"] == "deferral")
    assert sorted((h.meeting, h.turn) for hits in scan.deferral_hits.values() for h in hits) == deferrals
    assert scan.boundary_hits == ()
    for f in fs:
        if f["meeting"] is not None:
            spoken = scan.turn(f["meeting"], f["turn"])
            assert f["text"] in spoken.text and spoken.speaker == f["speaker"]
    assert scan.turn("nowhere", 0) == ("", "")
    for row in (m for part in sorted((generated / "meetings").glob("*.jsonl")) for m in read_lines(part)):
        assert scan.spoke[row["id"]] == frozenset(t["speaker"] for t in row["turns"])


def test_phrases_found_across_every_turn_count_each_occurrence_once_per_turn(generated):
    scan = scan_synthetic(open_corpus(generated))
    for hits in scan.phrase_hits.values():
        assert all(isinstance(h, Hit) and h.words <= 150 for h in hits)
    stated = scan.located_of("lookup_answer", "component")
    assert stated and len(scan.fact_hits) == len(stated)
    for f in stated:  # subject and value together: in the fact's own turn, found once
        assert scan.fact_hits_of(f["subject"], f["value"]) == ((f["meeting"], f["turn"]),)
        assert scan.fact_hits[(tuple(tokens(f["subject"])), tuple(tokens(f["value"])))]
    assert scan.phrase_hits_of("no such phrase") == ()


def test_facts_split_into_targets_and_located_records_and_others_are_ignored():
    targets, located = split_facts([
        {"type": "aggregation_target", "meeting": None, "query": "q1", "rule": "R5", "item": "billing rollout"},
        {"type": "marker", "meeting": "m1", "turn": 3, "query": "q2", "phrase": "cedar lantern"},
        {"type": "unknown", "meeting": None},
    ])
    assert [t["query"] for t in targets] == ["q1"] and [f["query"] for f in located] == ["q2"]
