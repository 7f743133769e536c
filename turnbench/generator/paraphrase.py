"""Paraphrased questions: a lexical gap between question and answer, by construction.

A ``paraphrase`` question about a lookup fact or a multi-file answer names neither the subject nor the
predicate the meeting used. The subject is referred to by a description that the meeting itself
establishes in another turn (an *alias* turn: "For anyone new, Niryanmi is our refund gateway."); the
predicate by a synonym from the curated lexicon below (budget → "money set aside", tender → "bid").

A description pairs a topic word with a system noun (``vocab.SYSTEMS``). Both are ordinary words that
occur all over the corpus; only their pairing is unique, so a bag-of-words engine finds little while an
engine that resolves the alias can find the meeting. Every paraphrase shares at most
``PARAPHRASE_MAX_OVERLAP`` content words with the sentence it asks about (checked when the question is
drawn, with the real subject and value), and rendering keeps the question's content words out of the talk
around that sentence, so the question shares at most that many with its answer turns; the validator
recomputes the overlap from the text on disk.
"""

from __future__ import annotations

import random

from turnbench.errors import TurnbenchError
from turnbench.generator import vocab
from turnbench.generator.contracts import PARAPHRASE_MAX_OVERLAP, content_words

# Template name (generator/templates.py) -> question forms. {D} is the description; {T} and {K} name the
# series of a multi-file question.
PARAPHRASES: dict[str, tuple[str, ...]] = {
    "budget": ("How much money is set aside for the {D} deal?", "What funding was agreed for the {D} agreement?"),
    "deadline": ("By what date does the {D} go live?", "When should the {D} be switched on for everyone?"),
    "owner": ("Who is responsible for moving the {D} over?", "Which person is in charge of moving the {D} across?"),
    "count": ("How many seats must we buy for the {D}?", "What number of seats are we purchasing for the {D}?"),
    "location": ("In which city will the {D} retreat take place?", "Which city is hosting the {D} away day?"),
    "vendor": ("Which outside firm was chosen to run the {D} audit?",
               "What company will carry out the {D} inspection?"),
    "version": ("What release of the {D} are we locking to?", "Which build of the {D} is frozen in place?"),
    "shortlist": ("Which suppliers made the final cut for the {D} bid in the {T} {K} meetings?",
                  "In the {T} {K} sessions, what firms were kept in the running for the {D} bid?"),
    "sites": ("Where will the {D} be trialled, according to the {T} {K} sessions?",
              "Which locations were picked to trial the {D} across the {T} {K} meetings?"),
    "reviewers": ("Who signed up to look over the {D} write-up in the {T} {K} meetings?",
                  "In the {T} {K} sessions, which people offered to read through the {D} paper?"),
}
MAX_DRAWS = 200
# How a meeting establishes a description for a subject, in a turn of its own.
ALIASES = (
    "For anyone new, {S} is our {D}.",
    "Quick reminder that {S} is the {D}.",
    "When I say {S} I mean the {D}.",
    "Just so we are clear, {S} is what we call the {D}.",
    "We named the {D} {S}, by the way.",
)


def _qualifiers() -> tuple[str, ...]:
    """Topic words that can describe a system: none may be a word a question form, an alias or a fact
    template already uses, a team name, a kind or a system noun, so a description adds only itself."""
    from turnbench.generator.speech import phrasing_words
    from turnbench.generator.templates import LOOKUP_TEMPLATES, MULTI_TEMPLATES

    taken: set[str] = set(phrasing_words())
    for forms in PARAPHRASES.values():
        for f in forms:
            taken |= content_words(f)
    for a in ALIASES:
        taken |= content_words(a)
    for t in LOOKUP_TEMPLATES:
        taken |= content_words(" ".join((t.setup, t.answer, t.question, t.keyword)))
    for m in MULTI_TEMPLATES:
        taken |= content_words(" ".join((m.component, m.question, m.keyword)))
    for name in (*vocab.TEAM_NAMES, *vocab.KINDS, *vocab.SYSTEMS):
        taken |= content_words(name)
    seen: list[str] = []
    for _, words in vocab.AGENDA_TOPICS:
        seen.extend(w for w in words if w not in taken and w not in seen)
    return tuple(seen)


QUALIFIERS = _qualifiers()


class Descriptions:
    """Descriptions unique across the corpus: a topic word and a system noun, more qualifiers once the
    pairs run out (very large corpora)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()
        self.qualifiers = 1
        self.misses = 0

    def new(self) -> str:
        while True:
            words = [self.rng.choice(QUALIFIERS) for _ in range(self.qualifiers)]
            d = " ".join((*words, self.rng.choice(vocab.SYSTEMS)))
            if d not in self.used and len(set(words)) == len(words):
                self.used.add(d)
                self.misses = 0
                return d
            self.misses += 1
            if self.misses >= 50:
                self.qualifiers += 1
                self.misses = 0


def paraphrase(template: str, sentences: tuple[str, ...], descriptions: Descriptions, rng: random.Random,
               **series: str) -> tuple[str, str]:
    """(question, description) for a fact of ``template`` stated by ``sentences`` (the answer sentence, or
    every component of a multi-file answer): the first draw whose content words meet at most
    ``PARAPHRASE_MAX_OVERLAP`` of the sentences' own."""
    stated = frozenset().union(*(content_words(s) for s in sentences))
    for _ in range(MAX_DRAWS):
        description = descriptions.new()
        form = PARAPHRASES[template][rng.randrange(len(PARAPHRASES[template]))]
        text = form.format(D=description, **series)
        if len(content_words(text) & stated) <= PARAPHRASE_MAX_OVERLAP:
            return text, description
    raise TurnbenchError(f"no paraphrase of {template!r} keeps its overlap with {sentences!r} within "
                         f"{PARAPHRASE_MAX_OVERLAP} word(s)")


def alias(subject: str, description: str, rng: random.Random) -> str:
    """The sentence that establishes ``description`` as what ``subject`` is."""
    return ALIASES[rng.randrange(len(ALIASES))].format(S=subject, D=description)
