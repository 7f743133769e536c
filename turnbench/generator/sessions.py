"""Sessions: who is invited to each session of a series, who speaks, and what it discusses, decided before
any text exists.

A series' first session, and each later one with probability ``near_duplicate_rate``, repeats the series
template: its roster and its agenda. Any other session has the chair and some team members (how many is
the register's), sometimes guests from other teams, two to four of the team's topics, and sometimes a
silent invitee.

R6 asks who attended a series most, and attendance is speaking. ``settle_attendance`` makes the chair the
unique most frequent speaker of every series and, in half the series with three or more sessions (rounded
up), sets the invitee trap: the chair misses one session and a listener is invited to every session but speaks
in fewer than the chair, so an engine that counts invitations instead of speakers names the listener.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from turnbench.generator.config import GeneratorConfig, rng_for
from turnbench.generator.org import Organisation, Series

SILENT_INVITEE_RATE = 0.3
TRAP_RATE = 0.5


@dataclass(frozen=True)
class Session:
    series: Series
    session: int  # 1-based, in date order within the series
    date: str  # ISO date
    near_dup: bool  # repeats the series template without being its first session
    speakers: tuple[str, ...]  # everyone who will speak; the first opens the meeting (the chair, when present)
    silent: tuple[str, ...]  # invited but never speaks
    agenda: tuple[int, ...]  # indices into wordlists.AGENDA_TOPICS

    @property
    def template_like(self) -> bool:
        """Whether the session repeats the series template (its first session or a near-duplicate)."""
        return self.session == 1 or self.near_dup

    @property
    def invitees(self) -> tuple[str, ...]:
        """The invitee list: everyone who speaks and everyone invited who does not."""
        return tuple(sorted(set(self.speakers) | set(self.silent)))


def draw_sessions(cfg: GeneratorConfig, org: Organisation) -> list[Session]:
    """Every session's roster and agenda, series by series, before attendance is settled."""
    rng = rng_for(cfg.seed, "sessions")
    voice = cfg.voice
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
                speakers = [s.chair, *rng.sample(pool, min(len(pool), rng.randint(*voice.session_others)))]
                if rng.random() < voice.guest_rate and others_by_team[s.team]:
                    guests = others_by_team[s.team]
                    for _ in range(rng.randint(*voice.guests)):
                        guest = guests[rng.randrange(len(guests))]
                        if guest not in speakers:
                            speakers.append(guest)
                agenda = rng.sample(team.topics, rng.randint(2, 4))
                absent = [m for m in team.members if m not in speakers]
                if absent and rng.random() < SILENT_INVITEE_RATE:
                    silent.append(absent[rng.randrange(len(absent))])
            out.append(Session(series=s, session=k + 1, date=date, near_dup=near_dup, speakers=tuple(speakers),
                               silent=tuple(silent), agenda=tuple(agenda)))
    return out


def _per_series(sessions: Iterable[Session], people: Callable[[Session], Iterable[str]]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for sess in sessions:
        c = counts.setdefault(sess.series.id, {})
        for p in people(sess):
            c[p] = c.get(p, 0) + 1
    return counts


def speaker_counts(sessions: Iterable[Session]) -> dict[str, dict[str, int]]:
    """Series id -> person -> how many of the series' sessions they speak in."""
    return _per_series(sessions, lambda s: s.speakers)


def invitee_counts(sessions: Iterable[Session]) -> dict[str, dict[str, int]]:
    """Series id -> person -> how many of the series' sessions they are invited to."""
    return _per_series(sessions, lambda s: s.invitees)


def leaders(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """Everyone with the highest count, with that count, by name."""
    top = max(counts.values(), default=0)
    return sorted((p, c) for p, c in counts.items() if c == top)


def settle_attendance(sessions: Sequence[Session], org: Organisation, rng: random.Random,
                      trap_rate: float = TRAP_RATE) -> list[Session]:
    """The sessions, with every series' chair its unique most frequent speaker (where the sessions leave room
    for one) and the invitee trap set in ``trap_rate`` of the series with three or more sessions, rounded up.
    New sessions are returned."""
    positions: dict[str, list[int]] = {}
    for i, sess in enumerate(sessions):
        positions.setdefault(sess.series.id, []).append(i)
    long = sorted(sid for sid, idx in positions.items() if len(idx) >= 3)
    traps = set(rng.sample(long, math.ceil(len(long) * trap_rate)))
    out = list(sessions)
    for sid in sorted(positions):
        idx = positions[sid]
        if len(idx) < 2:
            continue
        settled = _settle_series([sessions[i] for i in idx], org, rng, sid in traps)
        for i, sess in zip(idx, settled, strict=True):
            out[i] = sess
    return out


def _settle_series(group: list[Session], org: Organisation, rng: random.Random, trap: bool) -> list[Session]:
    s = group[0].series
    n = len(group)
    members = org.team(s.team).members
    outsiders = [p for t in org.teams if t.name != s.team for p in t.members]
    # changes go first to sessions that are neither the template (session 1) nor near-duplicates
    order = sorted(range(n), key=lambda i: (group[i].session == 1, group[i].near_dup, rng.random()))
    speakers = [list(g.speakers) for g in group]
    silent = [list(g.silent) for g in group]
    listener: str | None = None
    if trap:
        away = order[0]
        speakers[away].remove(s.chair)
        listener = rng.choice([m for m in members if m != s.chair])
        if len(speakers[away]) < 2:
            speakers[away].append(rng.choice([m for m in members if m not in speakers[away] and m != s.chair]))

    counts: dict[str, int] = {}
    for sp in speakers:
        for p in sp:
            counts[p] = counts.get(p, 0) + 1
    top = counts[s.chair]
    for p in sorted(counts):
        if p == s.chair:
            continue
        for i in order:
            if counts[p] < top:
                break
            if p in speakers[i] and len(speakers[i]) > 2:
                speakers[i].remove(p)
                counts[p] -= 1
        for i in order:
            # sessions too small to lose anyone: swap p for a team member who stays below the chair, or
            # else for someone from another team sitting in
            if counts[p] < top:
                break
            spare = [m for m in members if m not in speakers[i] and m not in (s.chair, listener)
                     and counts.get(m, 0) + 1 < top]
            spare = spare or [m for m in outsiders if m not in speakers[i] and counts.get(m, 0) + 1 < top]
            if p in speakers[i] and spare:
                new = spare[rng.randrange(len(spare))]
                speakers[i][speakers[i].index(p)] = new
                counts[p] -= 1
                counts[new] = counts.get(new, 0) + 1

    for i in range(n):
        silent[i] = [p for p in silent[i] if p not in speakers[i]]
    if listener is not None:
        for i in range(n):
            if listener not in speakers[i] and listener not in silent[i]:
                silent[i].append(listener)
        # nobody else is invited to every session, so the listener alone leads by invitations
        for p in sorted({p for sp, si in zip(speakers, silent, strict=True) for p in (*sp, *si)} - {listener}):
            for i in order:
                if sum(p in speakers[j] or p in silent[j] for j in range(n)) < n:
                    break
                if p in silent[i]:
                    silent[i].remove(p)
    return [dataclasses.replace(g, speakers=tuple(sp), silent=tuple(si))
            for g, sp, si in zip(group, speakers, silent, strict=True)]
