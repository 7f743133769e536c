"""How much a corpus sounds like real meetings: the figures ``turnbench measure --against`` sets side by side.

Every figure is computed the same way on any format-v1 corpus (definitions in ``REALISM_DEFINITIONS``, also
written into ``stats.json``), per domain where meetings carry one, so a synthetic register can be held up
against QMSum's product, academic and committee meetings.

Overlapping speech needs real or planned times. QMSum has no timestamps (its adapter lays turns end to end),
so the figure is reported only for meetings whose ``timing`` is ``measured`` and for corpora whose times the
generator planned; elsewhere it is absent, never zero.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from turnbench.corpus.records import Meeting

# Words a backchannel or filler turn is made of ("Mm-hmm.", "Yeah, yeah.", "Got it.", "Uh").
BACKCHANNEL_WORDS = frozenset((
    "yeah", "yes", "yep", "yup", "ya", "mm", "mmm", "mhm", "mm-hm", "mm-hmm", "hmm", "hm", "uh-huh", "uh", "um",
    "okay", "ok", "right", "sure", "oh", "ah", "aha", "alright", "got", "it", "makes", "sense", "cool", "true",
    "exactly", "huh",
))
BACKCHANNEL_MAX_WORDS = 3
QUANTILES = (10, 25, 50, 75, 90, 99)
_WORD = re.compile(r"[\w'-]+")

REALISM_DEFINITIONS = {
    "words_per_meeting": "median over meetings of the words (whitespace-separated) in all turns",
    "speakers_per_meeting": "median over meetings of the distinct speakers of its turns",
    "turn_words_pNN": "nearest-rank NNth percentile of words per turn over all turns",
    "backchannel_share": (f"share of turns of 1 to {BACKCHANNEL_MAX_WORDS} words, each a backchannel or filler "
                          "word (casefolded, punctuation stripped)"),
    "overlap_share": ("seconds during which two or more speakers talk / seconds during which anyone talks, "
                      "summed over meetings with measured or planned times; absent otherwise"),
    "query_words": "median words per ranked query",
    "query_gold_overlap": ("median over turn-level ranked queries of the content words (tokens minus stopwords) "
                           "shared with the evidence: the answer turns, else the gold turns"),
    "query_gold_overlap_at_most_1": "share of those queries sharing at most one content word",
}


@dataclass(frozen=True)
class MeetingProfile:
    """One meeting's shape, as the realism figures need it."""

    meeting_id: str
    domain: str
    words: int
    speakers: int
    turn_words: tuple[int, ...]
    backchannels: int
    talk_seconds: float | None  # None when the meeting's times carry no information
    overlap_seconds: float | None


def is_backchannel(text: str) -> bool:
    words = [w.strip("'-") for w in _WORD.findall(text.casefold())]
    return 0 < len(words) <= BACKCHANNEL_MAX_WORDS and all(w in BACKCHANNEL_WORDS for w in words)


def overlap_seconds(meeting: Meeting) -> tuple[float, float]:
    """(seconds anyone talks, seconds two or more speakers talk), by a sweep over turn starts and ends."""
    events: list[tuple[float, int, str]] = []
    for t in meeting.turns:
        if t.end > t.start:
            events.append((t.start, 1, t.speaker))
            events.append((t.end, -1, t.speaker))
    events.sort(key=lambda e: (e[0], e[1]))  # ends before starts at the same instant: touching is not overlap
    active: dict[str, int] = {}
    talk = both = 0.0
    last = None
    for at, step, speaker in events:
        if last is not None and at > last:
            n = sum(1 for c in active.values() if c > 0)
            if n >= 1:
                talk += at - last
            if n >= 2:
                both += at - last
        active[speaker] = active.get(speaker, 0) + step
        last = at
    return talk, both


def profile_meeting(meeting: Meeting, domain: str, timed: bool) -> MeetingProfile:
    words = tuple(len(t.text.split()) for t in meeting.turns)
    talk, both = overlap_seconds(meeting) if timed else (None, None)
    return MeetingProfile(meeting.id, domain, sum(words), len({t.speaker for t in meeting.turns}), words,
                          sum(1 for t in meeting.turns if is_backchannel(t.text)), talk, both)


def nearest_rank(sorted_values: Sequence[int], pct: int) -> int:
    """The nearest-rank percentile of already sorted values."""
    return sorted_values[max(0, math.ceil(pct / 100 * len(sorted_values)) - 1)]


def meeting_figures(profiles: Iterable[MeetingProfile]) -> dict[str, Any]:
    """The meeting-side figures over ``profiles`` (sums in meeting-id order)."""
    ps = sorted(profiles, key=lambda p: p.meeting_id)
    if not ps:
        return {"meetings": 0}
    turns = sorted(w for p in ps for w in p.turn_words)
    timed = [p for p in ps if p.talk_seconds is not None]
    talk = math.fsum(p.talk_seconds or 0.0 for p in timed)
    out: dict[str, Any] = {
        "meetings": len(ps),
        "words_per_meeting": float(statistics.median(p.words for p in ps)),
        "speakers_per_meeting": float(statistics.median(p.speakers for p in ps)),
        "turns": len(turns),
        **({f"turn_words_p{q}": nearest_rank(turns, q) for q in QUANTILES} if turns else {}),
        "backchannel_share": sum(p.backchannels for p in ps) / len(turns) if turns else 0.0,
        "overlap_share": math.fsum(p.overlap_seconds or 0.0 for p in timed) / talk if timed and talk > 0 else None,
    }
    return out


def query_figures(words: Sequence[int], overlaps: Sequence[int]) -> dict[str, Any]:
    """The query-side figures: words per ranked query, content words shared with the evidence."""
    out: dict[str, Any] = {"queries": len(words)}
    out["query_words"] = float(statistics.median(words)) if words else None
    out["query_gold_overlap"] = float(statistics.median(overlaps)) if overlaps else None
    out["query_gold_overlap_at_most_1"] = sum(1 for o in overlaps if o <= 1) / len(overlaps) if overlaps else None
    return out
