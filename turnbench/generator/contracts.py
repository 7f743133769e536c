"""The contracts between what the generator writes and what its validator reads back.

The generator keeps them when it plants; the validator re-derives every gold item with them from the
text on disk (docs/question-grammar.md states the lexical ones for the answer engine):

- a phrase is *mentioned* in a turn when its tokens occur consecutively in the turn's tokens, where
  tokens are the lowercased text split on every non-alphanumeric character;
- a *deferral* of an item is a case-insensitive, word-bounded match of ``defer the {item}``;
- a person *attended* a session when they spoke at least one turn in it;
- a planted sentence sits in a turn of at most ``MAX_PLANTED_TURN_WORDS`` words;
- a session's title is ``{team} — {kind} #{session}``, so the titles name every series; sessions also
  name their series in speech (``series_mention`` facts): the full name is the tokens of ``{team} {kind}``
  in a row, and no session says another series' full name;
- every session of a series an R6 question asks about says its full name, so its sessions are the meetings
  whose talk says it, titles or none; a question that names the series by its weekday ``slot`` means sessions
  that all fall on that weekday, one of which says ``{slot} {team} {kind}``;
- the invitee list (``Meeting.attendees``) holds everyone who spoke and some who never did;
- the *content words* of a text are its tokens minus ``STOPWORDS``; a paraphrased question shares at most
  ``PARAPHRASE_MAX_OVERLAP`` of them with its answer turns;
- facts.jsonl holds a ``TargetFact`` per aggregation query, then a ``LocatedFact`` per planted sentence
  (docs/generator.md lists their fields); the validator uses them only to know what to look for.
"""

from __future__ import annotations

import random
import re
from typing import TypedDict

MAX_PLANTED_TURN_WORDS = 150
PARAPHRASE_MAX_OVERLAP = 1
# Between these shares of sessions say what they are in speech, and at least one session never does.
MENTION_SHARE = (0.5, 0.9)
# At least this share of R6 questions has another answer when attendance is counted from invitees.
INVITEE_TRAP_SHARE = 1 / 3
# Function words, question words and fillers: what a query shares with any turn and that says nothing.
STOPWORDS = frozenset("""
a about after again all also am an and any are as at be been before being both but by can could d did didn
do does doesn doing don down during each few for from further had has have having he her here hers him his
how i if in into is isn it its itself just let ll m many me more most much my no nor not now of off oh okay
on once only or other our ours out over own re right s same she should so some such t than that the their
them then there these they this those through to too uh um under until up us ve very was we well were what
when where which while who whom why will with would yeah you your
""".split())
# Words that frame a question rather than say what it is about ("what did the group discuss about ..."): left out,
# with the stopwords, of the words whose overlap with the evidence a question's distance is measured by.
FRAMING = frozenset("""
discuss discussed discusses discussing discussion discussions talk talked talking talks think thinks thought say
says said opinion opinions summarize summarise summarized summarised summary meeting meetings session sessions
group team mention mentioned tell told
""".split())
TITLE = re.compile(r"(?P<team>.+) — (?P<kind>.+) #(?P<n>[0-9]+)")
_TOKEN = re.compile(r"[a-z0-9]+")


class TargetFact(TypedDict, total=False):
    """facts.jsonl's ``aggregation_target`` record: what an aggregation query asks about."""

    type: str
    meeting: None
    query: str
    rule: str
    phrase: str  # R3, R4, R7
    item: str  # R5
    team: str  # R6
    kind: str  # R6
    slot: str  # R6 when the question names the series by the weekday it meets on
    month: str  # R7, "{Month} {year}"


class LocatedFact(TypedDict, total=False):
    """A facts.jsonl record that names where one planted sentence was written (docs/generator.md)."""

    type: str
    meeting: str
    turn: int
    speaker: str
    text: str
    query: str
    subject: str
    value: str
    template: str
    phrase: str
    of: str
    variant: str
    item: str
    description: str  # alias
    team: str  # series_mention
    kind: str  # series_mention
    form: str  # series_mention: full | team | kind
    position: str  # series_mention: opening | handover | closing
    last: int  # discussion: its last turn (``turn`` is its first)
    aspect: str  # discussion
    person: str  # discussion asked about by an opinion question: the first name it addresses
    named: str  # and that person's full name, as the turns spell it
    named_turns: list[int]  # and the turns of the block they spoke (the question's speaker_turns)


def tokens(text: str) -> list[str]:
    """The phrase-matching tokens of a text: lowercase, split on non-alphanumerics (standard analyzer)."""
    return _TOKEN.findall(text.lower())


def contains_tokens(haystack: list[str] | tuple[str, ...], needle: tuple[str, ...]) -> int:
    """How many times ``needle`` occurs as a consecutive run in ``haystack``."""
    n, k = len(haystack), len(needle)
    if k == 0:
        return 0
    first = needle[0]
    return sum(1 for i in range(n - k + 1) if haystack[i] == first and tuple(haystack[i:i + k]) == needle)


def content_words(text: str) -> frozenset[str]:
    """The words of a text that can carry meaning: its tokens minus ``STOPWORDS``."""
    return frozenset(t for t in tokens(text) if t not in STOPWORDS)


def question_words(text: str) -> frozenset[str]:
    """The words a question's distance from its evidence is measured by: content words minus ``FRAMING``."""
    return content_words(text) - FRAMING


def deferral_pattern(item: str) -> re.Pattern[str]:
    """The R5 contract: ``defer the {item}``, word-bounded, case-insensitive, single spaces."""
    return re.compile(r"\bdefer the " + re.escape(item.lower()) + r"\b", re.IGNORECASE)


def word_count(text: str) -> int:
    """Words as the planted-turn limit counts them: runs of non-whitespace."""
    return len(text.split())


def session_title(team: str, kind: str, session: int) -> str:
    return f"{team} — {kind} #{session}"


def recording_name(date: str, rng: random.Random) -> str:
    """An opaque title, as a recorder names its file: ``rec-2026-03-14-0930.m4a`` (the date and a start time)."""
    return f"rec-{date}-{rng.randint(8, 17):02d}{rng.choice((0, 15, 30, 45)):02d}.m4a"


def series_name(team: str, kind: str) -> tuple[str, ...]:
    """The tokens that name a series in full: ``{team} {kind}``."""
    return tuple(tokens(f"{team} {kind}"))


def series_of_title(title: str) -> tuple[str, str] | None:
    """The (team, kind) a session title names, or None when the title is not a session title."""
    m = TITLE.fullmatch(title)
    return (m.group("team"), m.group("kind")) if m else None
