"""Sessions (turnbench/generator/sessions.py): template sessions repeat the series roster and agenda, and
the R6 fix-up makes each series' chair its unique most frequent speaker by changing at most two sessions."""

from __future__ import annotations

import random

from turnbench.generator.config import GeneratorConfig
from turnbench.generator.org import build_organisation
from turnbench.generator.sessions import draw_sessions, speaker_counts, unique_attendance_max

CFG = GeneratorConfig(seed=9, meetings=80)


def test_template_sessions_repeat_the_roster_and_agenda_and_others_keep_the_chair():
    org = build_organisation(CFG)
    sessions = draw_sessions(CFG, org)
    assert len(sessions) == 80
    for sess in sessions:
        s = sess.series
        assert sess.date == s.dates[sess.session - 1]
        assert sess.speakers[0] == s.chair and not set(sess.silent) & set(sess.speakers)
        if sess.template_like:
            assert (sess.speakers, sess.agenda) == (s.roster, s.agenda)
        else:
            assert 3 <= len(sess.speakers) <= 7 and 2 <= len(sess.agenda) <= 4
    assert not any(s.near_dup for s in draw_sessions(GeneratorConfig(seed=9, meetings=80, near_duplicate_rate=0.0),
                                                     org))


def test_the_chair_becomes_the_unique_leader_and_at_most_two_sessions_change():
    org = build_organisation(CFG)
    drawn = draw_sessions(CFG, org)
    before = list(drawn)
    fixed = unique_attendance_max(drawn, org, random.Random(1))
    assert drawn == before  # new sessions are returned; the input list is left as it was
    assert [(s.series.id, s.session) for s in fixed] == [(s.series.id, s.session) for s in drawn]
    counts = speaker_counts(fixed)
    tied_before = 0
    for s in org.series:
        if len(s.dates) < 2:
            continue
        c = counts[s.id]
        assert [p for p, n in c.items() if n == max(c.values())] == [s.chair], s.id
        changed = [a for a, b in zip(drawn, fixed, strict=True) if a.series.id == s.id and a != b]
        assert len(changed) <= 2
        tied_before += bool(changed)
        assert all(a.near_dup == b.near_dup and a.agenda == b.agenda
                   for a, b in zip(drawn, fixed, strict=True) if a.series.id == s.id)
    assert tied_before > 0  # the fix-up had work to do in this organisation
