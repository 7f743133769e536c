"""The plan's records and the state its planners share.

The plan fixes every meeting's identity (id, title, date, who is invited, who speaks, agenda) and every
sentence that carries ground truth; writing a transcript then only places these sentences into turns, so
meetings can be written independently and in any process. ``Planting`` is what the planners of
``generator/plan.py`` and ``generator/plan_aggregation.py`` share while they draw.
"""

from __future__ import annotations

import datetime
import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from turnbench.corpus.records import MONTHS, Answer
from turnbench.errors import TurnbenchError
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.contracts import LocatedFact, TargetFact, contains_tokens, tokens
from turnbench.generator.org import Organisation
from turnbench.generator.sessions import Session
from turnbench.generator.subjects import Subject
from turnbench.generator.templates import AGG_NOUNS, AGG_SURFACES, AGG_VERBS

# Firms a vendor value names (with Labs, Systems, Partners or Group): ordinary surnames, none a subject's word.
VENDOR_WORDS = ("Abbott", "Barlow", "Carver", "Denholm", "Everett", "Fenwick", "Garrick", "Hadley", "Ingram",
                "Jessop", "Kendal", "Lowther", "Marsden", "Norcott", "Oldham", "Prescott", "Quinlan", "Radcliffe",
                "Selby", "Tolland", "Upton", "Varley", "Wardle", "Yardley")
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
    # words the talk around the sentence must not use: a question's substitutes and other words of its own stay out
    # of its evidence turns, so the measured distance is the one the plan drew (generator/lexicon.py)
    avoid: frozenset[str] = frozenset()
    about: str = ""  # the subject the talk around the sentence is about (empty: plain talk)
    talk: tuple[str, ...] = ()  # the words of the sentence's topic, for that talk


@dataclass(frozen=True)
class Discussion:
    """A block of turns in which several people discuss one aspect of a subject (generator/talk.py).

    A queried discussion (``query`` set) is the gold of a topic or opinion question; a background one is talk about
    the team's other business, never about a (subject, aspect) pair a question asks about."""

    did: str
    subject: str  # the subject's name as said after "the" ("the Harrow Logistics renewal")
    said: str  # and as a noun phrase of its own ("Harrow Logistics", "the partner portal")
    aspect: str
    talk: tuple[str, ...]
    agenda: str  # the agenda item it comes under
    speakers: tuple[str, ...]  # who takes part, the opener first (empty: drawn when written)
    turns: int
    addressed: str = ""  # a participant's first name the talk must say once (the person an opinion question names)
    named: str = ""  # and that participant's full name (two participants may share a first name)
    query: str | None = None
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
    transcript_seed: int
    # Sessions with the series' template roster and agenda (session 1 and its near-duplicates) draw
    # part of their bulk text from one sentence bank per series; 0 means no bank.
    bank_seed: int
    plants: tuple[Plant, ...]
    register: str = "default"
    asr_wer: float = 0.0  # the ASR preset's word error rate; 0: off (generator/noise.py)
    asr_entity_accuracy: float = 0.82
    discussions: tuple[Discussion, ...] = ()  # queried ones; always written
    background: tuple[Discussion, ...] = ()  # written while the meeting has words to fill, in this order


@dataclass(frozen=True)
class QuerySpec:
    id: str
    cls: str
    rule: str
    surface: str
    text: str
    grammar: str | None = None
    pids: tuple[str, ...] = ()  # lookup: the fact's plant or the discussion; multi_file: the components' plants
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
    """What the planners share: every meeting's plants and discussions, the queries with their ids and each team's
    subjects."""

    def __init__(self, schedule: Schedule, org: Organisation,
                 subjects: Mapping[str, tuple[Subject, ...]] | None = None) -> None:
        self.schedule = schedule
        self.org = org
        self.people = sorted(p for t in org.teams for p in t.members)
        self.plants: dict[str, list[Plant]] = {mid: [] for mid in schedule.ids}
        self.discussions: dict[str, list[Discussion]] = {mid: [] for mid in schedule.ids}
        self.background: dict[str, list[Discussion]] = {mid: [] for mid in schedule.ids}
        self.queries: list[QuerySpec] = []
        self.subjects: Mapping[str, tuple[Subject, ...]] = subjects or {}
        self.subject_values: dict[str, list[tuple[str, ...]]] = {}

    def next_query_id(self) -> str:
        return f"q{len(self.queries) + 1:05d}"

    def plant(self, mid: str, plant: Plant) -> None:
        self.plants[mid].append(plant)

    def planted(self, mid: str) -> int:
        """How many plants ``mid`` has so far (marker and near-miss plant ids count them)."""
        return len(self.plants[mid])

    def value(self, kind: str, rng: random.Random) -> str:
        """A fact's value of ``kind``: a number, a date, a person, a city, a firm or a version."""
        if kind == "amount":
            return str(rng.randint(12, 980))
        if kind == "small":
            return str(rng.randint(2, 14))
        if kind == "percent":
            return str(rng.randint(3, 40))
        if kind == "date":
            return f"{MONTHS[rng.randrange(12)]} {rng.randint(1, 28)}"
        if kind == "person":
            return self.people[rng.randrange(len(self.people))]
        if kind == "city":
            return self.org.cities[rng.randrange(len(self.org.cities))]
        if kind == "vendor":
            return f"{rng.choice(VENDOR_WORDS)} {rng.choice(('Labs', 'Systems', 'Partners', 'Group'))}"
        return f"{rng.randint(1, 9)}.{rng.randint(0, 19)}"

    def value_of(self, subject: str, kind: str, rng: random.Random) -> str:
        """A value for a fact about ``subject`` that neither holds nor is held in another of its facts' values ("4"
        and "4.2") and says no word of the subject (the Cardiff office's offsite is not in Cardiff), so the validator
        can tell each fact of a subject by where subject and value are said together."""
        said = self.subject_values.setdefault(subject, [])
        named = set(tokens(subject))
        for _ in range(200):
            text = self.value(kind, rng)
            v = tuple(tokens(text))
            if named.isdisjoint(v) and not any(contains_tokens(v, w) or contains_tokens(w, v) for w in said):
                said.append(v)
                return text
        raise TurnbenchError(f"no value of kind {kind} left for {subject}")

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
