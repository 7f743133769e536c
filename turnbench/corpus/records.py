"""The records of corpus format v1 (docs/design.md §4). Every stage reads these, never raw dicts.

On disk each record is one canonical JSON line; ``to_json``/``from_json`` are the only translation.
Times are seconds (floats); turn indices are 0-based and dense; turn ranges are inclusive
``[first, last]`` pairs, QMSum's convention.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

RANKED_CLASSES = ("lookup", "multi_file", "summarize")
ANSWER_TYPES = ("count", "meeting_set", "speaker_count")

# rule ids: aggregation rules follow the design (R3..R7); the ranked classes get their own ids.
RULE_OF_CLASS = {"lookup": "R1", "multi_file": "R2", "summarize": "R8"}
AGGREGATION_RULES = ("R3", "R4", "R5", "R6", "R7")
# Month names as questions and answers write them; R7 asks for "{Month} {year}".
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


def text_field(value: Any, field: str) -> str:
    """``value`` when it is text every store can hold: a string with no NUL character (PostgreSQL's text cannot
    hold one) and no lone surrogate (it has no UTF-8 encoding, so no file or index can hold it either)."""
    if not isinstance(value, str):
        raise TypeError(f"{field} is a {type(value).__name__}, not a string")
    if "\x00" in value:
        raise ValueError(f"{field} holds a NUL character")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{field} holds a lone surrogate, which no UTF-8 text can carry") from None
    return value


def _texts(values: Any, field: str) -> tuple[str, ...]:
    if not isinstance(values, list):
        raise TypeError(f"{field} is a {type(values).__name__}, not a list")
    return tuple(text_field(v, f"{field}[{i}]") for i, v in enumerate(values))


class Turn(msgspec.Struct, frozen=True, gc=False):
    """One speaker turn (a Struct: a corpus is read from its bytes straight into millions of them, and the cyclic
    collector need not track records that hold only text and numbers)."""

    index: int
    speaker: str
    start: float
    end: float
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "speaker": self.speaker, "start": self.start, "end": self.end, "text": self.text}

    @classmethod
    def from_json(cls, d: Mapping[str, Any], where: str = "turn") -> Turn:
        return cls(int(d["index"]), text_field(d["speaker"], f"{where}.speaker"), float(d["start"]), float(d["end"]),
                   text_field(d["text"], f"{where}.text"))


class Meeting(msgspec.Struct, frozen=True, gc=False):
    """One meeting. ``meta`` holds producer facts that are not product data (team, series, QMSum domain);
    the loader and answer engine never read it. A Struct, as ``Turn`` is; nothing it holds refers back to it."""

    id: str
    title: str
    recorded_date: str | None  # ISO date, or None when no source can date the meeting
    duration: float
    timing: str  # "synthetic" | "measured"
    speakers: tuple[str, ...]
    turns: tuple[Turn, ...]
    attendees: tuple[str, ...] = ()
    agenda: tuple[str, ...] = ()
    meta: Mapping[str, str] = msgspec.field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "recorded_date": self.recorded_date,
            "duration": self.duration,
            "timing": self.timing,
            "speakers": list(self.speakers),
            "attendees": list(self.attendees),
            "agenda": list(self.agenda),
            "meta": dict(self.meta),
            "turns": [t.to_json() for t in self.turns],
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Meeting:
        return cls(
            id=text_field(d["id"], "id"),
            title=text_field(d["title"], "title"),
            recorded_date=d.get("recorded_date"),
            duration=float(d["duration"]),
            timing=str(d["timing"]),
            speakers=_texts(d["speakers"], "speakers"),
            turns=tuple(Turn.from_json(t, f"turns[{i}]") for i, t in enumerate(d["turns"])),
            attendees=_texts(d.get("attendees", []), "attendees"),
            agenda=_texts(d.get("agenda", []), "agenda"),
            meta=dict(d.get("meta", {})),
        )


@functools.cache
def _meeting_decoder() -> Any:
    import msgspec

    return msgspec.json.Decoder(Meeting), msgspec.MsgspecError


def meeting_line(line: bytes) -> Meeting | None:
    """The meeting a line holds, read from its bytes into its record without a dict in between (a corpus is
    millions of turns), when every field is of its exact type; None for anything else, which
    :meth:`Meeting.from_json` then reads or refuses. What ``text_field`` refuses is not read here: a lone surrogate
    is not JSON to this reader, and a line with an escaped NUL is left to ``from_json``."""
    if b"\\u0000" in line:
        return None
    decoder, error = _meeting_decoder()
    try:
        return decoder.decode(line)
    except error:
        return None


def meeting_lines(lines: list[bytes]) -> list[Meeting | None]:
    """:func:`meeting_line` of each line of a block."""
    return list(map(meeting_line, lines))


@dataclass(frozen=True)
class Answer:
    """A typed aggregation answer. ``count`` uses ``count``; ``meeting_set`` uses ``meetings``;
    ``speaker_count`` uses ``speaker`` and ``count``."""

    type: str
    count: int | None = None
    meetings: tuple[str, ...] | None = None
    speaker: str | None = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type}
        if self.type in ("count", "speaker_count"):
            d["count"] = self.count
        if self.type == "meeting_set":
            d["meetings"] = sorted(self.meetings or ())
        if self.type == "speaker_count":
            d["speaker"] = self.speaker
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Answer:
        t = d["type"]
        if t not in ANSWER_TYPES:
            raise ValueError(f"unknown answer type {t!r}")
        return cls(
            type=t,
            count=d.get("count"),
            meetings=tuple(sorted(d["meetings"])) if "meetings" in d else None,
            speaker=d.get("speaker"),
        )


@dataclass(frozen=True)
class Query:
    """One query. ``gold_turns`` maps meeting id → inclusive (first, last) turn ranges;
    ``answer_turns`` maps meeting id → turn indices that hold the exact evidence.
    ``gold_level`` is "turn" (graded on passages) or "meeting" (scored on meetings only).
    A query that names a speaker ("what did Dana think about ...?") carries the ``speaker`` it names and
    ``speaker_turns``, meeting id → the turns of its gold ranges that speaker spoke (docs/design.md §6 grades a
    passage without their words below one with them); both are written only when ``speaker`` is set."""

    id: str
    cls: str
    rule: str
    surface: str
    text: str
    scored_on: str
    gold_meetings: tuple[str, ...]
    gold_turns: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    answer_turns: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    answer: Answer | None = None
    gold_level: str = "turn"
    meta: Mapping[str, str] = field(default_factory=dict)
    speaker: str = ""
    speaker_turns: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        named = {"speaker": self.speaker,
                 "speaker_turns": {m: sorted(ts) for m, ts in sorted(self.speaker_turns.items())}} \
            if self.speaker else {}
        return {
            "id": self.id,
            "class": self.cls,
            "rule": self.rule,
            "surface": self.surface,
            "text": self.text,
            "scored_on": self.scored_on,
            "gold_level": self.gold_level,
            "gold_meetings": sorted(self.gold_meetings),
            "gold_turns": {m: [list(r) for r in sorted(rs)] for m, rs in sorted(self.gold_turns.items())},
            "answer_turns": {m: sorted(ts) for m, ts in sorted(self.answer_turns.items())},
            "answer": self.answer.to_json() if self.answer else None,
            "meta": dict(self.meta),
            **named,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Query:
        return cls(
            id=text_field(d["id"], "id"),
            cls=str(d["class"]),
            rule=str(d["rule"]),
            surface=str(d["surface"]),
            text=text_field(d["text"], "text"),
            scored_on=str(d["scored_on"]),
            gold_meetings=tuple(sorted(d["gold_meetings"])),
            gold_turns={m: tuple((int(a), int(b)) for a, b in rs) for m, rs in d.get("gold_turns", {}).items()},
            answer_turns={m: tuple(int(t) for t in ts) for m, ts in d.get("answer_turns", {}).items()},
            answer=Answer.from_json(d["answer"]) if d.get("answer") else None,
            gold_level=str(d.get("gold_level", "turn")),
            meta=dict(d.get("meta", {})),
            speaker=text_field(d["speaker"], "speaker") if d.get("speaker") else "",
            speaker_turns={m: tuple(int(t) for t in ts) for m, ts in d.get("speaker_turns", {}).items()}
            if d.get("speaker") else {},
        )
