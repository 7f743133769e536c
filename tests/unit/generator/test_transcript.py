"""Writing one meeting's transcript (turnbench/generator/transcript.py): realistic turn structure, planted sentences in
short turns, every planned speaker heard, the same bytes every time."""

from __future__ import annotations

import datetime
import itertools
import json

from turnbench.generator import wordlists
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.plan import build_plan
from turnbench.generator.transcript import write_meeting


def test_a_written_meeting_has_realistic_turn_structure():
    plan = build_plan(GeneratorConfig(seed=2, meetings=20, words_per_meeting=3000))
    mp = plan.meetings[5]
    line, facts, counts = write_meeting(mp)
    m = json.loads(line)
    turns = m["turns"]
    assert counts["turns"] == len(turns) and counts["words"] == sum(len(t["text"].split()) for t in turns)
    assert {t["speaker"] for t in turns} == set(mp.speakers)
    assert all(round(t["start"], 2) == t["start"] and round(t["end"], 2) == t["end"] for t in turns)
    starts = [t["start"] for t in turns]
    assert starts == sorted(starts) and all(0 <= t["start"] <= t["end"] <= m["duration"] for t in turns)
    assert any(b["start"] < a["end"] for a, b in itertools.pairwise(turns))  # overlapping speech
    assert any(b["start"] == a["start"] for a, b in itertools.pairwise(turns))  # shared start
    assert any(len(t["text"].split()) > 400 for t in turns)  # a monologue any chunker must split
    assert any(t["text"] in wordlists.BACKCHANNELS for t in turns)
    assert any(t["text"].startswith(("Um, ", "Uh, ")) or " Um, " in t["text"] for t in turns)
    for f in facts:
        assert len(turns[f["turn"]]["text"].split()) <= 150 and f["text"] in turns[f["turn"]]["text"]
    assert m["title"] == mp.title and m["timing"] == "synthetic"
    datetime.date.fromisoformat(m["recorded_date"])
    assert m["meta"] == {"team": mp.team, "kind": mp.kind, "series": mp.series, "session": str(mp.session),
                         "near_duplicate": "true" if mp.near_duplicate else "false"}
    assert write_meeting(mp)[0] == line


def test_every_planned_speaker_speaks_even_in_a_tiny_meeting():
    import dataclasses

    mp = build_plan(GeneratorConfig(seed=2, meetings=20, words_per_meeting=300)).meetings[0]
    crowd = tuple(f"Person {c}" for c in "ABCDEFGHIJKL")
    tiny = dataclasses.replace(mp, speakers=crowd, words=40, plants=(), discussions=(), background=())
    m = json.loads(write_meeting(tiny)[0])
    assert set(m["speakers"]) == set(crowd)


def _meetings(cfg):
    from turnbench.corpus.records import Meeting

    plan = build_plan(cfg)
    facts, counts, meetings = [], {}, []
    for mp in plan.meetings:
        line, fs, c = write_meeting(mp)
        meetings.append(Meeting.from_json(json.loads(line)))
        facts.extend(fs)
        counts[mp.id] = c["turns"]
    return plan, meetings, facts, counts


def test_no_speaker_overlaps_themselves_while_speakers_still_overlap_each_other():
    from turnbench.corpus.checks import self_overlaps

    for register in ("default", "interactive", "formal"):
        _, meetings, _, _ = _meetings(GeneratorConfig.from_options(seed=4, meetings=24, register=register,
                                                                   words_per_meeting=2500))
        assert [p for m in meetings for p in self_overlaps(m)] == [], register
        pairs = [(a, b) for m in meetings for a, b in itertools.pairwise(m.turns)]
        assert any(b.start < a.end and a.speaker != b.speaker for a, b in pairs), register
        assert any(b.start == a.start and a.speaker != b.speaker for a, b in pairs), register


def test_no_judged_passage_holds_none_of_its_querys_gold_text():
    """Recompute the judgements as the harness does, on the passages the stack would index: every passage
    graded above zero holds at least one gold or answer turn of its query. A speaker overlapping themselves
    would break this: a one-word backchannel overlapping that speaker's answer turn gets grade 3."""
    from turnbench.generator.queries import build_queries
    from turnbench.harness.judgements import RelevancePolicy, judge, union_ranges
    from turnbench.loading.chunking import chunk_meeting

    plan, meetings, facts, counts = _meetings(GeneratorConfig(seed=20261130, meetings=80))
    queries = [q for q in build_queries(plan, facts, counts) if q.scored_on == "retrieval"]
    chunks = {c.passage.id: c for m in meetings for c in chunk_meeting(m.id, m.turns)}
    judged = judge(queries, meetings, [c.passage for c in chunks.values()], RelevancePolicy())
    stray, graded = [], 0
    for q in queries:
        for pid, grade in judged[q.id].passages.items():
            graded += 1
            c = chunks[pid]
            gold = union_ranges(q.gold_turns.get(c.passage.meeting, ())) | set(q.answer_turns.get(c.passage.meeting,
                                                                                                  ()))
            if not gold & set(c.turns):
                stray.append((q.id, pid, grade, c.text[:30]))
    assert graded > 500 and stray == []
