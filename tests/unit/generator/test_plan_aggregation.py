"""The aggregation planners (turnbench/generator/plan_aggregation.py): R6 questions lean on the invitee trap,
and their gold is who spoke, never who was invited."""

from __future__ import annotations

from turnbench.generator.config import GeneratorConfig
from turnbench.generator.plan import build_plan


def _counts(meetings, field):
    out: dict[str, int] = {}
    for m in meetings:
        for p in getattr(m, field):
            out[p] = out.get(p, 0) + 1
    return out


def test_at_least_half_the_r6_questions_change_if_invitees_are_counted():
    # series titles: R6 is asked only where titles name the series
    for cfg in (GeneratorConfig(titles="series"), GeneratorConfig(seed=5, meetings=40, words_per_meeting=600,
                                                                  titles="series")):
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
