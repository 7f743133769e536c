"""The reference answerer's intent parser: a small, general question grammar.

It covers every production of docs/question-grammar.md §2 (the generator's in-grammar families) as special
cases of a few general frames, so a question phrased a little differently — another mention verb, a
passive, the month at the end, "calls" for "meetings" — is still understood; §3's families stay outside.

A question is read as a *frame* (what is asked) plus *slots* (what it is asked about):

    COUNT    [in] how many MEETINGS  PREDICATE [TIME]         -> R3, or R7 when TIME is present
             count [the|all] MEETINGS [that|where|in which] PREDICATE [TIME]
    WHICH    which|what MEETINGS PREDICATE                    -> R4
             list|name|show [me] [all|the|every] MEETINGS [that|where|in which] PREDICATE
    TIMES    [count] how many times [in total|altogether|overall] DEFERRAL     -> R5
             how often DEFERRAL
    WHO      who|which person ATTEND the most KIND MEETINGS for|of|in|with [the] TEAM [team]   -> R6
             who|which person ATTEND the most [the] TEAM KIND MEETINGS

    MEETINGS   meetings | sessions | calls | recordings | transcripts (of the ... optional "of the")
    PREDICATE  active:  [AUX] [SUBJECT] MENTION PHRASE       ("did we discuss X", "mentioned X")
               passive: [AUX] PHRASE MENTIONED               ("was X discussed", "X came up in")
    TIME       in|during MONTH YEAR  (anywhere in the question, also leading: "In March 2026, how many ...";
               full or three-letter month names; a month without its year is declined)
    DEFERRAL   [AUX] [SUBJECT] defer|deferred PHRASE | [AUX] PHRASE deferred|put off by deferral

Team and kind are resolved against the series named in meeting titles ("{Team} — {kind} #{n}"); in the
adjacent form "the Payments design review meetings" the split between team and kind is the one that names
exactly one series. Where no title names a series, the answerer looks for the series' name in the talk instead
(engines/answer/mechanisms.py). Phrases are taken verbatim: a quoted span when the question quotes one,
otherwise the words the frame leaves over, with one leading article ("the", "a", "an") removed, because the
article is not part of a name and the mention contract is on the name's words. Anything the grammar does not
cover — relative dates, paraphrased subjects, comparisons, questions with no recognisable frame — is declined
with a reason, never guessed.

The parser is pure: it sees only the question text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from turnbench.corpus.records import MONTHS

_MONTHS = tuple(m.lower() for m in MONTHS)
_MONTH_OF = {m: i + 1 for i, m in enumerate(_MONTHS)} | {m[:3]: i + 1 for i, m in enumerate(_MONTHS)} | {"sept": 9}

MEETING_NOUNS = ("meetings", "sessions", "calls", "recordings", "transcripts", "syncs")
MENTION_VERBS = ("mention", "mentioned", "mentions", "discuss", "discussed", "discusses", "talk about",
                 "talked about", "talks about", "cover", "covered", "covers", "bring up", "brought up",
                 "brings up", "raise", "raised", "raises", "refer to", "referred to", "refers to",
                 "reference", "referenced", "references", "touch on", "touched on", "touches on")
# Passive/intransitive forms after the phrase: "was X discussed", "X came up".
MENTIONED_AFTER = ("mentioned", "discussed", "talked about", "covered", "brought up", "raised", "referred to",
                   "referenced", "touched on", "came up", "come up", "comes up", "get mentioned",
                   "got mentioned", "get discussed", "got discussed")
DEFER_VERBS = ("defer", "deferred", "defers")
ATTEND_VERBS = ("attended", "attend", "joined", "join", "was at", "were at", "was in", "went to", "took part in",
                "participated in", "spoke in", "showed up to", "showed up at", "showed up in", "sat in on")
AUX = ("did", "do", "does", "have", "has", "had", "was", "were", "is", "are", "will", "would")
SUBJECTS = ("we", "you", "they", "people", "anyone", "someone", "the team", "our team", "folks", "i")
RELATIVES = ("that", "which", "where", "in which", "during which", "at which", "in that")
ARTICLES = ("the", "a", "an")

# Words that mean the question is about something other than the literal frame: comparisons, negation,
# relative time, averages. A question containing them is declined rather than half-understood.
UNSUPPORTED = ("not", "never", "n't", "more than", "fewer than", "less than", "at least", "at most", "average",
               "percent", "percentage", "last month", "this month", "last week", "this week", "last year",
               "this year", "recently", "yesterday", "today", "ago", "before", "after", "since", "until",
               "between", "first", "latest", "earliest", "each", "per", "both", "either", "or")


def _alt(words: Iterable[str]) -> str:
    # longest first, so "talked about" wins over "talked"
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True)) + ")"


@dataclass(frozen=True)
class Intent:
    """What a question asks, in slots; ``details()`` is what results files record."""

    rule: str
    phrase: str | None = None
    pattern: str | None = None  # R5: the literal text whose occurrences are counted
    team: str | None = None
    kind: str | None = None
    series: str | None = None  # R6 adjacent form: "<team> <kind>", split against the titles
    year: int | None = None
    month: int | None = None

    def details(self) -> dict[str, str]:
        d = {"rule": self.rule}
        for k in ("phrase", "pattern", "team", "kind", "series"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        if self.year is not None:
            d["month"] = f"{self.year:04d}-{self.month:02d}"
        return d


@dataclass(frozen=True)
class Declined:
    reason: str


# -- pieces ------------------------------------------------------------------------------------------

_WS = re.compile(r"\s+")
_QUOTED = re.compile(r"[\"\u201c\u201d\u00ab\u00bb]([^\"\u201c\u201d\u00ab\u00bb]+)[\"\u201c\u201d\u00ab\u00bb]"
                     r"|(?<![\w])'([^']+)'(?![\w])|\u2018([^\u2018\u2019]+)\u2019")
_MONTH_ALT = "(?:" + "|".join(sorted(_MONTH_OF, key=len, reverse=True)) + r")\.?"
_TIME = re.compile(rf"(?:,\s*)?\b(?:in|during|throughout|over)\s+(?:the\s+month\s+of\s+)?"
                   rf"({_MONTH_ALT})\s+,?\s*(\d{{4}})\b",
                   re.IGNORECASE)
_MONTH_NO_YEAR = re.compile(rf"\b(?:in|during|throughout|over)\s+(?:the\s+month\s+of\s+)?"
                            rf"{_MONTH_ALT}(?!\w)(?!\s*,?\s*\d{{4}})",
                            re.IGNORECASE)
_MEETINGS = _alt(MEETING_NOUNS)
_OF_THE = r"(?:of\s+(?:the|our|all)\s+(?:\w+\s+)?)?"


def squash(text: str) -> str:
    """Whitespace collapsed, trailing ?.! removed: the form every frame is matched against."""
    return _WS.sub(" ", text).strip().rstrip("?.!").strip()


def _phrase(raw: str) -> str | None:
    """The subject phrase from the words a frame left over: trimmed, one leading article removed."""
    p = raw.strip().strip(",;:").strip()
    p = p.strip("\"'\u201c\u201d\u2018\u2019\u00ab\u00bb").strip()
    words = p.split()
    if len(words) > 1 and words[0].lower() in ARTICLES:
        words = words[1:]
    p = " ".join(words)
    return p or None


def _has_unsupported(text: str) -> str | None:
    low = " " + text.lower() + " "
    for w in UNSUPPORTED:
        if re.search(r"(?<![\w'])" + re.escape(w) + r"(?![\w])", low):
            return w
    return None


# -- frames ------------------------------------------------------------------------------------------

_COUNT_HEAD = re.compile(rf"^(?:(?:in\s+)?how\s+many\s+(?:different\s+|distinct\s+|separate\s+)?{_MEETINGS}\s+{_OF_THE}"
                         rf"|count\s+(?:up\s+)?(?:all\s+|the\s+)*{_MEETINGS}\s+{_OF_THE})", re.IGNORECASE)
_WHICH_HEAD = re.compile(
    rf"^(?:(?:which|what)\s+{_MEETINGS}\s+{_OF_THE}|(?:list|name|show|give)\s+(?:me\s+)?(?:all\s+|every\s+|the\s+)*"
    rf"{_MEETINGS}\s+{_OF_THE})", re.IGNORECASE)
_TIMES_HEAD = re.compile(r"^(?:(?:count\s+)?how\s+many\s+times|how\s+often)\s+"
                         r"(?:in\s+total\s+|altogether\s+|overall\s+|total\s+)?",
                         re.IGNORECASE)
_WHO_HEAD = re.compile(r"^(?:who|which\s+(?:person|attendee|participant|speaker|colleague))\s+"
                       rf"{_alt(ATTEND_VERBS)}\s+the\s+most\s+", re.IGNORECASE)

_LEAD = rf"(?:{_alt(RELATIVES)}\s+)?(?:{_alt(AUX)}\s+)?(?:{_alt(SUBJECTS)}\s+)?"
_ACTIVE = re.compile(rf"^{_LEAD}{_alt(MENTION_VERBS)}\s+(?P<phrase>.+)$", re.IGNORECASE)
_BE = r"(?:(?:was|were|is|are|has\s+been|have\s+been|had\s+been|got|get|gets|being|been)\s+)?"
_PASSIVE = re.compile(rf"^{_LEAD}(?P<phrase>.+?)\s+{_BE}{_alt(MENTIONED_AFTER)}"
                      r"(?:\s+(?:in|at|during|on))?(?:\s+(?:total|altogether|overall))?$", re.IGNORECASE)
_DEFER_ACTIVE = re.compile(rf"^{_LEAD}{_alt(DEFER_VERBS)}\s+(?P<phrase>.+?)(?:\s+(?:in\s+total|altogether|overall))?$",
                           re.IGNORECASE)
_DEFER_PASSIVE = re.compile(rf"^{_LEAD}(?P<phrase>.+?)\s+{_BE}(?:deferred)"
                            r"(?:\s+(?:in\s+total|altogether|overall))?$", re.IGNORECASE)
_WHO_SLOTS = re.compile(rf"^(?P<kind>.+?)\s+{_MEETINGS}\s+(?:for|of|in|with|held\s+by|run\s+by)\s+(?P<team>.+?)"
                        r"(?:\s+team)?$", re.IGNORECASE)
_WHO_SERIES = re.compile(rf"^(?P<series>.+?)\s+{_MEETINGS}$", re.IGNORECASE)

# R5's lexical contract (docs/question-grammar.md): a deferral of an item is the verb "defer" followed by
# "the" and the item's words, word-bounded, case-insensitive.
DEFERRAL_TEMPLATE = "defer the {item}"


def _predicate(rest: str) -> str | None:
    for rx in (_ACTIVE, _PASSIVE):
        m = rx.match(rest)
        if m:
            return _phrase(m.group("phrase"))
    return None


def _times(rest: str, quoted: str | None, when: tuple[int, int] | None) -> Intent | Declined:
    if when:
        return Declined("deferral counts are not asked per month")
    for rx in (_DEFER_ACTIVE, _DEFER_PASSIVE):
        d = rx.match(rest)
        if d:
            item = _phrase(quoted) if quoted else _phrase(d.group("phrase"))
            if item:
                return Intent("R5", phrase=item, pattern=DEFERRAL_TEMPLATE.format(item=item))
    return Declined("'how many times' without a deferral of a named item")


def _mentioned(rest: str, quoted: str | None) -> str | None:
    phrase = _predicate(rest)
    return (_phrase(quoted) if quoted else phrase) if phrase else None


def _count(rest: str, quoted: str | None, when: tuple[int, int] | None) -> Intent | Declined:
    phrase = _mentioned(rest, quoted)
    if phrase is None:
        return Declined("no mention of a phrase after 'how many meetings'")
    if when:
        return Intent("R7", phrase=phrase, year=when[0], month=when[1])
    return Intent("R3", phrase=phrase)


def _which(rest: str, quoted: str | None, when: tuple[int, int] | None) -> Intent | Declined:
    if when:
        return Declined("which-meetings questions are not asked per month")
    phrase = _mentioned(rest, quoted)
    return Intent("R4", phrase=phrase) if phrase else Declined("no mention of a phrase after 'which meetings'")


def _who(rest: str, quoted: str | None, when: tuple[int, int] | None) -> Intent | Declined:
    if when:
        return Declined("attendance questions are not asked per month")
    s = _WHO_SLOTS.match(rest)
    if s:
        return Intent("R6", team=_phrase(s.group("team")), kind=_phrase(s.group("kind")))
    s = _WHO_SERIES.match(rest)
    if s:
        return Intent("R6", series=_phrase(s.group("series")))
    return Declined("no '<kind> sessions for <team>' or '<team> <kind> sessions' after 'the most'")


# Tried in order; "how many times" must come before "how many <meetings>".
FRAMES = ((_TIMES_HEAD, _times), (_COUNT_HEAD, _count), (_WHICH_HEAD, _which), (_WHO_HEAD, _who))


def parse(text: str) -> Intent | Declined:
    """The intent of one question, or why it is declined."""
    q = squash(text)
    if not q:
        return Declined("empty question")
    quoted = next((next(g for g in m.groups() if g) for m in _QUOTED.finditer(q)), None)
    when = None
    time = _TIME.search(q)
    if time:
        when = (int(time.group(2)), _MONTH_OF[time.group(1).lower().rstrip(".")])
        q = squash(q[: time.start()] + " " + q[time.end():]).strip(" ,;:")
    # the unsupported-word check looks only outside a quoted phrase: a name may contain any word
    outside = _QUOTED.sub(" ", q)
    if _MONTH_NO_YEAR.search(outside):
        return Declined("a month is named without its year")
    bad = _has_unsupported(outside)
    if bad:
        return Declined(f"the question uses {bad!r}, which the grammar does not cover")
    for head, frame in FRAMES:
        m = head.match(q)
        if m:
            return frame(q[m.end():].strip(), quoted, when)
    return Declined("no question frame of the grammar (how many / which / how many times / who attended the most)")
