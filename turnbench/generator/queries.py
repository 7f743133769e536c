"""Queries with their gold: turn indices come from where the transcript actually put each planted sentence
(its facts), never from the plan alone.

A lookup's gold is its meeting's ``[setup, answer]`` span with the answer turn as evidence, or (R9) the
discussion block it asks about, with no single evidence turn (so is a summary request about one discussion); an
opinion question's gold names the person it asks about and the turns of the block they spoke; a multi-file
query's gold is one turn per component, each in its own meeting; a summarize query's gold is every
session of its series, whole; an aggregation query is scored on the answer the plan fixed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from turnbench.corpus.records import Query
from turnbench.errors import TurnbenchError
from turnbench.generator.contracts import LocatedFact, TargetFact
from turnbench.generator.plan import Plan


def build_queries(plan: Plan, facts: Iterable[LocatedFact], turn_counts: Mapping[str, int]) -> list[Query]:
    by_query: dict[str, list[LocatedFact]] = {}
    for f in facts:
        if f.get("meeting") is not None and "query" in f:
            by_query.setdefault(f["query"], []).append(f)
    series_meetings: dict[str, list[str]] = {}
    for m in plan.meetings:
        series_meetings.setdefault(m.series, []).append(m.id)
    out: list[Query] = []
    for spec in plan.queries:
        located = by_query.get(spec.id, [])
        if spec.rule == "R9" or (spec.cls == "summarize" and spec.pids):
            (block,) = [f for f in located if f["type"] == "discussion"]
            mid = block["meeting"]
            named = block.get("named", "") if spec.surface == "opinion" else ""
            out.append(Query(spec.id, spec.cls, spec.rule, spec.surface, spec.text, "retrieval", (mid,),
                             gold_turns={mid: ((block["turn"], block["last"]),)}, speaker=named,
                             speaker_turns={mid: tuple(block.get("named_turns", ()))} if named else {}))
        elif spec.cls == "lookup":
            (setup,) = [f for f in located if f["type"] == "lookup_setup"]
            (answer,) = [f for f in located if f["type"] == "lookup_answer"]
            mid = answer["meeting"]
            out.append(Query(spec.id, "lookup", spec.rule, spec.surface, spec.text, "retrieval", (mid,),
                             gold_turns={mid: ((setup["turn"], answer["turn"]),)},
                             answer_turns={mid: (answer["turn"],)}))
        elif spec.cls == "multi_file":
            comps = sorted((f["meeting"], f["turn"]) for f in located if f["type"] == "component")
            if len({m for m, _ in comps}) != len(comps):
                raise TurnbenchError(f"{spec.id}: multi-file components share a meeting")
            out.append(Query(spec.id, "multi_file", spec.rule, spec.surface, spec.text, "retrieval",
                             tuple(m for m, _ in comps), gold_turns={m: ((t, t),) for m, t in comps},
                             answer_turns={m: (t,) for m, t in comps}))
        elif spec.cls == "summarize":
            if spec.series is None:
                raise TurnbenchError(f"{spec.id}: a summarize query without its series")
            mids = series_meetings[spec.series]
            out.append(Query(spec.id, "summarize", spec.rule, spec.surface, spec.text, "retrieval", tuple(mids),
                             gold_turns={m: ((0, turn_counts[m] - 1),) for m in mids}, gold_level="meeting"))
        else:
            out.append(Query(spec.id, "aggregation", spec.rule, spec.surface, spec.text, "answer", (),
                             answer=spec.answer, meta={"grammar": spec.grammar or "in"}))
    return out


def aggregation_targets(plan: Plan) -> list[TargetFact]:
    """The facts.jsonl records that tell the validator what each aggregation query asks about."""
    return [{"type": "aggregation_target", "meeting": None, "query": q.id, **q.target}
            for q in plan.queries if q.cls == "aggregation"]
