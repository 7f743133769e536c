"""Speaker-turn passages (chunks) cut from one meeting's segments — a pure function (docs/design.md §6, §9).

The rule, in order:

1. Segments are read in the total order (start, end, turn index), so the cut cannot change between
   loads even where turns share a start time.
2. Maximal runs of consecutive same-speaker segments are formed in that order.
3. Within a run, WHOLE segments are packed greedily into sub-passages of at most ``max_words`` words.
   Only a single segment longer than ``max_words`` is cut, into word windows of ``max_words`` words
   (the last one shorter), each window standing alone; its times are apportioned by words, and it records the
   words it holds (``Passage.holds``: turn, first word, end word), which is what binds it to the turn.

4. ``overlap`` (default 0) lets neighbouring sub-passages of one speaker's run share words, as a chunk sweep asks:
   a sub-passage cut because the next segment did not fit begins with the longest run of the previous one's last
   whole segments that holds at most ``overlap`` words and leaves room for that next segment; a monologue's windows
   step by ``max_words - overlap`` words. Nothing is shared across a change of speaker.

Consequence (with no overlap, the default every load uses unless told): any phrase inside a turn of at most
``max_words`` words lies inside exactly one passage. A passage's text is a tuple of its segments' texts (or one window);
the index stores it as an array, so a phrase query cannot match across two segments (OpenSearch puts a
position gap between array values).

Passage ids are ``{meeting_id}:{n:05d}`` with ``n`` the 0-based passage index in the meeting, so they
sort in meeting order. A passage starts at its first segment's start and ends at the latest end among
its segments (the last segment's end except where a short turn is nested inside a longer one).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from turnbench import canonical
from turnbench.corpus.records import Turn
from turnbench.errors import BadInput
from turnbench.passages import Passage

DEFAULT_MAX_WORDS = 200
PASSAGE_KIND = "turn"
# Window boundaries inside a split monologue are rounded to the millisecond so they print the same everywhere.
TIME_DECIMALS = 3


@dataclass(frozen=True)
class Chunk:
    """A passage with the text and turns it was cut from: what gets indexed."""

    passage: Passage
    texts: tuple[str, ...]  # one per segment, or the one window of a split segment
    turns: tuple[int, ...]  # turn indices the passage draws on, in reading order

    @property
    def text(self) -> str:
        return "\n".join(self.texts)


def passage_id(meeting_id: str, n: int) -> str:
    return f"{meeting_id}:{n:05d}"


def reading_order(segments: Iterable[Turn]) -> list[Turn]:
    """The total order every stage reads segments in: (start, end, turn index)."""
    return sorted(segments, key=lambda t: (t.start, t.end, t.index))


def text_sha256(texts: Sequence[str]) -> str:
    return canonical.sha256_bytes("\n".join(texts).encode("utf-8"))


def check_cut(max_words: int, overlap: int = 0) -> None:
    """Refuse (BadInput) a size that is not a positive whole number, or an overlap not in [0, max_words)."""
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
        raise BadInput(f"max_words must be a positive integer, not {max_words!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < max_words:
        raise BadInput(f"overlap must be a whole number of words from 0 to max_words - 1 ({max_words - 1}), "
                       f"not {overlap!r}")


def chunk_meeting(meeting_id: str, segments: Iterable[Turn], *, max_words: int = DEFAULT_MAX_WORDS,
                  overlap: int = 0) -> list[Chunk]:
    """Cut one meeting's segments into passages (see the module docstring for the rule)."""
    check_cut(max_words, overlap)
    chunks: list[Chunk] = []

    def emit(speaker: str, start: float, end: float, texts: tuple[str, ...], turns: tuple[int, ...],
             words: int, holds: tuple[tuple[int, int, int], ...] | None = None) -> None:
        n = len(chunks)
        p = Passage(
            # speaker names repeat across a million passages: one string each, not one per passage
            id=passage_id(meeting_id, n), meeting=meeting_id, speaker=sys.intern(speaker), start=start, end=end,
            index=n,
            kind=PASSAGE_KIND, text_sha256=text_sha256(texts), words=words, holds=holds,
        )
        chunks.append(Chunk(p, texts, turns))

    pending: list[Turn] = []  # whole segments of the current sub-passage
    pending_words = 0

    def flush() -> None:
        nonlocal pending, pending_words
        if pending:
            emit(pending[0].speaker, pending[0].start, max(t.end for t in pending),
                 tuple(t.text for t in pending), tuple(t.index for t in pending), pending_words)
        pending, pending_words = [], 0

    def carried(previous: list[Turn], room: int) -> list[Turn]:
        """The longest run of ``previous``'s last segments holding at most ``min(overlap, room)`` words."""
        kept: list[Turn] = []
        total = 0
        for t in reversed(previous):
            n = len(t.text.split())
            if total + n > min(overlap, room):
                break
            kept.insert(0, t)
            total += n
        return kept

    for seg in reading_order(segments):
        words = seg.text.split()
        if pending and (seg.speaker != pending[0].speaker or pending_words + len(words) > max_words):
            same_speaker = seg.speaker == pending[0].speaker and len(words) <= max_words
            previous = pending
            flush()
            if overlap and same_speaker:
                pending = carried(previous, max_words - len(words))
                pending_words = sum(len(t.text.split()) for t in pending)
        if len(words) <= max_words:
            pending.append(seg)
            pending_words += len(words)
            continue
        # a monologue longer than a passage: word windows, each alone, times apportioned by words
        flush()
        n_words = len(words)
        span = seg.end - seg.start
        for lo in range(0, n_words, max_words - overlap):
            if lo and lo + overlap >= n_words:
                break  # the previous window already reached the end
            hi = min(lo + max_words, n_words)
            w_start = seg.start if lo == 0 else round(seg.start + span * lo / n_words, TIME_DECIMALS)
            w_end = seg.end if hi == n_words else round(seg.start + span * hi / n_words, TIME_DECIMALS)
            emit(seg.speaker, w_start, w_end, (" ".join(words[lo:hi]),), (seg.index,), hi - lo, ((seg.index, lo, hi),))
    flush()
    return chunks
