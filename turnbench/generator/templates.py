"""How planted facts are said and how their questions are asked: the phrasing tables of each query class.

``{S}`` is a fact's subject (generator/subjects.py), ``{V}`` its value, ``{T}`` and ``{K}`` a series' team and kind;
a bracketed ``[word]`` in a question form is one the question may say another way (generator/lexicon.py).
Aggregation templates take ``{x}`` (the phrase or item), ``{verb}``, ``{noun}``, ``{month}``, ``{team}``,
``{kind}`` and ``{series}`` (a series named as people name it: by its weekday slot, or as the team's);
docs/question-grammar.md is the grammar the ``in`` families follow, and the ``out`` families are deliberately
outside it.
"""

from __future__ import annotations

from typing import NamedTuple


class LookupTemplate(NamedTuple):
    name: str
    setup: str  # the turn that asks
    answer: str  # the turn that states the fact
    questions: tuple[str, ...]  # the query forms of surface "question"; [word]: said another way (generator/lexicon)
    keyword: str  # the query form of surface "keyword"
    value_kind: str  # what {V} is: amount | small | percent | date | person | city | vendor | version
    talk: tuple[str, ...]  # what people say around the fact: the words of its topic


class MultiTemplate(NamedTuple):
    name: str
    component: str  # one session's part of the answer
    questions: tuple[str, ...]
    keyword: str
    value_kind: str
    talk: tuple[str, ...]


class Aspect(NamedTuple):
    """What a discussion of a subject is about (its renewal, its staffing, its lease): the word, said another way
    in questions (generator/lexicon), and the words the discussion uses."""

    word: str
    talk: tuple[str, ...]


class Surface(NamedTuple):
    """One phrasing family of an aggregation rule."""

    surface: str
    grammar: str  # "in" when docs/question-grammar.md derives it, else "out"
    template: str


# {S} is the subject's name as said mid-sentence (subjects.Subject.name), {V} the value. Every bracketed word of a
# question is a word of the setup or answer sentence, so the question at distance 0 shares all of them.
LOOKUP_TEMPLATES = (
    LookupTemplate("budget", "What budget did we settle on for the {S} contract?",
                   "We settled on a budget of {V} thousand dollars for the {S} contract.",
                   ("What [budget] did we [settle] on for the {S} [contract]?",
                    "How much is the [budget] for the {S} [contract]?",
                    "What is the [budget] for the {S} [contract] we were negotiating?"),
                   "{S} [contract] [budget]", "amount",
                   ("cost", "finance", "approval", "quote", "invoice", "overrun", "estimate", "sign-off")),
    LookupTemplate("deadline", "When is the {S} rollout due, remind me?", "The {S} rollout is due on {V}.",
                   ("When is the {S} [rollout] [due]?", "By what date is the {S} [rollout] [due] to happen?"),
                   "{S} [rollout] [due]", "date",
                   ("schedule", "slip", "milestone", "timeline", "freeze", "testing", "cutover", "calendar")),
    LookupTemplate("owner", "Who is going to own the {S} migration?", "{V} will own the {S} migration.",
                   ("Who is going to [own] the {S} [migration]?", "Who will [own] the {S} [migration]?"),
                   "{S} [migration] owner", "person",
                   ("handover", "staffing", "cutover", "data", "risk", "plan", "weekend", "runbook")),
    LookupTemplate("count", "How many licences do we need for the {S} team?",
                   "We need {V} licences for the {S} team in total.",
                   ("How many [licences] do we [need] for the {S} team?",
                    "What number of [licences] do we [need] for the {S} team in total?"),
                   "{S} team [licences]", "amount",
                   ("users", "tier", "procurement", "pricing plan", "logins", "subscription", "admins", "cost")),
    LookupTemplate("location", "Where are we holding the {S} offsite?", "The {S} offsite will be in {V}.",
                   ("Where are we [holding] the {S} [offsite]?", "Where will the {S} [offsite] be?",
                    "In which city is the {S} [offsite] going to happen?"),
                   "{S} [offsite] location", "city",
                   ("travel", "venue", "hotel", "agenda", "flights", "dates", "dinner", "workshop")),
    LookupTemplate("vendor", "Which vendor did we pick for the {S} audit?",
                   "We picked {V} as the vendor for the {S} audit.",
                   ("Which [vendor] did we [pick] for the {S} [audit]?", "Who did we [pick] to run the {S} [audit]?"),
                   "{S} [audit] [vendor]", "vendor",
                   ("scope", "compliance", "findings", "report", "quote", "controls", "evidence", "auditors")),
    LookupTemplate("version", "Which version of the {S} integration are we pinning?",
                   "We are pinning the {S} integration to version {V}.",
                   ("Which [version] of the {S} integration are we [pinning]?",
                    "What [version] are we [pinning] the {S} integration to?"),
                   "{S} integration [version]", "version",
                   ("upgrade", "compatibility", "patch", "bugs", "dependencies", "changelog", "regression", "test")),
    LookupTemplate("discount", "What discount did we offer the {S} account?",
                   "We offered the {S} account a discount of {V} percent.",
                   ("What [discount] did we [offer] the {S} account?", "How big a [discount] did we [offer] the {S} "
                                                                         "account?"),
                   "{S} account [discount]", "percent",
                   ("margin", "negotiation", "terms", "volume", "pricing", "renewal", "competitor", "list price")),
    LookupTemplate("headcount", "How many people are we adding to the {S} work?",
                   "We are adding {V} people to the {S} work next quarter.",
                   ("How many [people] are we [adding] to the {S} work?",
                    "What number of [people] are we [adding] to the {S} work next quarter?"),
                   "{S} work [people] [adding]", "small",
                   ("hiring", "recruiter", "interviews", "contractors", "budget", "managers", "ramp-up", "desks")),
)
# Sentences that name a lookup's subject and predicate without stating its fact (near-duplicate competitors).
LOOKUP_ECHOES = {
    "budget": ("Do we know the budget for the {S} contract yet?", "Has anyone seen the {S} contract budget sheet?",
               "The {S} contract budget needs sign-off from finance."),
    "deadline": ("Is the {S} rollout date still moving around?", "Who is tracking when the {S} rollout is due?",
                 "The {S} rollout due date keeps coming up."),
    "owner": ("Do we have an owner for the {S} migration yet?", "Somebody should own the {S} migration plan.",
              "The {S} migration owner question is still open."),
    "count": ("How many licences will the {S} team need, does anyone know?",
              "Licence counts for the {S} team are on my list.", "Procurement asked about the {S} team licences."),
    "location": ("Where should the {S} offsite be held, any ideas?", "The {S} offsite location is still open.",
                 "People keep asking where the {S} offsite will be."),
    "vendor": ("Which vendor are we leaning towards for the {S} audit?", "The {S} audit vendor question is still open.",
               "We owe finance a note on the {S} audit vendor."),
    "version": ("Which version of the {S} integration should we pin, any opinions?",
                "The {S} integration version question keeps coming back.",
                "We should decide what version the {S} integration is pinned to."),
    "discount": ("Are we still thinking about a discount for the {S} account?",
                 "The {S} account discount is not settled yet.", "Sales asked again about a {S} account discount."),
    "headcount": ("Are we adding people to the {S} work at all?", "The {S} work needs more people, I think.",
                  "Headcount for the {S} work is still an open question."),
}
# Lookup query surfaces: a fact asked as a question or as a few keywords (R1, in rotation within a meeting), and a
# discussion asked about ("what was discussed about X", "what did <person> think about X": R9, in rotation).
FACT_SURFACES = ("question", "keyword", "question")
DISCUSSION_SURFACES = ("topic", "opinion")

MULTI_TEMPLATES = (
    MultiTemplate("shortlist", "For the {S} tender, put {V} on the shortlist.",
                  ("Across the {T} {K} meetings, which vendors made the [shortlist] for the {S} [tender]?",
                   "Which firms are on the [shortlist] for the {S} [tender], over the {T} {K} sessions?"),
                  "{S} [tender] [shortlist] vendors", "vendor",
                  ("bids", "pricing", "references", "criteria", "deadline", "scoring", "quotes", "procurement")),
    MultiTemplate("sites", "Add {V} to the list of pilot sites for the {S} trial.",
                  ("Which pilot [sites] were chosen for the {S} [trial] over the {T} {K} sessions?",
                   "Where will the {S} [trial] run, according to the {T} {K} meetings?"),
                  "{S} [trial] pilot [sites]", "city",
                  ("pilot", "stores", "regions", "logistics", "training", "rollout plan", "feedback", "travel")),
    MultiTemplate("reviewers", "{V} agreed to review the {S} proposal.",
                  ("Who agreed to [review] the {S} [proposal] in the {T} {K} meetings?",
                   "In the {T} {K} sessions, which people offered to [review] the {S} [proposal]?"),
                  "{S} [proposal] reviewers", "person",
                  ("draft", "comments", "deadline", "sections", "appendix", "numbers", "summary", "feedback")),
)
# Sentences that name a multi-file subject in another session of the series without adding a component.
MULTI_ECHOES = {
    "shortlist": ("Has anyone looked at the {S} tender yet?", "The {S} tender is getting a lot of interest."),
    "sites": ("Pilot sites for the {S} trial are still being discussed.", "How many pilot sites will the {S} trial "
                                                                        "need?"),
    "reviewers": ("The {S} proposal still needs reviewers.", "Who has time to review the {S} proposal?"),
}
# Multi-file query surfaces rotate by the query's place in its series.
MULTI_SURFACES = ("question", "keyword", "question")

# What a discussion of a subject may be about, by subject kind (generator/subjects.py).
ASPECTS = {
    "customer": (Aspect("renewal", ("terms", "price", "notice", "negotiation", "value", "term length")),
                 Aspect("escalation", ("support", "response", "apology", "fix", "tickets", "root cause")),
                 Aspect("expansion", ("regions", "demand", "usage", "seats", "contract", "forecast"))),
    "project": (Aspect("staffing", ("engineers", "hiring", "contractors", "load", "skills", "backfill")),
                Aspect("scope", ("features", "requirements", "cuts", "phase", "must-haves", "creep")),
                Aspect("risks", ("dependencies", "delays", "mitigation", "unknowns", "budget", "sign-off"))),
    "product": (Aspect("adoption", ("users", "signups", "retention", "usage", "campaign", "tutorial")),
                Aspect("performance", ("latency", "load time", "caching", "crashes", "memory", "profiling")),
                Aspect("feedback", ("reviews", "survey results", "complaints", "ratings", "requests", "interviews"))),
    "place": (Aspect("lease", ("landlord", "rent", "break clause", "term", "notice", "renewal")),
              Aspect("move", ("boxes", "movers", "weekend", "floor plan", "desks", "network")),
              Aspect("equipment", ("laptops", "printers", "screens", "chairs", "servers", "orders"))),
}
# Questions about a discussion block: [aspect] and [discussed]/[think] may be said another way; {X} is the subject,
# {P} a participant (as named in the roster), {A} the agenda item the discussion came under.
TOPIC_FORMS = ("What was [discussed] about the [{aspect}] of the {S}?",
               "What was [discussed] about the {S} [{aspect}] when going through the {A}?",
               "What came up about the {S} [{aspect}]?")
# A summary request about one discussion (R8, surface "discussion"), as QMSum's specific summary queries are.
DISCUSSION_SUMMARY_FORMS = ("Summarize the discussion about the {S} [{aspect}].",
                            "Summarise what was said about the [{aspect}] of the {S} under the {A}.",
                            "Sum up the {S} [{aspect}] discussion.")
# Context a question may carry (QMSum's "when discussing the remote"): the series it came up in.
TAILS = ("in the {T} {K}", "at the {T} {K}")
OPINION_FORMS = ("What did {P} [think] about the {S} [{aspect}]?",
                 "What did {P} [think] about the [{aspect}] of the {S}?",
                 "What did {P} [think] about the {S} [{aspect}] when discussing the {A}?")

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
           Surface("casual", "out", "Of everyone at the {series}, who showed up most often, and how many times?")),
    "R7": (Surface("how_many_in_month", "in", "How many {noun} in {month} {verb} the {x}?"),
           Surface("month_first", "in", 'In {month}, how many {noun} {verb} "{x}"?'),
           Surface("casual", "out", "Back in {month}, on how many calls did the {x} come up?")),
}
AGG_VERBS = ("mentioned", "discussed", "talked about")
AGG_NOUNS = ("meetings", "sessions")
