"""The global planting plan: decided once from the seed, before any meeting is rendered.

The plan fixes every meeting's identity (id, title, date, who is invited, who speaks, agenda) and every
sentence that carries ground truth (which meeting gets which lookup fact, alias, series mention, marker
phrase, deferral event or near-miss), together with each query's text and, for aggregation, its answer.
Rendering then only places these sentences into turns, so meetings can be rendered independently and in
any process.

One planner per query class draws from its own seeded generator, in a fixed order (lookup, multi_file,
summarize, R3/R4/R7 markers, R5 deferrals, R6 attendance), so query ids are sequential across classes
and the bytes of a corpus depend only on the seed and options. The ranked planners are here, the
aggregation planners in ``plan_aggregation``, the records and shared state in ``planting``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from turnbench.generator import vocab
from turnbench.generator.config import GeneratorConfig, derived_seed, rng_for
from turnbench.generator.contracts import content_words, session_title
from turnbench.generator.names import InventedNames, reserved_words
from turnbench.generator.org import build_organisation
from turnbench.generator.paraphrase import Descriptions, alias, paraphrase
from turnbench.generator.plan_aggregation import plan_attendance, plan_deferrals, plan_markers
from turnbench.generator.planting import (
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
from turnbench.generator.templates import (
    LOOKUP_ECHOES,
    LOOKUP_SURFACES,
    LOOKUP_TEMPLATES,
    MULTI_ECHOES,
    MULTI_SURFACES,
    MULTI_TEMPLATES,
    SUMMARY_TEMPLATES,
)

__all__ = ["MeetingPlan", "Plan", "Plant", "QuerySpec", "build_plan", "month_label", "per_rule_count", "plural"]

# Echo rates: a fact raised in a session that repeats the series template (session 1 or a near-duplicate)
# recurs in the other template sessions most of the time, which is what makes near-duplicates hard;
# a fact from a varied session recurs less often, anywhere in the series.
LOOKUP_ECHO_RATE_TEMPLATE = 0.9
LOOKUP_ECHO_RATE = 0.3
MULTI_ECHO_RATE = 0.5


def _plan_lookups(p: Planting, cfg: GeneratorConfig, descriptions: Descriptions) -> None:
    """R1: a fact asked in a setup turn and stated in an answer turn of one meeting.

    Echoes bring the subject up, without the fact, in other sessions of the same series (near-duplicate
    competitors), so naming the subject alone does not find the meeting. A paraphrased question describes
    the subject as an alias turn of the same meeting does.
    """
    rng = rng_for(cfg.seed, "lookup")
    para_rng = rng_for(cfg.seed, "lookup_paraphrase")
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
            q = p.next_query_id()
            pid = f"L{q}"
            avoid: frozenset[str] = frozenset()
            if surface == "paraphrase":
                text, description = paraphrase(tpl.name, (s_answer,), descriptions, para_rng)
                avoid = content_words(text)
                p.plant(mid, Plant(f"{pid}.a", "alias", (alias(subject, description, para_rng),),
                                   {"query": q, "subject": subject, "description": description}))
            elif surface in ("question", "keyword"):
                text = (tpl.question if surface == "question" else tpl.keyword).format(S=subject)
            else:
                text = f'"{s_answer.rstrip(".")}"'
            p.plant(mid, Plant(pid, "lookup", (s_setup, s_answer),
                               {"query": q, "subject": subject, "value": value, "template": tpl.name}, avoid=avoid))
            p.queries.append(QuerySpec(q, "lookup", "R1", surface, text, pids=(pid,)))
            others = _lookup_echo_candidates(sched, mid, rng)
            if others:
                for j, other in enumerate(rng.sample(others, min(len(others), rng.randint(1, 2)))):
                    for k, echo in enumerate(rng.sample(LOOKUP_ECHOES[tpl.name], rng.randint(1, 3))):
                        p.plant(other, Plant(f"{pid}.e{j}.{k}", "lookup_echo", (echo.format(S=subject),),
                                             {"query": q, "subject": subject}))


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


def _plan_multi_file(p: Planting, cfg: GeneratorConfig, descriptions: Descriptions) -> None:
    """R2: one answer's components spread over 2-4 sessions of one series, one component per session.

    A paraphrased question's description is established in the first component's session."""
    rng = rng_for(cfg.seed, "multi_file")
    para_rng = rng_for(cfg.seed, "multi_file_paraphrase")
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
            surface = MULTI_SURFACES[g % len(MULTI_SURFACES)]
            components = [tpl.component.format(S=subject, V=v) for v in values]
            avoid: frozenset[str] = frozenset()
            if surface == "paraphrase":
                text, description = paraphrase(tpl.name, tuple(components), descriptions, para_rng, T=s.team,
                                                K=s.kind)
                avoid = content_words(text)
                p.plant(p.schedule.meeting_of[(s.id, chosen[0])],
                        Plant(f"C{q}.a", "alias", (alias(subject, description, para_rng),),
                              {"query": q, "subject": subject, "description": description}))
            else:
                text = (tpl.question if surface == "question" else tpl.keyword).format(S=subject, T=s.team,
                                                                                       K=s.kind)
            pids = []
            for j, (sess_no, v, sentence) in enumerate(zip(chosen, values, components, strict=True)):
                pid = f"C{q}.{j}"
                pids.append(pid)
                p.plant(p.schedule.meeting_of[(s.id, sess_no)],
                        Plant(pid, "component", (sentence,),
                              {"query": q, "subject": subject, "value": v, "template": tpl.name}, avoid=avoid))
            p.queries.append(QuerySpec(q, "multi_file", "R2", surface, text, pids=tuple(pids)))
            rest = [k for k in range(1, n + 1) if k not in chosen]
            if rest and rng.random() < MULTI_ECHO_RATE:
                other = p.schedule.meeting_of[(s.id, rest[rng.randrange(len(rest))])]
                echo = rng.choice(MULTI_ECHOES[tpl.name]).format(S=subject)
                p.plant(other, Plant(f"C{q}.e", "component_echo", (echo,), {"query": q, "subject": subject}))


def _plan_summaries(p: Planting, cfg: GeneratorConfig) -> None:
    """R8: every session of a series, one query per phrasing; sessions name their series in speech."""
    for mid, plant in series_mentions(p.schedule, rng_for(cfg.seed, "series_mentions")):
        p.plant(mid, plant)
    for s in p.org.series:
        for surface, tpl in SUMMARY_TEMPLATES:
            p.queries.append(QuerySpec(p.next_query_id(), "summarize", "R8", surface, tpl.format(T=s.team, K=s.kind),
                                       series=s.id))


def _meeting_plans(cfg: GeneratorConfig, sched: Schedule,
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
            speakers=sess.speakers, attendees=sess.invitees,
            agenda=tuple(name for name, _ in topics), topic_words=tuple(w for _, ws in topics for w in ws),
            words=words, render_seed=derived_seed(cfg.seed, "render", mid),
            bank_seed=derived_seed(cfg.seed, "bank", s.id) if sess.template_like else 0,
            plants=tuple(plants[mid]), register=cfg.register))
    return tuple(meetings)


def build_plan(cfg: GeneratorConfig) -> Plan:
    org = build_organisation(cfg)
    sessions = settle_attendance(draw_sessions(cfg, org), org, rng_for(cfg.seed, "attendance"))
    sched = make_schedule(sessions, cfg.meetings)
    p = Planting(sched, org, InventedNames(rng_for(cfg.seed, "names"), reserved_words(org)))
    descriptions = Descriptions(rng_for(cfg.seed, "descriptions"))
    _plan_lookups(p, cfg, descriptions)
    _plan_multi_file(p, cfg, descriptions)
    _plan_summaries(p, cfg)
    n_rule = per_rule_count(cfg.meetings)
    plan_markers(p, cfg, n_rule)
    plan_deferrals(p, cfg, n_rule)
    plan_attendance(p, cfg, n_rule)
    return Plan(config=cfg, org=org, meetings=_meeting_plans(cfg, sched, p.plants), queries=tuple(p.queries))
