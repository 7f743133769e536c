"""The global planting plan: decided once from the seed, before any meeting is rendered.

The plan fixes every meeting's identity (id, title, date, who speaks, agenda) and every sentence
that carries ground truth (which meeting gets which lookup fact, marker phrase, deferral event or
near-miss), together with each query's text and, for aggregation, its answer. Rendering then only
places these sentences into turns, so meetings can be rendered independently and in any process.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Mapping

from turnbench.corpus.records import Answer
from turnbench.generator import vocab
from turnbench.generator.config import GeneratorConfig, derived_seed, rng_for
from turnbench.generator.org import Organisation, Series, build_organisation

MAX_PLANTED_TURN_WORDS = 150
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")


@dataclass(frozen=True)
class Plant:
    """Sentences to place: one sentence in one turn, or (setup, answer) in two turns by two speakers."""

    pid: str
    type: str  # marker | near_miss | deferral | deferral_near_miss | lookup | lookup_echo | component | component_echo
    sentences: tuple[str, ...]
    fact: Mapping[str, Any] = field(default_factory=dict)  # extra fields written to facts.jsonl


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
    target: Mapping[str, Any] = field(default_factory=dict)  # aggregation: what the validator looks for


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


class _Names:
    """Invented proper nouns, unique across the corpus and disjoint from every other word list."""

    def __init__(self, rng, forbidden: set[str]):
        self.rng = rng
        self.used = set(forbidden)
        self.syllables = 3
        self.misses = 0

    def new(self) -> str:
        while True:
            w = "".join(self.rng.choice(vocab.SYLLABLES) for _ in range(self.syllables))
            if w not in self.used and len(w) >= 6:
                self.used.add(w)
                self.misses = 0
                return w.capitalize()
            self.misses += 1
            if self.misses >= 50:
                # three syllables are running out (very large corpora): lengthen names from here on
                self.syllables += 1
                self.misses = 0


def _forbidden_words(org: Organisation) -> set[str]:
    words: set[str] = set(org.name_tokens)
    for group in (vocab.SUBJECTS, vocab.MODALS, vocab.VERBS, vocab.VERBS_PAST, vocab.ADJECTIVES, vocab.NOUNS,
                  vocab.TIMES, vocab.PREPS, vocab.NUMBERS, vocab.MARKER_FIRST, vocab.MARKER_SECOND,
                  vocab.SIBLING_FIRST, vocab.SIBLING_SECOND, vocab.INSERTED, vocab.ITEM_AREAS,
                  vocab.ITEM_THINGS, vocab.ITEM_SIBLING_THINGS):
        for phrase in group:
            words.update(phrase.lower().split())
    for _, topic in vocab.AGENDA_TOPICS:
        words.update(topic)
    for c in org.cities:
        words.update(c.lower().split())
    return words


# -- lookup facts: (name, setup, answer, question surface, keyword surface, value kind) ----------
LOOKUP_TEMPLATES = (
    ("budget", "What budget did we settle on for the {S} contract?",
     "The budget for the {S} contract is {V} thousand dollars.",
     "What is the budget for the {S} contract?", "{S} contract budget", "amount"),
    ("deadline", "When is the {S} rollout due, remind me?", "The {S} rollout is due on {V}.",
     "When is the {S} rollout due?", "{S} rollout due date", "date"),
    ("owner", "Who is going to own the {S} migration?", "{V} will own the {S} migration.",
     "Who owns the {S} migration?", "{S} migration owner", "person"),
    ("count", "How many licences do we need for {S}?", "We need {V} licences for {S} in total.",
     "How many licences are needed for {S}?", "{S} licence count", "amount"),
    ("location", "Where are we holding the {S} offsite?", "The {S} offsite will be in {V}.",
     "Where will the {S} offsite be held?", "{S} offsite location", "city"),
    ("vendor", "Which vendor did we pick for the {S} audit?", "We picked {V} for the {S} audit.",
     "Which vendor was picked for the {S} audit?", "{S} audit vendor", "vendor"),
    ("version", "Which version of {S} are we pinning?", "We are pinning {S} to version {V}.",
     "What version of {S} is pinned?", "{S} pinned version", "version"),
)
# Sentences that name a lookup's subject without stating its fact.
LOOKUP_ECHOES = {
    "budget": ("Do we know the budget for the {S} contract yet?", "Has anyone seen the {S} contract budget sheet?",
               "The {S} contract budget needs sign-off from finance."),
    "deadline": ("Is the {S} rollout date still moving around?", "Who is tracking when the {S} rollout is due?",
                 "The {S} rollout due date keeps coming up."),
    "owner": ("Do we have an owner for the {S} migration yet?", "Somebody should own the {S} migration plan.",
              "The {S} migration owner question is still open."),
    "count": ("How many licences will {S} need, does anyone know?", "Licence counts for {S} are on my list.",
              "Procurement asked about {S} licences again."),
    "location": ("Where should the {S} offsite be held, any ideas?", "The {S} offsite location is still open.",
                 "People keep asking where the {S} offsite will be."),
    "vendor": ("Which vendor are we leaning towards for the {S} audit?", "The {S} audit vendor question is still open.",
               "We owe finance a note on the {S} audit vendor."),
    "version": ("Which version of {S} should we pin, any opinions?", "The {S} version question keeps coming back.",
                "We should decide what version {S} is pinned to."),
}
# Echo rates: a fact raised in a session that repeats the series template (session 1 or a near-duplicate)
# recurs in the other template sessions most of the time, which is what makes near-duplicates hard;
# a fact from a varied session recurs less often, anywhere in the series.
LOOKUP_ECHO_RATE_TEMPLATE = 0.9
LOOKUP_ECHO_RATE = 0.3
MULTI_TEMPLATES = (
    ("shortlist", "For the {S} tender, put {V} on the shortlist.",
     "Across the {T} {K} meetings, which vendors made the shortlist for the {S} tender?",
     "{S} tender shortlist vendors", "vendor"),
    ("sites", "Add {V} to the list of pilot sites for {S}.",
     "Which pilot sites were chosen for {S} over the {T} {K} sessions?", "{S} pilot sites", "city"),
    ("reviewers", "{V} agreed to review the {S} proposal.",
     "Who agreed to review the {S} proposal in the {T} {K} meetings?", "{S} proposal reviewers", "person"),
)
# Sentences that name a multi-file subject in another session of the series without adding a component.
MULTI_ECHOES = {
    "shortlist": ("Has anyone looked at the {S} tender yet?", "The {S} tender is getting a lot of interest."),
    "sites": ("Pilot sites for {S} are still being discussed.", "How many pilot sites will {S} need?"),
    "reviewers": ("The {S} proposal still needs reviewers.", "Who has time to review the {S} proposal?"),
}
MULTI_ECHO_RATE = 0.5
SUMMARY_TEMPLATES = (
    ("question", "Summarize the {T} {K} meetings."),
    ("topic", "What did the {T} {K} series cover over time?"),
)

# -- aggregation phrasing families: (surface, grammar, template) ----------------------------------
AGG_SURFACES = {
    "R3": (("how_many", "in", "How many {noun} {verb} the {x}?"),
           ("count_meetings", "in", 'Count the {noun} that {verb} "{x}".'),
           ("casual", "out", "Did the {x} come up much? Give me the number of calls.")),
    "R4": (("which", "in", "Which {noun} {verb} the {x}?"),
           ("list", "in", 'List the {noun} that {verb} "{x}".'),
           ("casual", "out", "Pull up every call where somebody brought up the {x}.")),
    "R5": (("how_many_times", "in", "How many times in total did we defer the {x}?"),
           ("count_deferrals", "in", 'Count how many times "{x}" was deferred.'),
           ("casual", "out", "Tally up how often the {x} got pushed to a later date.")),
    "R6": (("who_most", "in", "Who attended the most {kind} sessions for the {team} team?"),
           ("which_person", "in", "Which person attended the most {team} {kind} meetings?"),
           ("casual", "out", "Of everyone at the {team} {kind} meetings, who showed up most often, and how many times?")),
    "R7": (("how_many_in_month", "in", "How many {noun} in {month} {verb} the {x}?"),
           ("month_first", "in", 'In {month}, how many {noun} {verb} "{x}"?'),
           ("casual", "out", "Back in {month}, on how many calls did the {x} come up?")),
}
AGG_VERBS = ("mentioned", "discussed", "talked about")
AGG_NOUNS = ("meetings", "sessions")


def _value(kind: str, rng, names: _Names, org: Organisation, people: list[str]) -> str:
    if kind == "amount":
        return str(rng.randint(12, 980))
    if kind == "date":
        return f"{MONTHS[rng.randrange(12)]} {rng.randint(1, 28)}"
    if kind == "person":
        return people[rng.randrange(len(people))]
    if kind == "city":
        return org.cities[rng.randrange(len(org.cities))]
    if kind == "vendor":
        return f"{names.new()} {rng.choice(('Labs', 'Systems', 'Partners', 'Group'))}"
    return f"{rng.randint(1, 9)}.{rng.randint(0, 19)}"


def _sessions(cfg: GeneratorConfig, org: Organisation) -> list[dict[str, Any]]:
    """Every session's roster and agenda, before R6 fix-ups. Sorted into meeting order by the caller."""
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
                if rng.random() < 0.15 and others_by_team[s.team]:
                    guests = others_by_team[s.team]
                    speakers.append(guests[rng.randrange(len(guests))])
                agenda = rng.sample(team.topics, rng.randint(2, 4))
                absent = [m for m in team.members if m not in speakers]
                if absent and rng.random() < 0.3:
                    silent.append(absent[rng.randrange(len(absent))])
            out.append({"series": s, "session": k + 1, "date": date, "near_dup": near_dup,
                        "speakers": speakers, "silent": silent, "agenda": agenda})
    return out


def _unique_attendance_max(sessions: list[dict[str, Any]], org: Organisation, rng) -> None:
    """Make the chair the unique most frequent speaker of every series (R6 needs a unique maximum).

    Everyone else who spoke in every session must miss one. To keep near-duplicate sessions intact,
    at most two sessions change: one drops all but one of them, another drops that last one.
    """
    by_series: dict[str, list[dict[str, Any]]] = {}
    for sess in sessions:
        by_series.setdefault(sess["series"].id, []).append(sess)
    for sid in sorted(by_series):
        group = by_series[sid]
        if len(group) < 2:
            continue
        s: Series = group[0]["series"]
        counts: dict[str, int] = {}
        for sess in group:
            for p in sess["speakers"]:
                counts[p] = counts.get(p, 0) + 1
        tied = sorted(p for p, c in counts.items() if c == len(group) and p != s.chair)
        if not tied:
            continue
        # prefer sessions that are neither the template (#1) nor near-duplicates
        order = sorted(range(len(group)), key=lambda i: (group[i]["session"] == 1, group[i]["near_dup"], rng.random()))
        first, second = order[0], order[1]
        keep = tied[rng.randrange(len(tied))]
        group[first]["speakers"] = [p for p in group[first]["speakers"] if p == keep or p not in tied]
        sp = group[second]["speakers"]
        if len(sp) > 2:
            sp.remove(keep)
        else:
            spare = [m for m in org.team(s.team).members if m not in sp]
            if spare:
                sp[sp.index(keep)] = spare[rng.randrange(len(spare))]


def build_plan(cfg: GeneratorConfig) -> Plan:
    org = build_organisation(cfg)
    sessions = _sessions(cfg, org)
    _unique_attendance_max(sessions, org, rng_for(cfg.seed, "attendance"))
    sessions.sort(key=lambda s: (s["date"], s["series"].id, s["session"]))
    width = max(4, len(str(cfg.meetings)))
    ids = [f"m{i + 1:0{width}d}" for i in range(len(sessions))]
    plants: dict[str, list[Plant]] = {mid: [] for mid in ids}
    names = _Names(rng_for(cfg.seed, "names"), _forbidden_words(org))
    people = sorted(p for t in org.teams for p in t.members)
    queries: list[QuerySpec] = []

    def qid() -> str:
        return f"q{len(queries) + 1:05d}"

    series_of_meeting: dict[str, list[str]] = {}
    by_series_ids: dict[str, list[str]] = {}
    for mid, sess in zip(ids, sessions):
        by_series_ids.setdefault(sess["series"].id, []).append(mid)
    for mid, sess in zip(ids, sessions):
        series_of_meeting[mid] = by_series_ids[sess["series"].id]
    template_like = {mid: sess["session"] == 1 or sess["near_dup"] for mid, sess in zip(ids, sessions)}

    # -- lookup: facts asked in a setup turn and stated in an answer turn of one meeting ------------
    rng = rng_for(cfg.seed, "lookup")
    per_meeting = min(4, max(2, round(cfg.words_per_meeting / 1000)))
    lookup_surfaces = ("question", "question", "keyword", "question", "verbatim")
    for mid in ids:
        for _ in range(per_meeting):
            name, setup, answer, question, keyword, vkind = LOOKUP_TEMPLATES[rng.randrange(len(LOOKUP_TEMPLATES))]
            subject = names.new()
            value = _value(vkind, rng, names, org, people)
            s_setup = setup.format(S=subject, V=value)
            s_answer = answer.format(S=subject, V=value)
            surface = lookup_surfaces[len(queries) % len(lookup_surfaces)]
            text = {"question": question, "keyword": keyword}.get(surface, "")
            text = text.format(S=subject) if text else f'"{s_answer.rstrip(".")}"'
            q = qid()
            pid = f"L{q}"
            plants[mid].append(Plant(pid, "lookup", (s_setup, s_answer),
                                     {"query": q, "subject": subject, "value": value, "template": name}))
            queries.append(QuerySpec(q, "lookup", "R1", surface, text, pids=(pid,)))
            # Echoes: the subject comes up, without the fact, in other sessions of the same series
            # (near-duplicate competitors), so naming the subject alone does not find the meeting.
            twins = [m for m in series_of_meeting[mid] if m != mid and template_like[m]] if template_like[mid] else []
            if twins and rng.random() < LOOKUP_ECHO_RATE_TEMPLATE:
                others = twins
            elif rng.random() < LOOKUP_ECHO_RATE:
                others = [m for m in series_of_meeting[mid] if m != mid] or [m for m in ids if m != mid]
            else:
                others = []
            if others:
                for j, other in enumerate(rng.sample(others, min(len(others), rng.randint(1, 2)))):
                    for k, echo in enumerate(rng.sample(LOOKUP_ECHOES[name], rng.randint(1, 3))):
                        plants[other].append(Plant(f"{pid}.e{j}.{k}", "lookup_echo", (echo.format(S=subject),),
                                                   {"query": q, "subject": subject}))

    meeting_of: dict[tuple[str, int], str] = {}
    for mid, sess in zip(ids, sessions):
        meeting_of[(sess["series"].id, sess["session"])] = mid

    # -- multi_file: one answer's components spread over 2-4 sessions of one series -------------
    rng = rng_for(cfg.seed, "multi_file")
    for s in org.series:
        n = len(s.dates)
        if n < 2:
            continue
        for g in range(min(4, n // 2)):
            name, comp, question, keyword, vkind = MULTI_TEMPLATES[rng.randrange(len(MULTI_TEMPLATES))]
            subject = names.new()
            k = rng.randint(2, min(4, n))
            chosen = sorted(rng.sample(range(1, n + 1), k))
            values: list[str] = []
            while len(values) < k:
                v = _value(vkind, rng, names, org, people)
                if v not in values:
                    values.append(v)
            q = qid()
            surface = ("question", "keyword")[g % 2]
            text = (question if surface == "question" else keyword).format(S=subject, T=s.team, K=s.kind)
            pids = []
            for j, (sess_no, v) in enumerate(zip(chosen, values)):
                pid = f"C{q}.{j}"
                pids.append(pid)
                plants[meeting_of[(s.id, sess_no)]].append(
                    Plant(pid, "component", (comp.format(S=subject, V=v),),
                          {"query": q, "subject": subject, "value": v, "template": name}))
            queries.append(QuerySpec(q, "multi_file", "R2", surface, text, pids=tuple(pids)))
            rest = [k for k in range(1, n + 1) if k not in chosen]
            if rest and rng.random() < MULTI_ECHO_RATE:
                other = meeting_of[(s.id, rest[rng.randrange(len(rest))])]
                echo = rng.choice(MULTI_ECHOES[name]).format(S=subject)
                plants[other].append(Plant(f"C{q}.e", "component_echo", (echo,), {"query": q, "subject": subject}))

    # -- summarize: every session of a series -----------------------------------------------------
    for s in org.series:
        for surface, tpl in SUMMARY_TEMPLATES:
            queries.append(QuerySpec(qid(), "summarize", "R8", surface, tpl.format(T=s.team, K=s.kind),
                                     series=s.id))

    # -- aggregation -----------------------------------------------------------------------------
    n_rule = per_rule_count(cfg.meetings)
    rng = rng_for(cfg.seed, "markers")
    pairs = [(a, b) for a in vocab.MARKER_FIRST for b in vocab.MARKER_SECOND]
    markers = rng.sample(pairs, 3 * n_rule)
    date_of = dict(zip(ids, (s["date"] for s in sessions)))
    max_set = max(1, min(8, len(ids) // 3))

    def near_misses(a: str, b: str, q: str, count: int) -> None:
        variants = rng.sample(("plural", "inserted", "reordered", "sibling"), count)
        for variant in variants:
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
            plants[mid].append(Plant(f"N{q}.{len(plants[mid])}", "near_miss", (sentence,),
                                     {"query": q, "phrase": phrase, "of": f"{a} {b}", "variant": variant}))

    def plant_marker(a: str, b: str, q: str, meetings: list[str]) -> None:
        phrase = f"{a} {b}"
        for mid in meetings:
            for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
                sentence = rng.choice(vocab.MARKER_TEMPLATES).format(x=phrase)
                plants[mid].append(Plant(f"M{q}.{len(plants[mid])}", "marker", (sentence,),
                                         {"query": q, "phrase": phrase}))

    def agg(rule: str, idx: int, answer: Answer, target: dict[str, Any], **fmt: str) -> str:
        surface, grammar, tpl = AGG_SURFACES[rule][idx % 3]
        q = qid()
        text = tpl.format(verb=rng.choice(AGG_VERBS), noun=rng.choice(AGG_NOUNS), **fmt)
        queries.append(QuerySpec(q, "aggregation", rule, surface, text, grammar=grammar, answer=answer,
                                 target={"rule": rule, **target}))
        return q

    for rule in ("R3", "R4"):
        for i in range(n_rule):
            a, b = markers[(0 if rule == "R3" else n_rule) + i]
            k = 0 if i == 0 or rng.random() < 0.1 else rng.randint(1, max_set)
            chosen = sorted(rng.sample(ids, k))
            ans = Answer("count", count=k) if rule == "R3" else Answer("meeting_set", meetings=tuple(chosen))
            q = agg(rule, i, ans, {"phrase": f"{a} {b}"}, x=f"{a} {b}")
            plant_marker(a, b, q, chosen)
            near_misses(a, b, q, rng.randint(2 if k == 0 else 1, 3))

    months = sorted({month_label(d) for d in date_of.values()}, key=lambda m: (m.split()[1], MONTHS.index(m.split()[0])))
    for i in range(n_rule):
        a, b = markers[2 * n_rule + i]
        k = rng.randint(min(2, len(ids)), max(2, max_set))
        chosen = sorted(rng.sample(ids, k))
        used = {month_label(date_of[m]) for m in chosen}
        empty = [m for m in months if m not in used]
        month = empty[rng.randrange(len(empty))] if (i % 4 == 0 and empty) else month_label(date_of[rng.choice(chosen)])
        count = sum(1 for m in chosen if month_label(date_of[m]) == month)
        q = agg("R7", i, Answer("count", count=count), {"phrase": f"{a} {b}", "month": month},
                x=f"{a} {b}", month=month)
        plant_marker(a, b, q, chosen)
        near_misses(a, b, q, rng.randint(1, 3))

    rng = rng_for(cfg.seed, "deferrals")
    items = rng.sample([(a, t) for a in vocab.ITEM_AREAS for t in vocab.ITEM_THINGS], n_rule)
    for i, (area, thing) in enumerate(items):
        item = f"{area} {thing}"
        n_events = 0 if i == 0 or rng.random() < 0.1 else rng.randint(1, 6)
        q = agg("R5", i, Answer("count", count=n_events), {"item": item}, x=item)
        for j in range(n_events):
            mid = ids[rng.randrange(len(ids))]
            sentence = rng.choice(vocab.DEFER_TEMPLATES).format(x=item)
            plants[mid].append(Plant(f"D{q}.{j}", "deferral", (sentence,), {"query": q, "item": item}))
        for j, variant in enumerate(rng.sample(("mention", "plural", "sibling", "inserted"), rng.randint(1, 3))):
            if variant == "mention":
                sentence = rng.choice(vocab.MENTION_TEMPLATES).format(x=item)
            else:
                near = {"plural": f"{area} {plural(thing)}",
                        "sibling": f"{area} {rng.choice(vocab.ITEM_SIBLING_THINGS)}",
                        "inserted": f"{area} {rng.choice(vocab.INSERTED)} {thing}"}[variant]
                sentence = rng.choice(vocab.DEFER_TEMPLATES).format(x=near)
            mid = ids[rng.randrange(len(ids))]
            plants[mid].append(Plant(f"E{q}.{j}", "deferral_near_miss", (sentence,),
                                     {"query": q, "item": item, "variant": variant}))

    rng = rng_for(cfg.seed, "attendance_queries")
    counts: dict[str, dict[str, int]] = {}
    for sess in sessions:
        c = counts.setdefault(sess["series"].id, {})
        for p in sess["speakers"]:
            c[p] = c.get(p, 0) + 1
    def tops(sid: str) -> list[str]:
        top = max(counts[sid].values())
        return sorted(p for p, c in counts[sid].items() if c == top)

    eligible = [s for s in org.series if len(s.dates) >= 2 and len(tops(s.id)) == 1]
    for i, s in enumerate(rng.sample(eligible, min(n_rule, len(eligible)))):
        top = max(counts[s.id].values())
        (speaker,) = tops(s.id)
        agg("R6", i, Answer("speaker_count", count=top, speaker=speaker), {"team": s.team, "kind": s.kind},
            team=s.team, kind=s.kind)

    # -- meeting plans ------------------------------------------------------------------------------
    rng = rng_for(cfg.seed, "meeting_words")
    meetings = []
    for ordinal, (mid, sess) in enumerate(zip(ids, sessions)):
        s: Series = sess["series"]
        speakers = tuple(sess["speakers"])
        topics = [vocab.AGENDA_TOPICS[t] for t in sess["agenda"]]
        words = int(cfg.words_per_meeting * rng.uniform(0.85, 1.15))
        meetings.append(MeetingPlan(
            id=mid, ordinal=ordinal, title=f"{s.team} — {s.kind} #{sess['session']}", date=sess["date"],
            team=s.team, kind=s.kind, series=s.id, session=sess["session"], near_duplicate=sess["near_dup"],
            speakers=speakers, attendees=tuple(sorted(set(speakers) | set(sess["silent"]))),
            agenda=tuple(name for name, _ in topics), topic_words=tuple(w for _, ws in topics for w in ws),
            words=words, render_seed=derived_seed(cfg.seed, "render", mid),
            bank_seed=derived_seed(cfg.seed, "bank", s.id) if (sess["session"] == 1 or sess["near_dup"]) else 0,
            plants=tuple(plants[mid])))
    return Plan(config=cfg, org=org, meetings=tuple(meetings), queries=tuple(queries))
