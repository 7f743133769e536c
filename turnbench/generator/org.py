"""The organisation: teams with rosters, recurring series of several kinds, and session dates.

Faker is used here only, from one instance seeded with the corpus seed, for people's names; cities and
everything else come from ``wordlists`` and seeded ``random.Random`` instances.
"""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from turnbench.generator import wordlists
from turnbench.generator.config import GeneratorConfig, rng_for
from turnbench.generator.subjects import reserved_for_aggregation

if TYPE_CHECKING:
    from faker import Faker

_PLAIN_NAME = re.compile(r"^[A-Z][a-z]+$")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


@dataclass(frozen=True)
class Team:
    name: str
    members: tuple[str, ...]
    topics: tuple[int, ...]  # indices into wordlists.AGENDA_TOPICS


@dataclass(frozen=True)
class Series:
    id: str
    team: str
    kind: str
    chair: str
    roster: tuple[str, ...]  # the template roster, chair first
    agenda: tuple[int, ...]  # the template agenda (topic indices)
    dates: tuple[str, ...]  # ISO date of each session, non-decreasing
    slot: str = ""  # the weekday every session falls on ("Monday"); empty when the series meets more than weekly


@dataclass(frozen=True)
class Organisation:
    teams: tuple[Team, ...]
    series: tuple[Series, ...]
    cities: tuple[str, ...]
    name_tokens: tuple[str, ...]  # lowercased tokens of every person name, sorted

    def team(self, name: str) -> Team:
        for t in self.teams:
            if t.name == name:
                return t
        raise KeyError(name)


def series_count(meetings: int) -> int:
    """At least 8 series (8 kinds) once there are 16 meetings; about 8 sessions per series beyond that."""
    return max(min(8, meetings // 2), meetings // 8)


def _faker(seed: int) -> Faker:
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(seed)
    return fake


def _people(fake: Faker, n: int) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    # a person called Amber or Hazel would put a marker's word at the start or end of every turn that addresses
    # them by name, where a phrase could be made across two turns, and one called Austin would state a fact whose
    # value is the city ("Austin has a point about the Calgary plant lease"): no name uses a word aggregation
    # phrases use or a city's
    reserved = reserved_for_aggregation() | {w.lower() for c in wordlists.CITIES for w in c.split()}
    while len(names) < n:
        first, last = fake.first_name(), fake.last_name()
        full = f"{first} {last}"
        # plain ASCII names only: tokenisers then agree on them and no apostrophe reaches the text
        if not (_PLAIN_NAME.match(first) and _PLAIN_NAME.match(last)) or full in seen:
            continue
        if first.lower() in reserved or last.lower() in reserved:
            continue
        seen.add(full)
        names.append(full)
    return names


def _weekday(d: datetime.date) -> datetime.date:
    while d.weekday() >= 5:
        d += datetime.timedelta(days=1)
    return d


def _slot_dates(start: datetime.date, offset: int, cadence: int, n: int, span: int,
                day: int) -> tuple[str, tuple[str, ...]]:
    """A series' slot and session dates: a series that meets at most weekly keeps one weekday (``day``) every
    ``cadence`` days rounded down to whole weeks, inside the span; one that meets more often has no slot."""
    if cadence < 7:
        return "", tuple(_weekday(start + datetime.timedelta(days=offset + k * cadence)).isoformat()
                         for k in range(n))
    step = cadence - cadence % 7
    window = span - (n - 1) * step  # at least ``cadence``, so at least a week: every weekday starts in it
    first = offset + (day - (start + datetime.timedelta(days=offset)).weekday()) % 7
    if first >= window:
        first -= 7
    return WEEKDAYS[day], tuple((start + datetime.timedelta(days=first + k * step)).isoformat() for k in range(n))


def build_organisation(cfg: GeneratorConfig) -> Organisation:
    rng = rng_for(cfg.seed, "org")
    fake = _faker(cfg.seed)
    n_kinds = len(wordlists.KINDS)
    n_series = series_count(cfg.meetings)
    n_teams = min(max(2, math.ceil(n_series / 4)), len(wordlists.TEAM_NAMES))
    n_series = min(n_series, n_teams * n_kinds)

    team_names = rng.sample(wordlists.TEAM_NAMES, n_teams)
    sizes = [rng.randint(*cfg.voice.team_size) for _ in range(n_teams)]
    people = _people(fake, sum(sizes))
    cities = list(wordlists.CITIES)
    teams = []
    at = 0
    for name, size in zip(team_names, sizes, strict=True):
        topics = tuple(rng.sample(range(len(wordlists.AGENDA_TOPICS)), 6))
        teams.append(Team(name=name, members=tuple(people[at:at + size]), topics=topics))
        at += size

    # Session counts: an even split, then random transfers so series differ in length.
    sessions = [cfg.meetings // n_series] * n_series
    for _ in range(cfg.meetings - sum(sessions)):
        sessions[rng.randrange(n_series)] += 1
    for _ in range(n_series):
        i, j = rng.randrange(n_series), rng.randrange(n_series)
        if sessions[i] > 3:
            sessions[i] -= 1
            sessions[j] += 1

    kind_order = rng.sample(wordlists.KINDS, n_kinds)
    slot_rng = rng_for(cfg.seed, "slots")
    start = datetime.date.fromisoformat(cfg.start_date)
    series = []
    for j in range(n_series):
        t = j % n_teams
        team = teams[t]
        # offset t*4 spreads kinds across teams, so 8 series already cover 8 kinds
        kind = kind_order[(j // n_teams + t * 4) % n_kinds]
        members = list(team.members)
        chair = members[rng.randrange(len(members))]
        others = [m for m in members if m != chair]
        roster = (chair, *rng.sample(others, min(len(others), rng.randint(*cfg.voice.template_others))))
        agenda = tuple(rng.sample(team.topics, 3))
        n = sessions[j]
        cadence = max(1, cfg.span_days // n)
        offset = rng.randrange(cadence)
        slot, dates = _slot_dates(start, offset, cadence, n, cfg.span_days, slot_rng.randrange(len(WEEKDAYS)))
        series.append(Series(id=f"s{j + 1:03d}", team=team.name, kind=kind, chair=chair, roster=roster,
                             agenda=agenda, dates=dates, slot=slot))
    tokens = sorted({tok.lower() for p in people for tok in p.split()})
    return Organisation(teams=tuple(teams), series=tuple(series), cities=tuple(cities),
                        name_tokens=tuple(tokens))
