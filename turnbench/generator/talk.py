"""Talk that carries its topic: the sentences around a planted fact, and discussions of a subject by several people.

Evidence in context: a fact is asked, talked around and stated by people who talk about its subject and its topic
(a budget's cost, approval and invoices), never among random filler, so a passage holding it says what it is about.
A discussion is a block of turns in which three or four people take up one aspect of a subject (a customer's
renewal, a project's staffing, a site's lease): an opening that names it, opinions, proposals, doubts and questions
to each other by first name, in varied words, and a close; where a question asks what one of them thought, their
stand on it and someone else's (``STANCES``).

Every sentence is drawn from the tables below with a seeded generator; ``avoid`` keeps a question's substitutes out
(``generator/lexicon.py``), so a question's distance from its evidence is the one drawn for it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from turnbench.generator import wordlists
from turnbench.generator.contracts import tokens

# {S} the subject, {w} and {u} two of the topic's words, {a} a judgement, {t} a time, {d} a weekday.
CONTEXT = (
    "I talked to the people on {S} about the {w} on {d}.",
    "The {w} is the part of the work on {S} that worries me most.",
    "We still need a clear view of the {w} for {S}.",
    "Finance wants the {w} for {S} written down.",
    "Last time the {w} came up, the people on {S} were not happy.",
    "If the {w} moves again we have a problem with {S}.",
    "Let us keep the {w} and the {u} for {S} in one place.",
    "I can send round my notes on the {w} {t}.",
    "The {w} looks {a} from where I sit.",
    "Honestly the {w} has been {a} so far.",
    "I would like the {w} and the {u} settled {t}.",
    "So that covers the {w}, mostly.",
    "The {u} depends on the {w}, so that comes first.",
    "With {S}, the {w} was always going to be the hard bit.",
    "Nobody has looked at the {u} for {S} yet.",
    "We went through the {w} with them {t}.",
)
# A discussion of {X} (the subject's aspect, "the Harrow Logistics renewal"); {p} is someone else in the room.
OPENINGS = (
    "Next on the list is the {A}, and with it the {X}.",
    "Under the {A}, can we spend a few minutes on the {X}?",
    "Still on the {A}, I want to talk about the {X} before we run out of time.",
    "Moving on to the {A}: where are we with the {X}?",
)
OPINIONS = (
    "I think the {w} is the main thing with the {X}.",
    "My view is that the {w} matters more than the {u} here.",
    "For the {X} we should sort out the {w} first.",
    "The {w} worries me, honestly.",
    "I spoke to them about the {w} last week and it was {a}.",
    "If the {w} slips, everything after it slips too.",
    "We could give up some of the {u} to get the {w} right.",
    "I am not convinced the {w} is worth it.",
    "That is fair, but the {w} is still {a}.",
    "Can we get numbers on the {w} before we decide?",
    "Let us agree the {w} now and come back to the {u}.",
    "I disagree, the {u} is what people will notice.",
    "From what I have seen of {S}, the {w} looks {a}.",
    "So the {w} and the {u} are what is left to decide.",
    "Agreed, the {w} first.",
    "{p} has a point about the {u}.",
    "We tried that with the {u} before and it was {a}.",
    "I would rather wait on the {w} until we hear back.",
    "The {u} is {a}, the {w} less so.",
)
# A stand on the {X} itself: how the person an opinion question names answers when asked, and how another
# participant takes a stand on it too, so that the block holds someone else's words on the same thing (the
# question's distractor: only who said it tells the two apart).
STANCES = (
    "On the {X}, I think the {w} is what matters.",
    "My take on the {X}: the {w} looks {a}.",
    "For the {X}, I would sort out the {w} before the {u}.",
    "The {X} comes down to the {w}, as far as I can see.",
    "Honestly, the {X} looks {a} to me, mostly because of the {w}.",
    "I see the {X} differently: the {u} is the real question.",
)
# Short reactions inside a discussion: most turns of interactive talk are a few words.
REACTIONS = (
    "Agreed, the {w} first.",
    "The {w}?",
    "Hmm, the {u}.",
    "Right, the {w}.",
    "Yes, that {w} thing.",
    "Not the {u}, no.",
    "Fair point.",
    "I see.",
    "True, the {w} is {a}.",
    "Maybe after the {w}.",
)
# Asking someone in the room by first name ({p}).
ADDRESSING = (
    "{p}, what do you make of the {w}?",
    "{p}, you looked at the {w}, what is your take?",
    "What do you think about the {u}, {p}?",
)
CLOSINGS = (
    "Okay, so on the {X}: the {w} first, then the {u}.",
    "Let us leave the {X} there for today.",
    "Good, I will write up what we said about the {X}.",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
# How people judge what they talk about.
JUDGEMENTS = ("fine", "risky", "tight", "expensive", "slow", "late", "unclear", "solid", "shaky", "better", "worse",
              "messy", "reasonable", "optimistic", "too vague", "on track")
MAX_DRAWS = 60


def _fill(template: str, rng: random.Random, words: Sequence[str], **slots: str) -> str:
    w = words[rng.randrange(len(words))]
    rest = [x for x in words if x != w] or list(words)
    text = template.format(w=w, u=rest[rng.randrange(len(rest))], a=rng.choice(JUDGEMENTS),
                           t=rng.choice(wordlists.TIMES), d=rng.choice(WEEKDAYS), **slots)
    return text[0].upper() + text[1:]


def draw(table: Sequence[str], rng: random.Random, words: Sequence[str], avoid: frozenset[str] = frozenset(),
         **slots: str) -> str | None:
    """A sentence of ``table`` about ``words`` that says none of ``avoid`` (None when every draw did); with no one
    else to name (``p`` empty), no sentence that names someone."""
    if "p" in slots and not slots["p"]:
        table = [t for t in table if "{p}" not in t]
    for _ in range(MAX_DRAWS):
        text = _fill(table[rng.randrange(len(table))], rng, words, **slots)
        if avoid.isdisjoint(tokens(text)):
            return text
    return None


def context(rng: random.Random, subject: str, words: Sequence[str], n: int,
            avoid: frozenset[str] = frozenset()) -> list[str]:
    """Up to ``n`` sentences about ``subject`` and its topic ``words``."""
    out = []
    for _ in range(n):
        s = draw(CONTEXT, rng, words, avoid, S=subject)
        if s is not None:
            out.append(s)
    return out
