"""The organisation (turnbench/generator/org.py): teams with plain names, series that cover every kind
early, chairs on their own rosters, and weekday session dates in order."""

from __future__ import annotations

import datetime
import re

from turnbench.generator import wordlists
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.org import build_organisation, series_count


def test_series_count_grows_with_the_corpus():
    assert [series_count(n) for n in (8, 16, 40, 80, 200)] == [4, 8, 8, 10, 25]


def test_an_organisation_has_plain_names_rosters_from_the_team_and_ordered_weekday_dates():
    cfg = GeneratorConfig(seed=7, meetings=120)
    org = build_organisation(cfg)
    people = [p for t in org.teams for p in t.members]
    assert len(people) == len(set(people)) and all(re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+", p) for p in people)
    assert all(6 <= len(t.members) <= 9 and len(set(t.topics)) == 6 for t in org.teams)
    assert org.name_tokens == tuple(sorted({w.lower() for p in people for w in p.split()}))
    assert len(org.cities) == len(set(org.cities)) == 40
    assert sum(len(s.dates) for s in org.series) == cfg.meetings
    assert len({s.kind for s in org.series}) == len(wordlists.KINDS)
    assert len({(s.team, s.kind) for s in org.series}) == len(org.series)
    start = datetime.date.fromisoformat(cfg.start_date)
    for s in org.series:
        team = org.team(s.team)
        assert s.roster[0] == s.chair and set(s.roster) <= set(team.members) and set(s.agenda) <= set(team.topics)
        dates = [datetime.date.fromisoformat(d) for d in s.dates]
        assert dates == sorted(dates) and all(d.weekday() < 5 and d >= start for d in dates)
    assert build_organisation(cfg) == org
