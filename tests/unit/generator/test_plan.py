"""The plan (turnbench/generator/plan.py): properties of the organisation, the sessions and the planted
ground truth that the design fixes, checked directly on plans."""

from __future__ import annotations

import dataclasses
import re

from turnbench.generator.config import GeneratorConfig
from turnbench.generator.org import series_count
from turnbench.generator.plan import build_plan, month_label, plural

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
    # recordings named like files by default, and every aggregation rule asked all the same: R6's series say what
    # they are in their talk
    assert all(re.fullmatch(r"rec-" + m.date + r"-[0-9]{4}\.m4a", m.title) for m in plan.meetings)
    assert {q.rule for q in agg} == {"R3", "R4", "R5", "R6", "R7"}
    assert len([q for q in agg if q.rule == "R6"]) >= 12
    titled = build_plan(dataclasses.replace(DEFAULT, titles="series"))
    assert all(TITLE.match(m.title) and m.title == f"{m.team} — {m.kind} #{m.session}" for m in titled.meetings)
    # the titles are all that differs: same meetings, same talk, the same queries
    assert [m.plants for m in titled.meetings] == [m.plants for m in plan.meetings]
    assert list(titled.queries) == list(plan.queries)
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
    words = ("lantern", "compass", "launch", "box")
    assert [plural(w) for w in words] == ["lanterns", "compasses", "launches", "boxes"]
    assert month_label("2026-03-31") == "March 2026"
