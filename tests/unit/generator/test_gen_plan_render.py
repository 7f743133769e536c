"""The organisation, the plan and one rendered meeting: properties fixed by the design, checked directly."""

from __future__ import annotations

import datetime
import json
import re

from turnbench.generator import vocab
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.org import series_count
from turnbench.generator.plan import build_plan, month_label, plural
from turnbench.generator.render import render_meeting

DEFAULT = GeneratorConfig()
TITLE = re.compile(r"^[A-Z][a-z]+ — [a-z ]+ #[0-9]+$")


def test_default_plan_meets_the_query_budget_and_shape():
    plan = build_plan(DEFAULT)
    assert len(plan.meetings) == 200
    assert [m.id for m in plan.meetings] == [f"m{i:04d}" for i in range(1, 201)]
    assert [m.date for m in plan.meetings] == sorted(m.date for m in plan.meetings)
    ranked = [q for q in plan.queries if q.cls != "aggregation"]
    agg = [q for q in plan.queries if q.cls == "aggregation"]
    assert len(ranked) >= 600 and len(agg) >= 100
    assert [q.id for q in plan.queries] == [f"q{i:05d}" for i in range(1, len(plan.queries) + 1)]
    assert len({m.kind for m in plan.meetings}) >= 8
    assert all(TITLE.match(m.title) and m.title == f"{m.team} — {m.kind} #{m.session}" for m in plan.meetings)
    months = {m.date[:7] for m in plan.meetings}
    assert len(months) >= 5
    for rule in ("R3", "R4", "R5", "R6", "R7"):
        qs = [q for q in agg if q.rule == rule]
        assert len({q.surface for q in qs}) == 3
        assert {q.grammar for q in qs} == {"in", "out"}
    zero = [q for q in agg if q.answer.type != "speaker_count" and not (q.answer.count or q.answer.meetings)]
    assert {q.rule for q in zero} == {"R3", "R4", "R5", "R7"}


def test_series_sessions_are_numbered_in_date_order_with_one_team_kind_each():
    plan = build_plan(GeneratorConfig(seed=9, meetings=60))
    by_series = {}
    for m in plan.meetings:
        by_series.setdefault(m.series, []).append(m)
    keys = [(ms[0].team, ms[0].kind) for ms in by_series.values()]
    assert len(keys) == len(set(keys)) == series_count(60) == 8
    for ms in by_series.values():
        assert [m.session for m in ms] == list(range(1, len(ms) + 1))


def test_near_duplicate_dial():
    none = build_plan(GeneratorConfig(seed=9, meetings=80, near_duplicate_rate=0.0))
    assert not any(m.near_duplicate for m in none.meetings)
    full = build_plan(GeneratorConfig(seed=9, meetings=80, near_duplicate_rate=1.0))
    first = {}
    for m in full.meetings:
        first.setdefault(m.series, m)
        assert m.near_duplicate == (m.session > 1)
        assert m.agenda == first[m.series].agenda  # every session repeats the series agenda
    shared = sum(set(m.speakers) == set(first[m.series].speakers) for m in full.meetings if m.session > 1)
    assert shared >= 0.5 * sum(m.session > 1 for m in full.meetings)  # rosters repeat, bar R6 fix-ups


def test_helpers_by_hand():
    assert [plural(w) for w in ("lantern", "compass", "launch", "box")] == ["lanterns", "compasses", "launches", "boxes"]
    assert month_label("2026-03-31") == "March 2026"


def test_reserved_words_never_occur_in_bulk_lists():
    bulk = set()
    for group in (vocab.SUBJECTS, vocab.MODALS, vocab.VERBS, vocab.VERBS_PAST, vocab.ADJECTIVES, vocab.NOUNS,
                  vocab.TIMES, vocab.PREPS, vocab.OPENERS, vocab.NUMBERS, vocab.FILLERS, vocab.BACKCHANNELS,
                  vocab.BULK_TEMPLATES, vocab.TEAM_NAMES, vocab.KINDS):
        for phrase in group:
            bulk.update(re.findall(r"[a-z0-9]+", phrase.lower()))
    for _, words in vocab.AGENDA_TOPICS:
        bulk.update(words)
    reserved = set(vocab.MARKER_FIRST) | set(vocab.MARKER_SECOND) | set(vocab.SIBLING_FIRST) | set(vocab.SIBLING_SECOND)
    reserved |= {plural(w) for w in vocab.MARKER_SECOND} | {vocab.DEFER_VERB}
    assert bulk & reserved == set()
    assert set(vocab.MARKER_FIRST) & set(vocab.MARKER_SECOND) == set()
    assert {plural(w) for w in vocab.MARKER_SECOND} & set(vocab.MARKER_SECOND) == set()
    assert {plural(w) for w in vocab.ITEM_THINGS} & set(vocab.ITEM_THINGS) == set()
    # no ground-truth template starts with its slot, so a planted word never opens a sentence or turn
    for t in vocab.MARKER_TEMPLATES + vocab.DEFER_TEMPLATES + vocab.MENTION_TEMPLATES:
        assert not t.startswith("{x}")


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
    assert any(b["start"] < a["end"] for a, b in zip(turns, turns[1:]))  # overlapping speech
    assert any(b["start"] == a["start"] for a, b in zip(turns, turns[1:]))  # shared start
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


def test_invented_names_never_run_out():
    import random

    from turnbench.generator.plan import _Names

    names = _Names(random.Random(1), set())
    made = [names.new() for _ in range(30000)]  # more than three syllables can spell
    assert len(set(made)) == len(made)
