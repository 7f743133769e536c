"""The phrasing tables (turnbench/generator/templates.py) and docs/question-grammar.md must describe the
same queries: every `in` query the generator writes is derived by exactly one production of the doc's
section 2 (with the rule and surface the doc names), every `out` query by none. The productions are
transcribed here as regular expressions; the doc's text is checked for them."""

from __future__ import annotations

import re

from tests.unit.corpus.helpers import REPO
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.plan import build_plan
from turnbench.generator.templates import (
    AGG_SURFACES,
    LOOKUP_ECHOES,
    LOOKUP_TEMPLATES,
    MULTI_ECHOES,
    MULTI_TEMPLATES,
)

MEETINGS = r"(?:meetings|sessions)"
MENTION = r"(?:mentioned|discussed|talked about)"
PHRASE = r"[a-z0-9]+(?: [a-z0-9]+)+"
PRED = rf"{MENTION} (?:the {PHRASE}|\"{PHRASE}\")"
MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December) [0-9]{4}"
TEAM = r"[A-Z][a-z]+"
KIND = r"[a-z]+(?: [a-z]+)*"
PRODUCTIONS = {
    ("R3", "how_many"): rf"How many {MEETINGS} {PRED}\?",
    ("R3", "count_meetings"): rf"Count the {MEETINGS} that {PRED}\.",
    ("R4", "which"): rf"Which {MEETINGS} {PRED}\?",
    ("R4", "list"): rf"List the {MEETINGS} that {PRED}\.",
    ("R7", "how_many_in_month"): rf"How many {MEETINGS} in {MONTH} {PRED}\?",
    ("R7", "month_first"): rf"In {MONTH}, how many {MEETINGS} {PRED}\?",
    ("R5", "how_many_times"): r"How many times in total did we defer the [a-z0-9]+ [a-z0-9]+\?",
    ("R5", "count_deferrals"): r"Count how many times \"[a-z0-9]+ [a-z0-9]+\" was deferred\.",
    ("R6", "who_most"): rf"Who attended the most {KIND} sessions for the {TEAM} team\?",
    ("R6", "which_person"): rf"Which person attended the most {TEAM} {KIND} meetings\?",
}


def test_every_in_query_has_exactly_one_production_and_no_out_query_has_one():
    plan = build_plan(GeneratorConfig())
    agg = [q for q in plan.queries if q.cls == "aggregation"]
    assert agg
    for q in agg:
        matches = [key for key, rx in PRODUCTIONS.items() if re.fullmatch(rx, q.text)]
        if q.grammar == "in":
            assert matches == [(q.rule, q.surface)], q.text
        else:
            assert q.grammar == "out" and matches == [], q.text


def test_the_doc_names_every_in_surface_and_the_contracts():
    doc = (REPO / "docs" / "question-grammar.md").read_text(encoding="utf-8")
    for rule, surface in PRODUCTIONS:
        assert f"-- {rule}, surface {surface}" in doc
    for needed in ('re.findall(r"[a-z0-9]+", text.lower())', r'\bdefer the ', "speaker of at least one turn",
                   "at most 150 words", 'MENTION   := "mentioned" | "discussed" | "talked about"',
                   'MEETINGS  := "meetings" | "sessions"'):
        assert needed in doc, needed



def test_every_template_has_its_echoes_and_every_rule_three_families_one_outside_the_grammar():
    assert sorted(t.name for t in LOOKUP_TEMPLATES) == sorted(LOOKUP_ECHOES)
    assert sorted(t.name for t in MULTI_TEMPLATES) == sorted(MULTI_ECHOES)
    for t in LOOKUP_TEMPLATES:
        assert "{S}" in t.setup and "{S}" in t.answer and "{V}" in t.answer
        assert not any("{V}" in f for f in (*t.questions, t.keyword))
    for rule, families in AGG_SURFACES.items():
        assert len(families) == 3 and [f.grammar for f in families].count("out") == 1, rule
        assert len({f.surface for f in families}) == 3, rule
