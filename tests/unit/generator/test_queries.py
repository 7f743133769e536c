"""Query gold (turnbench/generator/queries.py) comes from where the transcript put each planted sentence."""

from __future__ import annotations

import dataclasses
import json

import pytest

from turnbench.errors import TurnbenchError
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.plan import build_plan
from turnbench.generator.queries import aggregation_targets, build_queries
from turnbench.generator.transcript import write_meeting

CFG = GeneratorConfig(seed=6, meetings=16, words_per_meeting=400)


def _written():
    plan = build_plan(CFG)
    facts, turns = [], {}
    for mp in plan.meetings:
        _, fs, counts = write_meeting(mp)
        facts.extend(fs)
        turns[mp.id] = counts["turns"]
    return plan, facts, turns


def test_gold_follows_the_facts_for_every_class():
    plan, facts, turns = _written()
    queries = {q.id: q for q in build_queries(plan, facts, turns)}
    assert [q.id for q in plan.queries] == list(queries)
    # series mentions belong to no query: they are what a summary is found from
    assert {f["type"] for f in facts if "query" not in f} == {"series_mention"}
    for f in (f for f in facts if "query" in f):
        q = queries[f["query"]]
        if f["type"] == "lookup_answer":
            setup = next(s for s in facts if s["type"] == "lookup_setup" and s["query"] == q.id)
            assert q.gold_turns == {f["meeting"]: ((setup["turn"], f["turn"]),)}
            assert q.answer_turns == {f["meeting"]: (f["turn"],)}
        elif f["type"] == "component":
            assert q.gold_turns[f["meeting"]] == ((f["turn"], f["turn"]),)
        elif f["type"] == "discussion":
            # a discussion question's gold is its block, first turn to last
            assert q.gold_turns == {f["meeting"]: ((f["turn"], f["last"]),)} and q.answer_turns == {}
            # an opinion question's gold also names its person and the turns of the block they spoke
            assert (q.speaker, dict(q.speaker_turns)) == ((f["named"], {f["meeting"]: tuple(f["named_turns"])})
                                                          if q.surface == "opinion" else ("", {}))
    for spec in plan.queries:
        q = queries[spec.id]
        if spec.cls == "summarize" and spec.series is not None:
            series = [m.id for m in plan.meetings if m.series == spec.series]
            assert q.gold_meetings == tuple(series) and q.gold_level == "meeting"
            assert all(q.gold_turns[m] == ((0, turns[m] - 1),) for m in series)
        elif spec.cls == "aggregation":
            assert (q.scored_on, q.answer, q.meta) == ("answer", spec.answer, {"grammar": spec.grammar})
    targets = aggregation_targets(plan)
    assert [t["query"] for t in targets] == [s.id for s in plan.queries if s.cls == "aggregation"]
    assert all(t["type"] == "aggregation_target" and t["meeting"] is None and "rule" in t for t in targets)


def test_components_in_one_meeting_or_a_summary_without_its_series_are_refused():
    plan, facts, turns = _written()
    comps = [f for f in facts if f["type"] == "component"]
    moved = [dict(f, meeting=comps[0]["meeting"]) if f.get("query") == comps[0]["query"] else f for f in facts]
    with pytest.raises(TurnbenchError, match="components share a meeting"):
        build_queries(plan, moved, turns)
    specs = tuple(dataclasses.replace(s, series=None) if s.cls == "summarize" else s for s in plan.queries)
    with pytest.raises(TurnbenchError, match="summarize query without its series"):
        build_queries(dataclasses.replace(plan, queries=specs), facts, turns)


@pytest.mark.parametrize("register", ["default", "interactive", "formal"])
def test_every_opinion_question_has_a_distractor_by_construction(register):
    """A question that names a speaker is hard by construction: in its block the named speaker takes a stand on the
    subject's aspect, and so does someone else after the opening (a passage of the same discussion, on the same
    thing, in other mouths); every turn of the named speaker's is an opinion, never a backchannel or the close, so
    the turns the gold credits to them say what they thought."""
    from turnbench.generator.contracts import contains_tokens, tokens
    from turnbench.generator.wordlists import BACKCHANNELS

    checked = 0
    for seed in range(1, 9):
        plan = build_plan(GeneratorConfig(seed=seed, meetings=8, register=register))
        facts, turns, said = [], {}, {}
        for mp in plan.meetings:
            line, fs, counts = write_meeting(mp)
            facts.extend(fs)
            turns[mp.id] = counts["turns"]
            said[mp.id] = json.loads(line)["turns"]
        queries = {q.id: q for q in build_queries(plan, facts, turns)}
        for f in (f for f in facts if f["type"] == "discussion" and queries[f["query"]].surface == "opinion"):
            q, mid, first, last = queries[f["query"]], f["meeting"], f["turn"], f["last"]
            block = said[mid][first:last + 1]
            topic = tuple(tokens(f"{f['subject']} {f['aspect']}"))
            theirs = [t for t in block if t["speaker"] == q.speaker]
            assert q.speaker in q.text and q.speaker.split(" ")[0] == f["person"]
            assert q.speaker_turns == {mid: tuple(t["index"] for t in theirs)}
            assert theirs and all(t["index"] != last and t["text"] not in BACKCHANNELS for t in theirs), q.id
            assert any(contains_tokens(tokens(t["text"]), topic) for t in theirs), q.id
            rivals = [t for t in block[1:] if t["speaker"] != q.speaker and contains_tokens(tokens(t["text"]), topic)
                      and t["index"] != last]
            assert rivals, q.id
            checked += 1
    assert checked >= 8
