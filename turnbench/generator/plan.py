"""The global planting plan: decided once from the seed, before any meeting is written.

The plan fixes every meeting's identity (id, title, date, who is invited, who speaks, agenda) and every
sentence that carries ground truth (which meeting gets which lookup fact, alias, series mention, marker
phrase, deferral event or near-miss), together with each query's text and, for aggregation, its answer.
Writing a transcript then only places these sentences into turns, so meetings can be written independently
and in any process.

One planner per query class draws from its own seeded generator, in a fixed order (lookup, multi_file,
summarize, R3/R4/R7 markers, R5 deferrals, R6 attendance; R6's series are chosen before the series mentions are
planted, its questions asked last), so query ids are sequential across classes
and the bytes of a corpus depend only on the seed and options. The ranked planners are here, the
aggregation planners in ``plan_aggregation``, the records and shared state in ``planting``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from turnbench.generator import wordlists
from turnbench.generator.config import GeneratorConfig, derived_seed, rng_for
from turnbench.generator.contracts import content_words, recording_name, session_title
from turnbench.generator.lexicon import closest, draw_target
from turnbench.generator.names import InventedNames, reserved_words
from turnbench.generator.org import Organisation, build_organisation
from turnbench.generator.plan_aggregation import attendance_series, plan_attendance, plan_deferrals, plan_markers
from turnbench.generator.planting import (
    VENDOR_WORDS,
    Discussion,
    MeetingPlan,
    Plan,
    Plant,
    Planting,
    QuerySpec,
    Schedule,
    make_schedule,
    month_label,
    per_rule_count,
    plural,
)
from turnbench.generator.sessions import draw_sessions, settle_attendance
from turnbench.generator.speech import series_mentions
from turnbench.generator.subjects import (
    POOL_PER_TEAM,
    Subject,
    SubjectPool,
    reserved_for_aggregation,
    subject_words,
)
from turnbench.generator.templates import (
    ASPECTS,
    DISCUSSION_SUMMARY_FORMS,
    DISCUSSION_SURFACES,
    FACT_SURFACES,
    LOOKUP_ECHOES,
    LOOKUP_TEMPLATES,
    MULTI_ECHOES,
    MULTI_SURFACES,
    MULTI_TEMPLATES,
    OPINION_FORMS,
    SUMMARY_TEMPLATES,
    TAILS,
    TOPIC_FORMS,
)

__all__ = ["MeetingPlan", "Plan", "Plant", "QuerySpec", "build_plan", "month_label", "per_rule_count", "plural"]

# Echo rates: a fact raised in a session that repeats the series template (session 1 or a near-duplicate)
# recurs in the other template sessions most of the time, which is what makes near-duplicates hard;
# a fact from a varied session recurs less often, anywhere in the series.
LOOKUP_ECHO_RATE_TEMPLATE = 0.9
LOOKUP_ECHO_RATE = 0.3
MULTI_ECHO_RATE = 0.5
# Background discussions a meeting may draw on to fill its words, per 1,000 words.
BACKGROUND_PER_1000 = 1.5
# This share of meetings holds a discussion a summary request asks about.
DISCUSSION_SUMMARY_RATE = 0.3
MAX_PAIR_DRAWS = 200
T = TypeVar("T")


def team_subjects(cfg: GeneratorConfig, org: Organisation) -> dict[str, tuple[Subject, ...]]:
    """Each team's subjects, drawn once: ordinary names, a few invented code words (generator/subjects.py)."""
    forbidden = set(org.name_tokens) | set(reserved_for_aggregation()) | {w.lower() for w in VENDOR_WORDS}
    invented = InventedNames(rng_for(cfg.seed, "names"), reserved_words(org) | subject_words())
    codes = [invented.new() for _ in range(len(org.teams) * POOL_PER_TEAM)]
    pool = SubjectPool(rng_for(cfg.seed, "subjects"), org.cities, forbidden, codes)
    return {t.name: pool.draw(POOL_PER_TEAM) for t in org.teams}


def _take(rng: random.Random, options: Sequence[T], keys: Sequence[tuple[str, str]],
          used: set[tuple[str, str]]) -> T | None:
    """An option whose key is not used yet, its key then used (drawn, then searched in order when draws keep
    missing); None when every key is."""
    pick = None
    for _ in range(MAX_PAIR_DRAWS):
        k = rng.randrange(len(keys))
        if keys[k] not in used:
            pick = k
            break
    if pick is None:
        pick = next((k for k, key in enumerate(keys) if key not in used), None)
    if pick is None:
        return None
    used.add(keys[pick])
    return options[pick]


def _plan_lookups(p: Planting, cfg: GeneratorConfig) -> None:
    """R1: a fact asked in a setup turn and stated in an answer turn of one meeting, talked around by its topic.

    A (subject, template) pair is used once in the corpus, so the question names one fact; its subject comes up in
    other sessions all the same (its other facts, discussions, echoes of this fact without the value). The question
    is drawn at a calibrated distance from the answer turn (generator/lexicon.py)."""
    rng = rng_for(cfg.seed, "lookup")
    q_rng = rng_for(cfg.seed, "lookup_questions")
    per_meeting = cfg.voice.facts_per_meeting(cfg.words_per_meeting)
    sched = p.schedule
    used: set[tuple[str, str]] = set()
    for mid in sched.ids:
        team = sched.session_of[mid].series.team
        pool = p.subjects[team]
        options = [(subject, tpl) for subject in pool for tpl in LOOKUP_TEMPLATES]
        keys = [(subject.name, tpl.name) for subject, tpl in options]
        for n in range(per_meeting):
            fact = _take(rng, options, keys, used)
            if fact is None:
                break
            subject, tpl = fact
            value = p.value_of(subject.name, tpl.value_kind, rng)
            s_setup = tpl.setup.format(S=subject.name, V=value)
            s_answer = tpl.answer.format(S=subject.name, V=value)
            surface = FACT_SURFACES[n % len(FACT_SURFACES)]
            forms = (tpl.keyword,) if surface == "keyword" else tpl.questions
            evidence = content_words(s_answer)
            series = sched.session_of[mid].series
            text, _ = closest([f.replace("{S}", subject.marked()) for f in forms], subject.senses(), evidence,
                              draw_target(q_rng), q_rng, fill={"T": series.team, "K": series.kind},
                              tails=() if surface == "keyword" else TAILS)
            q = p.next_query_id()
            pid = f"L{q}"
            p.plant(mid, Plant(pid, "lookup", (s_setup, s_answer),
                               {"query": q, "subject": subject.name, "value": value, "template": tpl.name},
                               avoid=content_words(text) - evidence, about=subject.said, talk=tpl.talk))
            p.queries.append(QuerySpec(q, "lookup", "R1", surface, text, pids=(pid,)))
            others = _lookup_echo_candidates(sched, mid, rng)
            if others:
                for j, other in enumerate(rng.sample(others, min(len(others), rng.randint(1, 2)))):
                    for k, echo in enumerate(rng.sample(LOOKUP_ECHOES[tpl.name], rng.randint(1, 2))):
                        p.plant(other, Plant(f"{pid}.e{j}.{k}", "lookup_echo", (echo.format(S=subject.name),),
                                             {"query": q, "subject": subject.name}, about=subject.said,
                                             talk=tpl.talk))


def _lookup_echo_candidates(sched: Schedule, mid: str, rng: random.Random) -> list[str]:
    """The meetings a lookup fact of ``mid`` may be echoed in; empty when it is not echoed."""
    series = sched.same_series(mid)
    template_like = sched.session_of[mid].template_like
    twins = [m for m in series if m != mid and sched.session_of[m].template_like] if template_like else []
    if twins and rng.random() < LOOKUP_ECHO_RATE_TEMPLATE:
        return twins
    if rng.random() < LOOKUP_ECHO_RATE:
        return [m for m in series if m != mid] or [m for m in sched.ids if m != mid]
    return []


def _plan_discussions(p: Planting, cfg: GeneratorConfig) -> None:
    """R9: what was discussed about one aspect of a subject, or what one participant thought of it: the gold is the
    discussion block, several speakers' turns. A (subject, aspect) pair is discussed in one block of the corpus;
    background discussions (of pairs no question asks about) fill the rest of the meetings' talk."""
    rng = rng_for(cfg.seed, "discussions")
    q_rng = rng_for(cfg.seed, "discussion_questions")
    voice = cfg.voice
    per_meeting = voice.discussions_per_meeting(cfg.words_per_meeting)
    sched = p.schedule
    asked: set[tuple[str, str]] = set()
    n_asked = 0
    for mid, sess in zip(sched.ids, sched.sessions, strict=True):
        pool = p.subjects[sess.series.team]
        pairs = [(subject, aspect) for subject in pool for aspect in ASPECTS[subject.kind]]
        keys = [(subject.name, aspect.word) for subject, aspect in pairs]
        agenda = [wordlists.AGENDA_TOPICS[t][0] for t in sess.agenda]
        for _ in range(per_meeting):
            pair = _take(rng, pairs, keys, asked)
            if pair is None:
                break
            subject, aspect = pair
            speakers = _participants(sess.speakers, rng)
            item = agenda[rng.randrange(len(agenda))]
            surface = DISCUSSION_SURFACES[n_asked % len(DISCUSSION_SURFACES)]
            n_asked += 1
            person = speakers[1 + rng.randrange(len(speakers) - 1)] if surface == "opinion" else ""
            forms = OPINION_FORMS if surface == "opinion" else TOPIC_FORMS
            evidence = content_words(f"{subject.name} {aspect.word} {item} {person.split(' ')[0]}")
            text, _ = closest([f.replace("{aspect}", aspect.word).replace("{S}", subject.marked()) for f in forms],
                              subject.senses(), evidence, draw_target(q_rng), q_rng,
                              fill={"P": person, "A": item, "T": sess.series.team, "K": sess.series.kind},
                              tails=TAILS)
            q = p.next_query_id()
            did = f"T{q}"
            p.discussions[mid].append(Discussion(
                did, subject.name, subject.said, aspect.word, aspect.talk, item, speakers,
                rng.randint(*voice.discussion_turns),
                addressed=person.split(" ")[0], named=person, query=q, avoid=content_words(text) - evidence))
            p.queries.append(QuerySpec(q, "lookup", "R9", surface, text, pids=(did,)))
    # R8 asked of one discussion ("summarize the discussion about X"), as real summary requests often are
    for mid, sess in zip(sched.ids, sched.sessions, strict=True):
        if rng.random() >= DISCUSSION_SUMMARY_RATE:
            continue
        pool = p.subjects[sess.series.team]
        pairs = [(subject, aspect) for subject in pool for aspect in ASPECTS[subject.kind]]
        pair = _take(rng, pairs, [(subject.name, aspect.word) for subject, aspect in pairs], asked)
        if pair is None:
            continue
        subject, aspect = pair
        item = wordlists.AGENDA_TOPICS[sess.agenda[rng.randrange(len(sess.agenda))]][0]
        evidence = content_words(f"{subject.name} {aspect.word} {item}")
        text, _ = closest([f.replace("{aspect}", aspect.word).replace("{S}", subject.marked())
                           for f in DISCUSSION_SUMMARY_FORMS], subject.senses(), evidence, draw_target(q_rng),
                          q_rng, fill={"A": item})
        q = p.next_query_id()
        did = f"T{q}"
        p.discussions[mid].append(Discussion(
            did, subject.name, subject.said, aspect.word, aspect.talk, item, _participants(sess.speakers, rng),
            rng.randint(*voice.discussion_turns), query=q, avoid=content_words(text) - evidence))
        p.queries.append(QuerySpec(q, "summarize", "R8", "discussion", text, pids=(did,)))
    for mid, sess in zip(sched.ids, sched.sessions, strict=True):
        pool = p.subjects[sess.series.team]
        free = [(s, a) for s in pool for a in ASPECTS[s.kind] if (s.name, a.word) not in asked]
        agenda = [wordlists.AGENDA_TOPICS[t][0] for t in sess.agenda]
        n = round(BACKGROUND_PER_1000 * cfg.words_per_meeting / 1000)
        for k in range(min(n, len(free))):
            subject, aspect = free[rng.randrange(len(free))]
            p.background[mid].append(Discussion(f"B{mid}.{k}", subject.name, subject.said, aspect.word, aspect.talk,
                                                agenda[rng.randrange(len(agenda))], (),
                                                rng.randint(*voice.discussion_turns)))


def _participants(speakers: tuple[str, ...], rng: random.Random) -> tuple[str, ...]:
    """Three or four of the meeting's speakers (all of them when fewer), the first of them opening the talk."""
    k = min(len(speakers), rng.randint(3, 4))
    return tuple(rng.sample(speakers, k))


def _plan_multi_file(p: Planting, cfg: GeneratorConfig) -> None:
    """R2: one answer's components spread over 2-4 sessions of one series, one component per session, each talked
    around by its topic; the question is drawn at a calibrated distance from the components."""
    rng = rng_for(cfg.seed, "multi_file")
    q_rng = rng_for(cfg.seed, "multi_file_questions")
    used: set[tuple[str, str]] = set()
    for s in p.org.series:
        n = len(s.dates)
        if n < 2:
            continue
        pool = p.subjects[s.team]
        m_options = [(subject, tpl) for subject in pool for tpl in MULTI_TEMPLATES]
        m_keys = [(subject.name, tpl.name) for subject, tpl in m_options]
        for g in range(min(4, n // 2)):
            component = _take(rng, m_options, m_keys, used)
            if component is None:
                break
            subject, m_tpl = component
            k = rng.randint(2, min(4, n))
            chosen = sorted(rng.sample(range(1, n + 1), k))
            values: list[str] = []
            while len(values) < k:
                v = p.value_of(subject.name, m_tpl.value_kind, rng)
                if v not in values:
                    values.append(v)
            q = p.next_query_id()
            surface = MULTI_SURFACES[g % len(MULTI_SURFACES)]
            components = [m_tpl.component.format(S=subject.name, V=v) for v in values]
            evidence = frozenset().union(*(content_words(c) for c in components))
            forms = (m_tpl.keyword,) if surface == "keyword" else m_tpl.questions
            text, _ = closest([f.replace("{S}", subject.marked()) for f in forms], subject.senses(), evidence,
                              draw_target(q_rng), q_rng, fill={"T": s.team, "K": s.kind})
            avoid = content_words(text) - evidence
            pids = []
            for j, (sess_no, v, sentence) in enumerate(zip(chosen, values, components, strict=True)):
                pid = f"C{q}.{j}"
                pids.append(pid)
                p.plant(p.schedule.meeting_of[(s.id, sess_no)],
                        Plant(pid, "component", (sentence,),
                              {"query": q, "subject": subject.name, "value": v, "template": m_tpl.name}, avoid=avoid,
                              about=subject.said, talk=m_tpl.talk))
            p.queries.append(QuerySpec(q, "multi_file", "R2", surface, text, pids=tuple(pids)))
            rest = [k for k in range(1, n + 1) if k not in chosen]
            if rest and rng.random() < MULTI_ECHO_RATE:
                other = p.schedule.meeting_of[(s.id, rest[rng.randrange(len(rest))])]
                echo = rng.choice(MULTI_ECHOES[m_tpl.name]).format(S=subject.name)
                p.plant(other, Plant(f"C{q}.e", "component_echo", (echo,), {"query": q, "subject": subject.name},
                                     about=subject.said, talk=m_tpl.talk))


def _plan_summaries(p: Planting, cfg: GeneratorConfig, announced: frozenset[str]) -> None:
    """R8: every session of a series, one query per phrasing; sessions name their series in speech (every session of
    an ``announced`` series opens with its name)."""
    for mid, plant in series_mentions(p.schedule, rng_for(cfg.seed, "series_mentions"), announced):
        p.plant(mid, plant)
    for s in p.org.series:
        for surface, tpl in SUMMARY_TEMPLATES:
            p.queries.append(QuerySpec(p.next_query_id(), "summarize", "R8", surface, tpl.format(T=s.team, K=s.kind),
                                       series=s.id))


def _meeting_plans(cfg: GeneratorConfig, p: Planting) -> tuple[MeetingPlan, ...]:
    rng = rng_for(cfg.seed, "meeting_words")
    title_rng = rng_for(cfg.seed, "titles")
    sched = p.schedule
    meetings = []
    for ordinal, (mid, sess) in enumerate(zip(sched.ids, sched.sessions, strict=True)):
        s = sess.series
        topics = [wordlists.AGENDA_TOPICS[t] for t in sess.agenda]
        words = int(cfg.words_per_meeting * rng.uniform(0.85, 1.15))
        title = (session_title(s.team, s.kind, sess.session) if cfg.titles == "series"
                 else recording_name(sess.date, title_rng))
        meetings.append(MeetingPlan(
            id=mid, ordinal=ordinal, title=title, date=sess.date,
            team=s.team, kind=s.kind, series=s.id, session=sess.session, near_duplicate=sess.near_dup,
            speakers=sess.speakers, attendees=sess.invitees,
            agenda=tuple(name for name, _ in topics), topic_words=tuple(w for _, ws in topics for w in ws),
            # the transcript seed's purpose keeps its first name, "render": another would change every byte
            words=words, transcript_seed=derived_seed(cfg.seed, "render", mid),
            bank_seed=derived_seed(cfg.seed, "bank", s.id) if sess.template_like else 0,
            plants=tuple(p.plants[mid]), register=cfg.register, asr_wer=cfg.asr_wer,
            asr_entity_accuracy=cfg.asr_entity_accuracy, discussions=tuple(p.discussions[mid]),
            background=tuple(p.background[mid])))
    return tuple(meetings)


def build_plan(cfg: GeneratorConfig) -> Plan:
    org = build_organisation(cfg)
    sessions = settle_attendance(draw_sessions(cfg, org), org, rng_for(cfg.seed, "attendance"))
    sched = make_schedule(sessions, cfg.meetings)
    p = Planting(sched, org, team_subjects(cfg, org))
    _plan_lookups(p, cfg)
    _plan_discussions(p, cfg)
    _plan_multi_file(p, cfg)
    n_rule = per_rule_count(cfg.meetings)
    # R6's series are chosen first: every session of theirs says what it is (generator/speech.py), so the answer is
    # in the transcripts whatever the titles say
    attendance_rng = rng_for(cfg.seed, "attendance_queries")
    asked = attendance_series(p, attendance_rng, n_rule)
    _plan_summaries(p, cfg, frozenset(s.id for s in asked))
    plan_markers(p, cfg, n_rule)
    plan_deferrals(p, cfg, n_rule)
    plan_attendance(p, attendance_rng, asked)
    return Plan(config=cfg, org=org, meetings=_meeting_plans(cfg, p), queries=tuple(p.queries))
