"""Series mentions (turnbench/generator/speech.py): sessions say what they are at openings, hand-overs and
closings in several phrasings, some never do, and every series names itself in full somewhere."""

from __future__ import annotations

import random

from turnbench.generator.config import GeneratorConfig
from turnbench.generator.contracts import contains_tokens, series_name, tokens
from turnbench.generator.org import build_organisation
from turnbench.generator.planting import make_schedule
from turnbench.generator.sessions import draw_sessions
from turnbench.generator.speech import PHRASINGS, QUIET_SHARE, series_mentions


def test_mentions_cover_the_series_in_several_forms_and_leave_some_sessions_quiet():
    cfg = GeneratorConfig(seed=12, meetings=120)
    schedule = make_schedule(draw_sessions(cfg, build_organisation(cfg)), cfg.meetings)
    planted = list(series_mentions(schedule, random.Random(4)))
    named = {mid for mid, _ in planted}
    assert len(schedule.ids) - len(named) == round(len(schedule.ids) * QUIET_SHARE)
    assert {p.fact["form"] for _, p in planted} == {"full", "team", "kind"}
    assert {p.fact["position"] for _, p in planted} == {"opening", "handover", "closing"}
    assert len({p.sentences[0].split(" ")[0] for _, p in planted}) >= 5  # several phrasings
    assert len({p.pid for _, p in planted}) == len(planted)
    for sid, mids in schedule.series_meetings.items():
        s = schedule.session_of[mids[0]].series
        full = [m for m, p in planted if m in mids and contains_tokens(tokens(p.sentences[0]),
                                                                          series_name(s.team, s.kind))]
        assert full, sid
    for mid, p in planted:
        s = schedule.session_of[mid].series
        assert (p.fact["team"], p.fact["kind"]) == (s.team, s.kind)


def test_every_phrasing_names_what_its_form_says():
    for forms in PHRASINGS.values():
        for form, text in forms:
            said = tokens(text.format(T="Payments", K="design review"))
            want = {"full": ("payments", "design", "review"), "team": ("payments", "team"),
                    "kind": ("design", "review")}[form]
            assert contains_tokens(said, want), text
            if form != "full":
                assert not contains_tokens(said, ("payments", "design", "review")), text
