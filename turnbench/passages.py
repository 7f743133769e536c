"""Passage inventories: the passages an engine ranks, as any engine (ours or another team's) hands them over.

A passage is ``(meeting, speaker, start, end)`` plus its id, its position in its meeting and, optionally, the hash
of its text or the text itself (docs/formats.md states the fields and the rules an inventory must meet). An
inventory's identity is the sha256 of its canonical lines in (meeting, index, id) order.
"""

from __future__ import annotations

import functools
import hashlib
import math
import operator
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import attrgetter
from pathlib import Path
from typing import IO, Any, TypeVar

import msgspec

from turnbench import canonical
from turnbench.errors import BadInput

T = TypeVar("T")
# the encoder canonical.dumps uses for a string (ensure_ascii off): the same escapes, byte for byte


class Passage(msgspec.Struct, frozen=True, gc=False):
    """A passage of an inventory: a frozen record (a msgspec Struct: an inventory of a million is read straight from
    its bytes into them, at a third of the cost of a dataclass; it holds no other record, so the cyclic collector
    need not track it)."""

    id: str
    meeting: str
    speaker: str
    start: float
    end: float
    index: int  # position of the passage within its meeting, 0-based
    kind: str = "turn"  # "turn" for speaker-turn passages; other kinds (titles, digests) sort after
    text_sha256: str = ""
    words: int = 0
    # Another engine may hand in the passage's text itself; turnbench's own inventories carry only its hash.
    text: str | None = None
    # The words the passage holds, when it holds part of a turn: (turn index, first word, end word) per turn, words
    # counted as ``str.split`` counts them, end exclusive. A window of a long monologue is bound to exactly those
    # words (its times, apportioned and rounded, only approximate them); None: the passage holds whole turns.
    holds: tuple[tuple[int, int, int], ...] | None = None
    # Whose words the passage holds when not one speaker's: several speakers (a window across a conversation), or
    # () when the engine does not know (a fixed slice of time): every speaker. None: the one ``speaker``.
    speakers: tuple[str, ...] | None = None

    def canonical_line(self) -> bytes:
        """``canonical.dumps_line(self.to_json())``, written out: an inventory of a million passages is hashed
        (:func:`inventory_sha256`) in a second instead of ten. A passage carrying its text or its word spans takes
        the general path."""
        if self.text is not None or self.holds is not None or self.speakers is not None:
            return canonical.dumps_line(self.to_json())
        s = canonical.json_string
        return (f'{{"end":{float.__repr__(self.end)},"id":{s(self.id)},"index":{int.__repr__(self.index)},'
                f'"kind":{s(self.kind)},"meeting":{s(self.meeting)},"speaker":{s(self.speaker)},'
                f'"start":{float.__repr__(self.start)},"text_sha256":{s(self.text_sha256)},'
                f'"words":{int.__repr__(self.words)}}}\n').encode()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "meeting": self.meeting, "start": self.start,
            "end": self.end, "index": self.index, "kind": self.kind, "text_sha256": self.text_sha256,
            "words": self.words,
        }
        if self.speakers is None:
            out["speaker"] = self.speaker
        else:
            out["speakers"] = list(self.speakers) if self.speakers else UNKNOWN_SPEAKERS
        if self.text is not None:
            out["text"] = self.text
        if self.holds is not None:
            out["holds"] = [list(h) for h in self.holds]
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Passage:
        """A passage record, every field of its type: a malformed record raises ValueError or TypeError."""
        fast = _plain(cls, d)
        if fast is not None:
            return fast
        text = d.get("text")
        sha = _of_type(d, "text_sha256", str, "")
        if text is not None:
            if not isinstance(text, str):
                raise TypeError(f"text is a {type(text).__name__}, not a string")
            own = canonical.sha256_bytes(text.encode("utf-8"))
            if sha and sha != own:
                raise ValueError("text_sha256 is not the sha256 of the passage's own text")
        if sha and not _SHA256.fullmatch(sha):
            raise ValueError(f"text_sha256 {sha[:80]!r} is not a sha256")
        start, end = _number(d, "start"), _number(d, "end")
        if end < start:
            raise ValueError(f"it ends ({end}) before it starts ({start})")
        index, words = _of_type(d, "index", int), _of_type(d, "words", int, 0)
        if index < 0 or words < 0:
            raise ValueError("index and words must not be negative")
        speaker, speakers = _voices(d)
        return cls(_name(d, "id"), _name(d, "meeting"), speaker, start, end, index,
                   _of_type(d, "kind", str, "turn"), sha, words, text, _holds(d.get("holds")), speakers)

    @property
    def voices(self) -> str:
        """Whose words these are, for messages: the speaker, the speakers, or "any speaker"."""
        if self.speakers is None:
            return self.speaker
        return ", ".join(self.speakers) if self.speakers else "any speaker"


UNKNOWN_SPEAKERS = "unknown"
_PLAIN_KEYS = frozenset({"end", "id", "index", "kind", "meeting", "speaker", "start", "text_sha256", "words"})
_SHA256 = re.compile(r"[0-9a-f]{64}")
_HEX = b"0123456789abcdef"  # a sha256 is 64 of these


def _all_hex(text: str) -> bool:
    """Whether ``text`` is lower-case hex digits only (``_SHA256``'s alphabet), checked without the regex engine: a
    byte translation deletes them all at ten times the speed of ``str.strip`` (an inventory's hashes are megabytes)."""
    return text.isascii() and not text.encode("ascii").translate(None, _HEX)


def _plain(cls: type[Passage], d: Mapping[str, Any]) -> Passage | None:
    """The record as :meth:`Passage.from_json` reads it when it is a plain one (the fields turnbench writes, each of
    its exact type and valid), in one step instead of a call per field; None for anything else, which the general
    path reads or refuses."""
    if d.keys() != _PLAIN_KEYS:
        return None
    pid, meeting, speaker, kind, sha = d["id"], d["meeting"], d["speaker"], d["kind"], d["text_sha256"]
    start, end, index, words = d["start"], d["end"], d["index"], d["words"]
    if not (type(pid) is str and type(meeting) is str and type(speaker) is str and type(kind) is str
            and type(sha) is str and type(start) is float and type(end) is float and type(index) is int
            and type(words) is int and pid.strip() and meeting.strip() and speaker.strip()
            and math.isfinite(start) and math.isfinite(end) and start <= end and index >= 0 and words >= 0
            and (not sha or (len(sha) == 64 and _all_hex(sha)))):
        return None
    return cls(pid, meeting, speaker, start, end, index, kind, sha, words)


def _voices(d: Mapping[str, Any]) -> tuple[str, tuple[str, ...] | None]:
    """(speaker, speakers): one ``speaker``; or ``speakers``, a list of two or more, or "unknown" (every speaker)."""
    if "speakers" not in d:
        return _name(d, "speaker"), None
    if "speaker" in d:
        raise ValueError("a passage gives speaker or speakers, not both")
    value = d["speakers"]
    if value == UNKNOWN_SPEAKERS:
        return "", ()
    if not (isinstance(value, list) and len(value) >= 2 and all(isinstance(v, str) and v.strip() for v in value)):
        raise TypeError('speakers must be a list of two or more names, or "unknown"')
    if len(set(value)) != len(value):
        raise ValueError("speakers names a speaker twice")
    return "", tuple(sorted(value))


def _holds(value: Any) -> tuple[tuple[int, int, int], ...] | None:
    """``holds`` as a tuple of (turn, first word, end word), each a whole number, first < end, no turn twice."""
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise TypeError("holds must be a non-empty list of [turn, first word, end word]")
    out = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 3 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                  for x in item)):
            raise TypeError(f"holds item {str(item)[:60]} is not [turn, first word, end word]")
        turn, first, end = item
        if turn < 0 or not 0 <= first < end:
            raise ValueError(f"holds item {item}: a turn index and 0 <= first word < end word")
        out.append((turn, first, end))
    if len({t for t, _, _ in out}) != len(out):
        raise ValueError("holds names a turn twice")
    return tuple(out)


def _of_type(d: Mapping[str, Any], key: str, kind: type[T], default: T | None = None) -> T:
    if key not in d:
        if default is None:
            raise KeyError(key)
        return default
    value = d[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TypeError(f"{key} is a {type(value).__name__}, not a {kind.__name__}")
    return value


def _name(d: Mapping[str, Any], key: str) -> str:
    value = _of_type(d, key, str)
    if not value.strip():
        raise ValueError(f"{key} is empty")
    return value


def _number(d: Mapping[str, Any], key: str) -> float:
    value = d[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{key} is {value!r}, not a finite number")
    return float(value)


def write_passages(path: Path, passages: Iterable[Passage]) -> str:
    """Write ``passages.jsonl`` sorted by (meeting, index); returns its sha256."""
    data = b"".join(canonical_blocks(passages))
    canonical.write_bytes_atomic(Path(path), data)
    return canonical.sha256_bytes(data)


def inventory_sha256(passages: Iterable[Passage]) -> str:
    """The sha256 ``write_passages`` would return for these passages, without writing: the inventory's identity."""
    h = hashlib.sha256()
    for block in canonical_blocks(passages):
        h.update(block)
    return h.hexdigest()


def inventory_to(passages: Iterable[Passage], out: IO[bytes]) -> tuple[str, int]:
    """The inventory's canonical lines written to ``out`` (flushed) as they are hashed: (its sha256, bytes)."""
    h = hashlib.sha256()
    size = 0
    for block in canonical_blocks(passages):
        h.update(block)
        out.write(block)
        size += len(block)
    out.flush()
    return h.hexdigest(), size


def canonical_blocks(passages: Iterable[Passage]) -> Iterator[bytes]:
    """passages.jsonl's bytes: the canonical lines in (meeting, index, id) order, a few thousand joined at a time (a
    hash update and a write per block, not per line)."""
    rows = sorted(passages, key=attrgetter("meeting", "index", "id"))
    for lo in range(0, len(rows), 4096):
        part = rows[lo:lo + 4096]
        block = encoded_block(part)
        yield block if block is not None else b"".join([p.canonical_line() for p in part])


@functools.cache
def _line_encoder() -> Any:
    import msgspec

    class Line(msgspec.Struct, kw_only=True, omit_defaults=True):
        """A passage's canonical line as msgspec writes it: the keys in sorted order, ``holds`` only when given."""
        end: float
        holds: tuple[tuple[int, int, int], ...] | None = None
        id: str
        index: int
        kind: str
        meeting: str
        speaker: str
        start: float
        text_sha256: str
        words: int

    return Line, msgspec.json.Encoder()


def encoded_block(rows: list[Passage]) -> bytes | None:
    """The canonical lines of ``rows`` (one speaker each, no text), written by msgspec's encoder in one call; None
    when that is not certain to be :meth:`Passage.canonical_line`'s bytes, and the caller writes them line by line.

    Its strings are escaped as ``json.dumps`` escapes them, character for character (tests/unit/test_canonical_lines.py
    checks every code point; a lone surrogate, which is not UTF-8, msgspec refuses, and the general path refuses it
    too); its floats are checked to be where msgspec writes them as ``repr`` does
    (``canonical.encoder_writes_repr``: the two differ in exponent form, 1e16 against 1e+16), its whole numbers to
    be ints and not bools, its strings to be strings."""
    if not rows:
        return b""
    if any(p.text is not None or p.speakers is not None for p in rows):
        return None
    line, encoder = _line_encoder()
    floats = [*map(attrgetter("start"), rows), *map(attrgetter("end"), rows)]
    ints = [*map(attrgetter("index"), rows), *map(attrgetter("words"), rows)]
    strings = [*map(attrgetter("id"), rows), *map(attrgetter("kind"), rows), *map(attrgetter("meeting"), rows),
               *map(attrgetter("speaker"), rows), *map(attrgetter("text_sha256"), rows)]
    if (set(map(type, floats)) != {float} or set(map(type, ints)) != {int} or set(map(type, strings)) != {str}
            or not canonical.encoder_writes_repr(floats)):
        return None
    try:
        return encoder.encode_lines([line(end=p.end, holds=p.holds, id=p.id, index=p.index, kind=p.kind,
                                          meeting=p.meeting, speaker=p.speaker, start=p.start,
                                          text_sha256=p.text_sha256, words=p.words) for p in rows])
    except (TypeError, ValueError, OverflowError):
        return None  # a lone surrogate (not UTF-8), a holds item of another shape: the general path refuses it


@functools.cache
def _decoder() -> Any:
    import msgspec

    return msgspec.json.Decoder(Passage), msgspec.MsgspecError


def plain_block(lines: list[bytes]) -> list[Passage | None]:
    """Per line, the passage it holds when it is of the shapes turnbench writes (its fields, one speaker, no text;
    declared words or none), read from its bytes without a dict in between and checked as
    :meth:`Passage.from_json` checks it, the whole block at a time; None for any other line, which ``from_json``
    then reads or refuses. A line with an escape is not read here: only an unescaped line shows for certain, byte
    by byte, which keys it has."""
    decoder, error = _decoder()
    try:
        found: list[Passage | None] = list(map(decoder.decode, lines))
    except error:
        found = [_decoded(decoder, error, line) for line in lines]
    whole = b"".join(lines)
    if b"\\" in whole or b'"speakers"' in whole:
        found = [None if b"\\" in line or b'"speakers"' in line else p for p, line in zip(found, lines, strict=True)]
    if b'"text"' in whole:  # an engine's own text: from_json checks it against its hash
        found = [p if p is not None and p.text is None else None for p in found]
    if b'"holds"' in whole:  # a window of a turn: its declared words checked as from_json checks them
        found = [p if p is None or p.holds is None or _holds_ok(p.holds) else None for p in found]
    if not _all_plain([p for p in found if p is not None]):
        found = [p if p is not None and _all_plain([p]) else None for p in found]
    return found


def _holds_ok(holds: tuple[tuple[int, int, int], ...]) -> bool:
    """Whether declared words already read as whole-number triples pass :func:`_holds`."""
    try:
        _holds([list(h) for h in holds])
    except (TypeError, ValueError):
        return False
    return True


def _decoded(decoder: Any, error: type[Exception], line: bytes) -> Passage | None:
    try:
        return decoder.decode(line)
    except error:
        return None


def _all_plain(ps: list[Passage]) -> bool:
    """``Passage.from_json``'s checks of plain records without text or declared words, over many at once (each a
    pass in C)."""
    shas = list(map(attrgetter("text_sha256"), ps))
    starts, ends = list(map(attrgetter("start"), ps)), list(map(attrgetter("end"), ps))
    return (all(map(str.strip, map(attrgetter("id"), ps))) and all(map(str.strip, map(attrgetter("meeting"), ps)))
            and all(map(str.strip, map(attrgetter("speaker"), ps)))
            and all(map(math.isfinite, starts)) and all(map(math.isfinite, ends))
            and all(map(operator.le, starts, ends))
            and min(map(attrgetter("index"), ps), default=0) >= 0
            and min(map(attrgetter("words"), ps), default=0) >= 0
            and set(map(len, shas)) <= {0, 64} and _all_hex("".join(shas)))


def meeting_codes(order: Sequence[Passage]) -> tuple[list[str], Any]:
    """The meetings of the passages in ``order``, sorted, and each passage's meeting as its index there (int64s)."""
    import numpy as np

    of = list(map(attrgetter("meeting"), order))
    names = sorted(set(of))
    code = {m: i for i, m in enumerate(names)}
    return names, np.fromiter(map(code.__getitem__, of), dtype=np.int64, count=len(order))


def read_passages(path: Path) -> list[Passage]:
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"{path}: passage inventory not found")
    passages = list(canonical.read_records(path, Passage.from_json, "a passage record", BadInput, fast=plain_block))
    if len(set(map(attrgetter("id"), passages))) == len(passages):
        return passages
    seen: set[str] = set()
    for p in passages:
        if p.id in seen:
            raise BadInput(f"{path}: passage id {p.id!r} appears more than once")
        seen.add(p.id)
    return passages




class _Named(msgspec.Struct, gc=False):
    id: str
    meeting: str


class PassageLines(Sequence[Passage]):
    """An inventory held as passages.jsonl's bytes, as a load wrote them and a run read them back (from a copy the
    index's marker vouches for by its sha256): read into passages only when one is asked for. Its ids and meetings,
    all a run needs of it (the names its hits may carry, the passages the index must hold), are read alone, at a
    fifth of the cost."""

    __slots__ = ("data", "_names", "_passages")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._names: tuple[list[str], list[str]] | None = None
        self._passages: tuple[Passage, ...] | None = None

    def ids_and_meetings(self) -> tuple[list[str], list[str]]:
        """Each line's id and meeting, in order; ValueError (msgspec's) when a line is no JSON object holding both
        as strings."""
        if self._names is None:
            rows = msgspec.json.Decoder(_Named).decode_lines(self.data)
            self._names = list(map(attrgetter("id"), rows)), list(map(attrgetter("meeting"), rows))
        return self._names

    def passages(self) -> tuple[Passage, ...]:
        """Every line read as :meth:`Passage.from_json` reads it (the plain ones the whole block at a time)."""
        if self._passages is None:
            lines = self.data.splitlines(keepends=True)
            self._passages = tuple(p if p is not None else Passage.from_json(canonical.parse_json(line))
                                   for p, line in zip(plain_block(lines), lines, strict=True))
        return self._passages

    def __len__(self) -> int:
        return len(self.ids_and_meetings()[0])

    def __getitem__(self, i: Any) -> Any:
        return self.passages()[i]

    def __iter__(self) -> Iterator[Passage]:
        return iter(self.passages())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PassageLines):
            return self.data == other.data
        return isinstance(other, Sequence) and not isinstance(other, (str, bytes)) and self.passages() == tuple(other)

    __hash__ = None  # type: ignore[assignment]  # equal to a tuple of the same passages, which hashes otherwise


def ids_and_meetings(passages: Sequence[Passage]) -> tuple[list[str], list[str]]:
    """The passages' ids and meetings, in order (an inventory held as its lines is not read into passages)."""
    if isinstance(passages, PassageLines):
        return passages.ids_and_meetings()
    return list(map(attrgetter("id"), passages)), list(map(attrgetter("meeting"), passages))
