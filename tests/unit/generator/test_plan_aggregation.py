"""The aggregation planners (turnbench/generator/plan_aggregation.py): R6 questions lean on the invitee trap,
and their gold is who spoke, never who was invited."""

from __future__ import annotations

import datetime

from turnbench.generator.config import GeneratorConfig
from turnbench.generator.plan import build_plan


def _counts(meetings, field):
    out: dict[str, int] = {}
    for m in meetings:
        for p in getattr(m, field):
            out[p] = out.get(p, 0) + 1
    return out


def test_at_least_half_the_r6_questions_change_if_invitees_are_counted():
    # opaque titles (the default) or series titles: R6 is asked of both
    for cfg in (GeneratorConfig(), GeneratorConfig(seed=5, meetings=40, words_per_meeting=600, titles="series")):
        plan = build_plan(cfg)
        r6 = [q for q in plan.queries if q.rule == "R6"]
        changed = 0
        for q in r6:
            sessions = [m for m in plan.meetings if (m.team, m.kind) == (q.target["team"], q.target["kind"])]
            spoke, invited = _counts(sessions, "speakers"), _counts(sessions, "attendees")
            top = max(spoke.values())
            assert [p for p, c in spoke.items() if c == top] == [q.answer.speaker] and q.answer.count == top
            top_invited = max(invited.values())
            changed += (q.answer.speaker, q.answer.count) not in {(p, c) for p, c in invited.items()
                                                                   if c == top_invited}
        assert r6 and changed * 2 >= len(r6), (cfg, changed, len(r6))


def test_every_session_of_an_r6_series_opens_with_its_name_and_a_slot_question_names_its_weekday():
    """The answer is in the talk: each session of a series R6 asks about says the series' full name in its opening,
    the first says its weekday slot too, and a question that names the slot names the day every session falls on;
    some sessions of the other series still never say what they are."""
    plan = build_plan(GeneratorConfig())
    r6 = [q for q in plan.queries if q.rule == "R6"]
    by_slot = [q for q in r6 if "slot" in q.target]
    assert by_slot and len(by_slot) < len(r6)
    asked = set()
    for q in r6:
        team, kind = q.target["team"], q.target["kind"]
        asked.add((team, kind))
        sessions = [m for m in plan.meetings if (m.team, m.kind) == (team, kind)]
        assert len(sessions) >= 2
        for m in sessions:
            opening = [p for p in m.plants if p.type == "series_mention" and p.position == "opening"]
            assert len(opening) == 1 and f"{team} {kind}" in opening[0].sentences[0], m.id
        if "slot" in q.target:
            slot = q.target["slot"]
            assert f"{team} {kind} meetings on {slot}s" in q.text
            assert {datetime.date.fromisoformat(m.date).strftime("%A") for m in sessions} == {slot}
            first = next(p for p in sessions[0].plants if p.type == "series_mention" and p.position == "opening")
            assert f"{slot} {team} {kind}" in first.sentences[0]
    quiet = [m for m in plan.meetings if (m.team, m.kind) not in asked
             and not any(p.type == "series_mention" for p in m.plants)]
    assert quiet
