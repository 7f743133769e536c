"""How planted facts are said and how their questions are asked: the phrasing tables of each query class.

``{S}`` is a fact's invented subject, ``{V}`` its value, ``{T}`` and ``{K}`` a series' team and kind.
Aggregation templates take ``{x}`` (the phrase or item), ``{verb}``, ``{noun}``, ``{month}``, ``{team}``
and ``{kind}``; docs/question-grammar.md is the grammar the ``in`` families follow, and the ``out``
families are deliberately outside it.
"""

from __future__ import annotations

from typing import NamedTuple


class LookupTemplate(NamedTuple):
    name: str
    setup: str  # the turn that asks
    answer: str  # the turn that states the fact
    question: str  # the query, surface "question"
    keyword: str  # the query, surface "keyword"
    value_kind: str  # what {V} is: amount | date | person | city | vendor | version


class MultiTemplate(NamedTuple):
    name: str
    component: str  # one session's part of the answer
    question: str
    keyword: str
    value_kind: str


class Surface(NamedTuple):
    """One phrasing family of an aggregation rule."""

    surface: str
    grammar: str  # "in" when docs/question-grammar.md derives it, else "out"
    template: str


LOOKUP_TEMPLATES = (
    LookupTemplate("budget", "What budget did we settle on for the {S} contract?",
                   "The budget for the {S} contract is {V} thousand dollars.",
                   "What is the budget for the {S} contract?", "{S} contract budget", "amount"),
    LookupTemplate("deadline", "When is the {S} rollout due, remind me?", "The {S} rollout is due on {V}.",
                   "When is the {S} rollout due?", "{S} rollout due date", "date"),
    LookupTemplate("owner", "Who is going to own the {S} migration?", "{V} will own the {S} migration.",
                   "Who owns the {S} migration?", "{S} migration owner", "person"),
    LookupTemplate("count", "How many licences do we need for {S}?", "We need {V} licences for {S} in total.",
                   "How many licences are needed for {S}?", "{S} licence count", "amount"),
    LookupTemplate("location", "Where are we holding the {S} offsite?", "The {S} offsite will be in {V}.",
                   "Where will the {S} offsite be held?", "{S} offsite location", "city"),
    LookupTemplate("vendor", "Which vendor did we pick for the {S} audit?", "We picked {V} for the {S} audit.",
                   "Which vendor was picked for the {S} audit?", "{S} audit vendor", "vendor"),
    LookupTemplate("version", "Which version of {S} are we pinning?", "We are pinning {S} to version {V}.",
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
# Lookup query surfaces in rotation by query number; "verbatim" quotes the answer sentence; "paraphrase"
# names neither subject nor predicate (generator/paraphrase.py).
LOOKUP_SURFACES = ("question", "paraphrase", "keyword", "question", "verbatim")

MULTI_TEMPLATES = (
    MultiTemplate("shortlist", "For the {S} tender, put {V} on the shortlist.",
                  "Across the {T} {K} meetings, which vendors made the shortlist for the {S} tender?",
                  "{S} tender shortlist vendors", "vendor"),
    MultiTemplate("sites", "Add {V} to the list of pilot sites for {S}.",
                  "Which pilot sites were chosen for {S} over the {T} {K} sessions?", "{S} pilot sites", "city"),
    MultiTemplate("reviewers", "{V} agreed to review the {S} proposal.",
                  "Who agreed to review the {S} proposal in the {T} {K} meetings?", "{S} proposal reviewers",
                  "person"),
)
# Sentences that name a multi-file subject in another session of the series without adding a component.
MULTI_ECHOES = {
    "shortlist": ("Has anyone looked at the {S} tender yet?", "The {S} tender is getting a lot of interest."),
    "sites": ("Pilot sites for {S} are still being discussed.", "How many pilot sites will {S} need?"),
    "reviewers": ("The {S} proposal still needs reviewers.", "Who has time to review the {S} proposal?"),
}
# Multi-file query surfaces rotate by the query's place in its series.
MULTI_SURFACES = ("question", "keyword", "paraphrase")

SUMMARY_TEMPLATES = (
    ("question", "Summarize the {T} {K} meetings."),
    ("topic", "What did the {T} {K} series cover over time?"),
)

# Each rule's three phrasing families, used in rotation by the query's place in its rule.
AGG_SURFACES = {
    "R3": (Surface("how_many", "in", "How many {noun} {verb} the {x}?"),
           Surface("count_meetings", "in", 'Count the {noun} that {verb} "{x}".'),
           Surface("casual", "out", "Did the {x} come up much? Give me the number of calls.")),
    "R4": (Surface("which", "in", "Which {noun} {verb} the {x}?"),
           Surface("list", "in", 'List the {noun} that {verb} "{x}".'),
           Surface("casual", "out", "Pull up every call where somebody brought up the {x}.")),
    "R5": (Surface("how_many_times", "in", "How many times in total did we defer the {x}?"),
           Surface("count_deferrals", "in", 'Count how many times "{x}" was deferred.'),
           Surface("casual", "out", "Tally up how often the {x} got pushed to a later date.")),
    "R6": (Surface("who_most", "in", "Who attended the most {kind} sessions for the {team} team?"),
           Surface("which_person", "in", "Which person attended the most {team} {kind} meetings?"),
           Surface("casual", "out",
                   "Of everyone at the {team} {kind} meetings, who showed up most often, and how many times?")),
    "R7": (Surface("how_many_in_month", "in", "How many {noun} in {month} {verb} the {x}?"),
           Surface("month_first", "in", 'In {month}, how many {noun} {verb} "{x}"?'),
           Surface("casual", "out", "Back in {month}, on how many calls did the {x} come up?")),
}
AGG_VERBS = ("mentioned", "discussed", "talked about")
AGG_NOUNS = ("meetings", "sessions")
