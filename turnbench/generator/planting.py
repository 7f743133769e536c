"""The plan's records and the state its planners share.

The plan fixes every meeting's identity (id, title, date, who is invited, who speaks, agenda) and every
sentence that carries ground truth; rendering then only places these sentences into turns, so meetings
can be rendered independently and in any process. ``Planting`` is what the planners of
``generator/plan.py`` and ``generator/plan_aggregation.py`` share while they draw.
"""

from __future__ import annotations

import datetime
import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from turnbench.corpus.records import MONTHS, Answer
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.contracts import LocatedFact, TargetFact
from turnbench.generator.names import InventedNames
from turnbench.generator.org import Organisation
from turnbench.generator.sessions import Session
from turnbench.generator.templates import AGG_NOUNS, AGG_SURFACES, AGG_VERBS

# Where in a meeting a plant goes: anywhere (shuffled with the other blocks), inside the opening turn, or
# in a closing turn by whoever opened the meeting.
ANYWHERE, OPENING, CLOSING = "any", "opening", "closing"


@dataclass(frozen=True)
class Plant:
    """Sentences to place: one sentence in one turn, or (setup, answer) in two turns by two speakers."""

    pid: str
    # marker | near_miss | deferral | deferral_near_miss | lookup | lookup_echo | component | component_echo
    # | alias | series_mention
    type: str
    sentences: tuple[str, ...]
    fact: LocatedFact = field(default_factory=lambda: LocatedFact())  # extra fields written to facts.jsonl
    position: str = ANYWHERE
    # words the talk around the sentence must not use: a paraphrased question's content words stay out of
    # its answer turns, so the measured lexical gap is the one the plan intends
    avoid: frozenset[str] = frozenset()


@dataclass(frozen=True)
class MeetingPlan:
    id: str
    ordinal: int
    title: str
    date: str
    team: str
    kind: str
    series: str
    session: int
    near_duplicate: bool
    speakers: tuple[str, ...]  # everyone who will speak; the first opens the meeting
    attendees: tuple[str, ...]  # the invitee list: speakers and silent invitees
    agenda: tuple[str, ...]
    topic_words: tuple[str, ...]
    words: int
    render_seed: int
    # Sessions with the series' template roster and agenda (session 1 and its near-duplicates) draw
    # part of their bulk text from one sentence bank per series; 0 means no bank.
    bank_seed: int
    plants: tuple[Plant, ...]
    register: str = "default"


@dataclass(frozen=True)
class QuerySpec:
    id: str
    cls: str
    rule: str
    surface: str
    text: str
    grammar: str | None = None
    pids: tuple[str, ...] = ()  # lookup: the fact's plant; multi_file: the components' plants
    series: str | None = None  # summarize
    answer: Answer | None = None
    target: TargetFact = field(default_factory=lambda: TargetFact())  # aggregation: what the validator looks for


@dataclass(frozen=True)
class Plan:
    config: GeneratorConfig
    org: Organisation
    meetings: tuple[MeetingPlan, ...]
    queries: tuple[QuerySpec, ...]


def plural(word: str) -> str:
    return word + ("es" if word.endswith(("ch", "sh", "s", "x")) else "s")


def month_label(iso_date: str) -> str:
    d = datetime.date.fromisoformat(iso_date)
    return f"{MONTHS[d.month - 1]} {d.year}"


def per_rule_count(meetings: int) -> int:
    return min(40, max(6, meetings // 8))


@dataclass(frozen=True)
class Schedule:
    """The sessions in meeting order beside their meeting ids, and the lookups the planners need."""

    ids: tuple[str, ...]
    sessions: tuple[Session, ...]
    session_of: Mapping[str, Session]  # meeting id -> its session
    series_meetings: Mapping[str, tuple[str, ...]]  # series id -> its meetings, in meeting order
    meeting_of: Mapping[tuple[str, int], str]  # (series id, session number) -> meeting id

    def same_series(self, mid: str) -> tuple[str, ...]:
        """Every meeting of ``mid``'s series, ``mid`` included."""
        return self.series_meetings[self.session_of[mid].series.id]


def make_schedule(sessions: list[Session], meetings: int) -> Schedule:
    """Meetings are numbered in (date, series, session) order."""
    ordered = tuple(sorted(sessions, key=lambda s: (s.date, s.series.id, s.session)))
    width = max(4, len(str(meetings)))
    ids = tuple(f"m{i + 1:0{width}d}" for i in range(len(ordered)))
    by_series: dict[str, list[str]] = {}
    for mid, sess in zip(ids, ordered, strict=True):
        by_series.setdefault(sess.series.id, []).append(mid)
    return Schedule(ids=ids, sessions=ordered, session_of=dict(zip(ids, ordered, strict=True)),
                    series_meetings={sid: tuple(mids) for sid, mids in by_series.items()},
                    meeting_of={(s.series.id, s.session): mid for mid, s in zip(ids, ordered, strict=True)})


class Planting:
    """What the planners share: every meeting's plants, the queries with their ids, and invented names."""

    def __init__(self, schedule: Schedule, org: Organisation, names: InventedNames) -> None:
        self.schedule = schedule
        self.org = org
        self.names = names
        self.people = sorted(p for t in org.teams for p in t.members)
        self.plants: dict[str, list[Plant]] = {mid: [] for mid in schedule.ids}
        self.queries: list[QuerySpec] = []

    def next_query_id(self) -> str:
        return f"q{len(self.queries) + 1:05d}"

    def plant(self, mid: str, plant: Plant) -> None:
        self.plants[mid].append(plant)

    def planted(self, mid: str) -> int:
        """How many plants ``mid`` has so far (marker and near-miss plant ids count them)."""
        return len(self.plants[mid])

    def value(self, kind: str, rng: random.Random) -> str:
        """A fact's value of ``kind`` (a vendor is an invented name)."""
        if kind == "amount":
            return str(rng.randint(12, 980))
        if kind == "date":
            return f"{MONTHS[rng.randrange(12)]} {rng.randint(1, 28)}"
        if kind == "person":
            return self.people[rng.randrange(len(self.people))]
        if kind == "city":
            return self.org.cities[rng.randrange(len(self.org.cities))]
        if kind == "vendor":
            return f"{self.names.new()} {rng.choice(('Labs', 'Systems', 'Partners', 'Group'))}"
        return f"{rng.randint(1, 9)}.{rng.randint(0, 19)}"

    def aggregation(self, rng: random.Random, rule: str, idx: int, answer: Answer, target: TargetFact,
                    **fmt: str) -> str:
        """Add the rule's ``idx``-th aggregation query (families in rotation); returns its id."""
        surface, grammar, tpl = AGG_SURFACES[rule][idx % 3]
        q = self.next_query_id()
        # verb and noun are drawn even for families that do not use them, so every rule draws alike
        text = tpl.format(verb=rng.choice(AGG_VERBS), noun=rng.choice(AGG_NOUNS), **fmt)
        self.queries.append(QuerySpec(q, "aggregation", rule, surface, text, grammar=grammar, answer=answer,
                                      target={"rule": rule, **target}))
        return q
