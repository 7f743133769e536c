"""Rendering one meeting (turnbench/generator/render.py): realistic turn structure, planted sentences in
short turns, every planned speaker heard, the same bytes every time."""

from __future__ import annotations

import datetime
import itertools
import json

from turnbench.generator import vocab
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.plan import build_plan
from turnbench.generator.render import render_meeting


def test_a_rendered_meeting_has_realistic_turn_structure():
    plan = build_plan(GeneratorConfig(seed=2, meetings=20, words_per_meeting=3000))
    mp = plan.meetings[5]
    line, facts, counts = render_meeting(mp)
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
    assert any(t["text"] in vocab.BACKCHANNELS for t in turns)
    assert any(t["text"].startswith(("Um, ", "Uh, ")) or " Um, " in t["text"] for t in turns)
    for f in facts:
        assert len(turns[f["turn"]]["text"].split()) <= 150 and f["text"] in turns[f["turn"]]["text"]
    assert m["title"] == mp.title and m["timing"] == "synthetic"
    datetime.date.fromisoformat(m["recorded_date"])
    assert m["meta"] == {"team": mp.team, "kind": mp.kind, "series": mp.series, "session": str(mp.session),
                         "near_duplicate": "true" if mp.near_duplicate else "false"}
    assert render_meeting(mp)[0] == line


def test_every_planned_speaker_speaks_even_in_a_tiny_meeting():
    import dataclasses

    mp = build_plan(GeneratorConfig(seed=2, meetings=20, words_per_meeting=300)).meetings[0]
    crowd = tuple(f"Person {c}" for c in "ABCDEFGHIJKL")
    tiny = dataclasses.replace(mp, speakers=crowd, words=40, plants=())
    m = json.loads(render_meeting(tiny)[0])
    assert set(m["speakers"]) == set(crowd)
