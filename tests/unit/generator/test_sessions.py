"""Sessions (turnbench/generator/sessions.py): template sessions repeat the series roster and agenda; settling
attendance makes each series' chair its unique most frequent speaker and sets the invitee trap in half the
series with three or more sessions."""

from __future__ import annotations

import random

from turnbench.generator.config import GeneratorConfig
from turnbench.generator.org import build_organisation
from turnbench.generator.sessions import (
    draw_sessions,
    invitee_counts,
    leaders,
    settle_attendance,
    speaker_counts,
)

CFG = GeneratorConfig(seed=9, meetings=80)


def test_template_sessions_repeat_the_roster_and_agenda_and_others_keep_the_chair():
    org = build_organisation(CFG)
    sessions = draw_sessions(CFG, org)
    assert len(sessions) == 80
    for sess in sessions:
        s = sess.series
        assert sess.date == s.dates[sess.session - 1]
        assert sess.speakers[0] == s.chair and not set(sess.silent) & set(sess.speakers)
        assert sess.invitees == tuple(sorted(set(sess.speakers) | set(sess.silent)))
        if sess.template_like:
            assert (sess.speakers, sess.agenda) == (s.roster, s.agenda)
        else:
            assert 3 <= len(sess.speakers) <= 7 and 2 <= len(sess.agenda) <= 4
    assert not any(s.near_dup for s in draw_sessions(GeneratorConfig(seed=9, meetings=80, near_duplicate_rate=0.0),
                                                     org))


def test_the_chair_leads_by_speech_and_half_the_long_series_lead_someone_else_by_invitation():
    org = build_organisation(CFG)
    drawn = draw_sessions(CFG, org)
    before = list(drawn)
    settled = settle_attendance(drawn, org, random.Random(1))
    assert drawn == before  # new sessions are returned; the input list is left as it was
    assert [(s.series.id, s.session, s.near_dup, s.agenda) for s in settled] == \
        [(s.series.id, s.session, s.near_dup, s.agenda) for s in drawn]
    spoke, invited = speaker_counts(settled), invitee_counts(settled)
    long = [s for s in org.series if len(s.dates) >= 3]
    traps = 0
    for s in org.series:
        group = [x for x in settled if x.series.id == s.id]
        assert all(len(x.speakers) >= 2 and not set(x.silent) & set(x.speakers) for x in group)
        if len(group) < 2:
            continue
        ((leader, count),) = leaders(spoke[s.id])
        assert leader == s.chair, s.id
        if (leader, count) in leaders(invited[s.id]):
            assert count == len(group)  # no trap: the chair speaks in every session
            continue
        traps += 1
        # the trap: the chair misses one session; one listener is invited to all, speaks in fewer than the chair
        assert count == len(group) - 1
        absent = [x for x in group if s.chair not in x.invitees]
        assert len(absent) == 1 and absent[0].speakers[0] != s.chair
        ((listener, invitations),) = leaders(invited[s.id])
        assert invitations == len(group) and listener != s.chair and spoke[s.id].get(listener, 0) < count
    assert long and traps == -(-len(long) // 2)
