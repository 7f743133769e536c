"""Sessions: who speaks in each session of a series and what it discusses, decided before any text exists.

A series' first session, and each later one with probability ``near_duplicate_rate``, repeats the series
template: its roster and its agenda. Any other session has the chair and two to five team members,
sometimes a guest from another team, two to four of the team's topics, and sometimes a silent invitee.
R6 asks who attended a series most, so the chair must be its unique most frequent speaker:
``unique_attendance_max`` arranges that while changing at most two sessions per series.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from turnbench.generator.config import GeneratorConfig, rng_for
from turnbench.generator.org import Organisation, Series

GUEST_RATE = 0.15
SILENT_INVITEE_RATE = 0.3


@dataclass(frozen=True)
class Session:
    series: Series
    session: int  # 1-based, in date order within the series
    date: str  # ISO date
    near_dup: bool  # repeats the series template without being its first session
    speakers: tuple[str, ...]  # everyone who will speak; the first is the chair
    silent: tuple[str, ...]  # invited but never speaks
    agenda: tuple[int, ...]  # indices into vocab.AGENDA_TOPICS

    @property
    def template_like(self) -> bool:
        """Whether the session repeats the series template (its first session or a near-duplicate)."""
        return self.session == 1 or self.near_dup


def draw_sessions(cfg: GeneratorConfig, org: Organisation) -> list[Session]:
    """Every session's roster and agenda, series by series, before the R6 fix-up."""
    rng = rng_for(cfg.seed, "sessions")
    others_by_team = {t.name: [p for u in org.teams if u.name != t.name for p in u.members] for t in org.teams}
    out = []
    for s in org.series:
        team = org.team(s.team)
        for k, date in enumerate(s.dates):
            near_dup = k > 0 and rng.random() < cfg.near_duplicate_rate
            silent: list[str] = []
            if k == 0 or near_dup:
                speakers = list(s.roster)
                agenda = list(s.agenda)
            else:
                pool = [m for m in team.members if m != s.chair]
                speakers = [s.chair, *rng.sample(pool, min(len(pool), rng.randint(2, 5)))]
                if rng.random() < GUEST_RATE and others_by_team[s.team]:
                    guests = others_by_team[s.team]
                    speakers.append(guests[rng.randrange(len(guests))])
                agenda = rng.sample(team.topics, rng.randint(2, 4))
                absent = [m for m in team.members if m not in speakers]
                if absent and rng.random() < SILENT_INVITEE_RATE:
                    silent.append(absent[rng.randrange(len(absent))])
            out.append(Session(series=s, session=k + 1, date=date, near_dup=near_dup, speakers=tuple(speakers),
                               silent=tuple(silent), agenda=tuple(agenda)))
    return out


def speaker_counts(sessions: Iterable[Session]) -> dict[str, dict[str, int]]:
    """Series id -> person -> how many of the series' sessions they speak in."""
    counts: dict[str, dict[str, int]] = {}
    for sess in sessions:
        c = counts.setdefault(sess.series.id, {})
        for p in sess.speakers:
            c[p] = c.get(p, 0) + 1
    return counts


def unique_attendance_max(sessions: Sequence[Session], org: Organisation, rng: random.Random) -> list[Session]:
    """The sessions, with the chair made the unique most frequent speaker of every series.

    Everyone else who speaks in every session must miss one. To keep near-duplicate sessions intact,
    at most two sessions change: one drops all but one of them, another drops that last one (or, when
    it would be left with fewer than two speakers, swaps them for another team member).
    """
    positions: dict[str, list[int]] = {}
    for i, sess in enumerate(sessions):
        positions.setdefault(sess.series.id, []).append(i)
    counts = speaker_counts(sessions)
    out = list(sessions)
    for sid in sorted(positions):
        group = [sessions[i] for i in positions[sid]]
        if len(group) < 2:
            continue
        s = group[0].series
        tied = sorted(p for p, c in counts[sid].items() if c == len(group) and p != s.chair)
        if not tied:
            continue
        # prefer sessions that are neither the template (session 1) nor near-duplicates
        order = sorted(range(len(group)), key=lambda i: (group[i].session == 1, group[i].near_dup, rng.random()))
        first, second = order[0], order[1]
        keep = tied[rng.randrange(len(tied))]
        out[positions[sid][first]] = dataclasses.replace(
            group[first], speakers=tuple(p for p in group[first].speakers if p == keep or p not in tied))
        sp = list(group[second].speakers)
        if len(sp) > 2:
            sp.remove(keep)
        else:
            spare = [m for m in org.team(s.team).members if m not in sp]
            if spare:
                sp[sp.index(keep)] = spare[rng.randrange(len(spare))]
        out[positions[sid][second]] = dataclasses.replace(group[second], speakers=tuple(sp))
    return out
