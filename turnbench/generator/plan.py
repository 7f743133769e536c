"""The global planting plan: decided once from the seed, before any meeting is rendered.

The plan fixes every meeting's identity (id, title, date, who speaks, agenda) and every sentence
that carries ground truth (which meeting gets which lookup fact, marker phrase, deferral event or
near-miss), together with each query's text and, for aggregation, its answer. Rendering then only
places these sentences into turns, so meetings can be rendered independently and in any process.

One planner per query class draws from its own seeded generator, in a fixed order (lookup, multi_file,
summarize, R3/R4/R7 markers, R5 deferrals, R6 attendance), so query ids are sequential across classes
and the bytes of a corpus depend only on the seed and options.
"""

from __future__ import annotations

import datetime
import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from turnbench.corpus.records import MONTHS, Answer
from turnbench.generator import vocab
from turnbench.generator.config import GeneratorConfig, derived_seed, rng_for
from turnbench.generator.contracts import LocatedFact, TargetFact, session_title
from turnbench.generator.names import InventedNames, reserved_words
from turnbench.generator.org import Organisation, build_organisation
from turnbench.generator.sessions import Session, draw_sessions, speaker_counts, unique_attendance_max
from turnbench.generator.templates import (
    AGG_NOUNS,
    AGG_SURFACES,
    AGG_VERBS,
    LOOKUP_ECHOES,
    LOOKUP_SURFACES,
    LOOKUP_TEMPLATES,
    MULTI_ECHOES,
    MULTI_SURFACES,
    MULTI_TEMPLATES,
    SUMMARY_TEMPLATES,
)

# Echo rates: a fact raised in a session that repeats the series template (session 1 or a near-duplicate)
# recurs in the other template sessions most of the time, which is what makes near-duplicates hard;
# a fact from a varied session recurs less often, anywhere in the series.
LOOKUP_ECHO_RATE_TEMPLATE = 0.9
LOOKUP_ECHO_RATE = 0.3
MULTI_ECHO_RATE = 0.5


@dataclass(frozen=True)
class Plant:
    """Sentences to place: one sentence in one turn, or (setup, answer) in two turns by two speakers."""

    pid: str
    type: str  # marker | near_miss | deferral | deferral_near_miss | lookup | lookup_echo | component | component_echo
    sentences: tuple[str, ...]
    fact: LocatedFact = field(default_factory=lambda: LocatedFact())  # extra fields written to facts.jsonl


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
    speakers: tuple[str, ...]  # everyone who will speak; the first is the chair
    attendees: tuple[str, ...]  # invited: speakers plus perhaps a silent invitee
    agenda: tuple[str, ...]
    topic_words: tuple[str, ...]
    words: int
    render_seed: int
    # Sessions with the series' template roster and agenda (session 1 and its near-duplicates) draw
    # part of their bulk text from one sentence bank per series; 0 means no bank.
    bank_seed: int
    plants: tuple[Plant, ...]


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
class _Schedule:
    """The sessions in meeting order beside their meeting ids, and the lookups the planners need."""

    ids: tuple[str, ...]
    sessions: tuple[Session, ...]
    session_of: Mapping[str, Session]  # meeting id -> its session
    series_meetings: Mapping[str, tuple[str, ...]]  # series id -> its meetings, in meeting order
    meeting_of: Mapping[tuple[str, int], str]  # (series id, session number) -> meeting id

    def same_series(self, mid: str) -> tuple[str, ...]:
        """Every meeting of ``mid``'s series, ``mid`` included."""
        return self.series_meetings[self.session_of[mid].series.id]


def _schedule(sessions: list[Session], meetings: int) -> _Schedule:
    """Meetings are numbered in (date, series, session) order."""
    ordered = tuple(sorted(sessions, key=lambda s: (s.date, s.series.id, s.session)))
    width = max(4, len(str(meetings)))
    ids = tuple(f"m{i + 1:0{width}d}" for i in range(len(ordered)))
    by_series: dict[str, list[str]] = {}
    for mid, sess in zip(ids, ordered, strict=True):
        by_series.setdefault(sess.series.id, []).append(mid)
    return _Schedule(ids=ids, sessions=ordered, session_of=dict(zip(ids, ordered, strict=True)),
                     series_meetings={sid: tuple(mids) for sid, mids in by_series.items()},
                     meeting_of={(s.series.id, s.session): mid for mid, s in zip(ids, ordered, strict=True)})


class _Planting:
    """What the planners share: every meeting's plants, the queries with their ids, and invented names."""

    def __init__(self, schedule: _Schedule, org: Organisation, names: InventedNames) -> None:
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


def _plan_lookups(p: _Planting, cfg: GeneratorConfig) -> None:
    """R1: a fact asked in a setup turn and stated in an answer turn of one meeting.

    Echoes bring the subject up, without the fact, in other sessions of the same series (near-duplicate
    competitors), so naming the subject alone does not find the meeting.
    """
    rng = rng_for(cfg.seed, "lookup")
    per_meeting = min(4, max(2, round(cfg.words_per_meeting / 1000)))
    sched = p.schedule
    for mid in sched.ids:
        for _ in range(per_meeting):
            tpl = LOOKUP_TEMPLATES[rng.randrange(len(LOOKUP_TEMPLATES))]
            subject = p.names.new()
            value = p.value(tpl.value_kind, rng)
            s_setup = tpl.setup.format(S=subject, V=value)
            s_answer = tpl.answer.format(S=subject, V=value)
            surface = LOOKUP_SURFACES[len(p.queries) % len(LOOKUP_SURFACES)]
            text = {"question": tpl.question, "keyword": tpl.keyword}.get(surface, "")
            text = text.format(S=subject) if text else f'"{s_answer.rstrip(".")}"'
            q = p.next_query_id()
            pid = f"L{q}"
            p.plant(mid, Plant(pid, "lookup", (s_setup, s_answer),
                               {"query": q, "subject": subject, "value": value, "template": tpl.name}))
            p.queries.append(QuerySpec(q, "lookup", "R1", surface, text, pids=(pid,)))
            others = _lookup_echo_candidates(sched, mid, rng)
            if others:
                for j, other in enumerate(rng.sample(others, min(len(others), rng.randint(1, 2)))):
                    for k, echo in enumerate(rng.sample(LOOKUP_ECHOES[tpl.name], rng.randint(1, 3))):
                        p.plant(other, Plant(f"{pid}.e{j}.{k}", "lookup_echo", (echo.format(S=subject),),
                                             {"query": q, "subject": subject}))


def _lookup_echo_candidates(sched: _Schedule, mid: str, rng: random.Random) -> list[str]:
    """The meetings a lookup fact of ``mid`` may be echoed in; empty when it is not echoed."""
    series = sched.same_series(mid)
    template_like = sched.session_of[mid].template_like
    twins = [m for m in series if m != mid and sched.session_of[m].template_like] if template_like else []
    if twins and rng.random() < LOOKUP_ECHO_RATE_TEMPLATE:
        return twins
    if rng.random() < LOOKUP_ECHO_RATE:
        return [m for m in series if m != mid] or [m for m in sched.ids if m != mid]
    return []


def _plan_multi_file(p: _Planting, cfg: GeneratorConfig) -> None:
    """R2: one answer's components spread over 2-4 sessions of one series, one component per session."""
    rng = rng_for(cfg.seed, "multi_file")
    for s in p.org.series:
        n = len(s.dates)
        if n < 2:
            continue
        for g in range(min(4, n // 2)):
            tpl = MULTI_TEMPLATES[rng.randrange(len(MULTI_TEMPLATES))]
            subject = p.names.new()
            k = rng.randint(2, min(4, n))
            chosen = sorted(rng.sample(range(1, n + 1), k))
            values: list[str] = []
            while len(values) < k:
                v = p.value(tpl.value_kind, rng)
                if v not in values:
                    values.append(v)
            q = p.next_query_id()
            surface = MULTI_SURFACES[g % 2]
            text = (tpl.question if surface == "question" else tpl.keyword).format(S=subject, T=s.team, K=s.kind)
            pids = []
            for j, (sess_no, v) in enumerate(zip(chosen, values, strict=True)):
                pid = f"C{q}.{j}"
                pids.append(pid)
                p.plant(p.schedule.meeting_of[(s.id, sess_no)],
                        Plant(pid, "component", (tpl.component.format(S=subject, V=v),),
                              {"query": q, "subject": subject, "value": v, "template": tpl.name}))
            p.queries.append(QuerySpec(q, "multi_file", "R2", surface, text, pids=tuple(pids)))
            rest = [k for k in range(1, n + 1) if k not in chosen]
            if rest and rng.random() < MULTI_ECHO_RATE:
                other = p.schedule.meeting_of[(s.id, rest[rng.randrange(len(rest))])]
                echo = rng.choice(MULTI_ECHOES[tpl.name]).format(S=subject)
                p.plant(other, Plant(f"C{q}.e", "component_echo", (echo,), {"query": q, "subject": subject}))


def _plan_summaries(p: _Planting) -> None:
    """R8: every session of a series, one query per phrasing."""
    for s in p.org.series:
        for surface, tpl in SUMMARY_TEMPLATES:
            p.queries.append(QuerySpec(p.next_query_id(), "summarize", "R8", surface, tpl.format(T=s.team, K=s.kind),
                                       series=s.id))


def _plan_markers(p: _Planting, cfg: GeneratorConfig, n_rule: int) -> None:
    """R3, R4 and R7 from one draw of distinct marker phrases: R3 and R4 over the whole corpus, R7 in a month.

    One query in each rule (its first) and about one in ten more have the answer zero (R3, R4), and one in
    four R7 queries asks about a month in which the phrase never came up, when there is such a month.
    """
    rng = rng_for(cfg.seed, "markers")
    pairs = [(a, b) for a in vocab.MARKER_FIRST for b in vocab.MARKER_SECOND]
    markers = rng.sample(pairs, 3 * n_rule)
    ids = p.schedule.ids
    max_set = max(1, min(8, len(ids) // 3))
    for rule in ("R3", "R4"):
        for i in range(n_rule):
            a, b = markers[(0 if rule == "R3" else n_rule) + i]
            k = 0 if i == 0 or rng.random() < 0.1 else rng.randint(1, max_set)
            chosen = sorted(rng.sample(ids, k))
            ans = Answer("count", count=k) if rule == "R3" else Answer("meeting_set", meetings=tuple(chosen))
            q = p.aggregation(rng, rule, i, ans, {"phrase": f"{a} {b}"}, x=f"{a} {b}")
            _plant_marker(p, rng, f"{a} {b}", q, chosen)
            _plant_near_misses(p, rng, a, b, q, rng.randint(2 if k == 0 else 1, 3))

    date_of = {mid: s.date for mid, s in zip(ids, p.schedule.sessions, strict=True)}
    months = sorted({month_label(d) for d in date_of.values()},
                    key=lambda m: (m.split()[1], MONTHS.index(m.split()[0])))
    for i in range(n_rule):
        a, b = markers[2 * n_rule + i]
        k = rng.randint(min(2, len(ids)), max(2, max_set))
        chosen = sorted(rng.sample(ids, k))
        used = {month_label(date_of[m]) for m in chosen}
        empty = [m for m in months if m not in used]
        month = empty[rng.randrange(len(empty))] if (i % 4 == 0 and empty) else month_label(date_of[rng.choice(chosen)])
        count = sum(1 for m in chosen if month_label(date_of[m]) == month)
        q = p.aggregation(rng, "R7", i, Answer("count", count=count), {"phrase": f"{a} {b}", "month": month},
                          x=f"{a} {b}", month=month)
        _plant_marker(p, rng, f"{a} {b}", q, chosen)
        _plant_near_misses(p, rng, a, b, q, rng.randint(1, 3))


def _plant_marker(p: _Planting, rng: random.Random, phrase: str, q: str, meetings: list[str]) -> None:
    """The phrase one to three times in each chosen meeting."""
    for mid in meetings:
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            sentence = rng.choice(vocab.MARKER_TEMPLATES).format(x=phrase)
            p.plant(mid, Plant(f"M{q}.{p.planted(mid)}", "marker", (sentence,), {"query": q, "phrase": phrase}))


def _plant_near_misses(p: _Planting, rng: random.Random, a: str, b: str, q: str, count: int) -> None:
    """Phrases that look like the marker "a b" but must not be counted, each in a random meeting."""
    ids = p.schedule.ids
    for variant in rng.sample(("plural", "inserted", "reordered", "sibling"), count):
        if variant == "plural":
            phrase = f"{a} {plural(b)}"
        elif variant == "inserted":
            phrase = f"{a} {rng.choice(vocab.INSERTED)} {b}"
        elif variant == "reordered":
            phrase = f"{b} {a}"
        elif rng.random() < 0.5:
            phrase = f"{a} {rng.choice(vocab.SIBLING_SECOND)}"
        else:
            phrase = f"{rng.choice(vocab.SIBLING_FIRST)} {b}"
        mid = ids[rng.randrange(len(ids))]
        sentence = rng.choice(vocab.MARKER_TEMPLATES).format(x=phrase)
        p.plant(mid, Plant(f"N{q}.{p.planted(mid)}", "near_miss", (sentence,),
                           {"query": q, "phrase": phrase, "of": f"{a} {b}", "variant": variant}))


def _plan_deferrals(p: _Planting, cfg: GeneratorConfig, n_rule: int) -> None:
    """R5: how many times an item was deferred, with deferrals of look-alike items and mere mentions."""
    rng = rng_for(cfg.seed, "deferrals")
    ids = p.schedule.ids
    items = rng.sample([(a, t) for a in vocab.ITEM_AREAS for t in vocab.ITEM_THINGS], n_rule)
    for i, (area, thing) in enumerate(items):
        item = f"{area} {thing}"
        n_events = 0 if i == 0 or rng.random() < 0.1 else rng.randint(1, 6)
        q = p.aggregation(rng, "R5", i, Answer("count", count=n_events), {"item": item}, x=item)
        for j in range(n_events):
            mid = ids[rng.randrange(len(ids))]
            sentence = rng.choice(vocab.DEFER_TEMPLATES).format(x=item)
            p.plant(mid, Plant(f"D{q}.{j}", "deferral", (sentence,), {"query": q, "item": item}))
        for j, variant in enumerate(rng.sample(("mention", "plural", "sibling", "inserted"), rng.randint(1, 3))):
            if variant == "mention":
                sentence = rng.choice(vocab.MENTION_TEMPLATES).format(x=item)
            else:
                # both look-alikes are drawn whichever is used: the draws are part of the corpus's bytes
                sibling = f"{area} {rng.choice(vocab.ITEM_SIBLING_THINGS)}"
                inserted = f"{area} {rng.choice(vocab.INSERTED)} {thing}"
                near = {"plural": f"{area} {plural(thing)}", "sibling": sibling, "inserted": inserted}[variant]
                sentence = rng.choice(vocab.DEFER_TEMPLATES).format(x=near)
            mid = ids[rng.randrange(len(ids))]
            p.plant(mid, Plant(f"E{q}.{j}", "deferral_near_miss", (sentence,),
                               {"query": q, "item": item, "variant": variant}))


def _plan_attendance(p: _Planting, cfg: GeneratorConfig, n_rule: int) -> None:
    """R6: who attended the most sessions of a series, for series with at least two sessions and one leader."""
    rng = rng_for(cfg.seed, "attendance_queries")
    counts = speaker_counts(p.schedule.sessions)

    def leaders(sid: str) -> list[str]:
        top = max(counts[sid].values())
        return sorted(person for person, c in counts[sid].items() if c == top)

    eligible = [s for s in p.org.series if len(s.dates) >= 2 and len(leaders(s.id)) == 1]
    for i, s in enumerate(rng.sample(eligible, min(n_rule, len(eligible)))):
        (speaker,) = leaders(s.id)
        p.aggregation(rng, "R6", i, Answer("speaker_count", count=max(counts[s.id].values()), speaker=speaker),
                      {"team": s.team, "kind": s.kind}, team=s.team, kind=s.kind)


def _meeting_plans(cfg: GeneratorConfig, sched: _Schedule,
                   plants: Mapping[str, list[Plant]]) -> tuple[MeetingPlan, ...]:
    rng = rng_for(cfg.seed, "meeting_words")
    meetings = []
    for ordinal, (mid, sess) in enumerate(zip(sched.ids, sched.sessions, strict=True)):
        s = sess.series
        topics = [vocab.AGENDA_TOPICS[t] for t in sess.agenda]
        words = int(cfg.words_per_meeting * rng.uniform(0.85, 1.15))
        meetings.append(MeetingPlan(
            id=mid, ordinal=ordinal, title=session_title(s.team, s.kind, sess.session), date=sess.date,
            team=s.team, kind=s.kind, series=s.id, session=sess.session, near_duplicate=sess.near_dup,
            speakers=sess.speakers, attendees=tuple(sorted(set(sess.speakers) | set(sess.silent))),
            agenda=tuple(name for name, _ in topics), topic_words=tuple(w for _, ws in topics for w in ws),
            words=words, render_seed=derived_seed(cfg.seed, "render", mid),
            bank_seed=derived_seed(cfg.seed, "bank", s.id) if sess.template_like else 0,
            plants=tuple(plants[mid])))
    return tuple(meetings)


def build_plan(cfg: GeneratorConfig) -> Plan:
    org = build_organisation(cfg)
    sessions = unique_attendance_max(draw_sessions(cfg, org), org, rng_for(cfg.seed, "attendance"))
    sched = _schedule(sessions, cfg.meetings)
    p = _Planting(sched, org, InventedNames(rng_for(cfg.seed, "names"), reserved_words(org)))
    _plan_lookups(p, cfg)
    _plan_multi_file(p, cfg)
    _plan_summaries(p)
    n_rule = per_rule_count(cfg.meetings)
    _plan_markers(p, cfg, n_rule)
    _plan_deferrals(p, cfg, n_rule)
    _plan_attendance(p, cfg, n_rule)
    return Plan(config=cfg, org=org, meetings=_meeting_plans(cfg, sched, p.plants), queries=tuple(p.queries))
