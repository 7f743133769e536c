"""What a passage holds: which words of which turns of its meeting (docs/design.md §6).

Relevance is keyed on turns, and a passage is judged by the words it actually holds, whatever its shape — one
speaker's turns, a window across speakers, a fixed slice of time. A passage holds, of each turn, a span of words
``[first, end)`` (words as ``str.split`` counts them), found in this order:

1. it declares them (``holds``): exactly those — the held turns must be its speakers', in this meeting, that long;
2. it carries its text: the text's words, found as one contiguous run in the turns its time window covers for its
   speakers, read in (start, end, index) order; text found nowhere there is refused (StaleBinding);
3. it carries only a text hash: the run of whole covered turns, or the window of one covered turn's words, whose
   text the hash is of (how turnbench cuts passages); a hash of nothing there is refused;
4. it carries neither: each covered turn's words apportioned by the seconds of the turn inside the passage, rounded
   to whole words — judged by its times alone, and counted as such.

The turns a passage covers are those of its speakers — one, several, or all when it says its speakers are unknown —
whose times overlap the passage's by more than ``EPSILON_SECONDS`` (a zero-length turn: when the passage's closed
interval contains its instant). A speaker the meeting lacks, or times outside it, is ForeignInventory.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterable, Sequence
from operator import attrgetter

import msgspec

from turnbench.corpus.records import Meeting, Turn
from turnbench.passages import Passage

EPSILON_SECONDS = 1e-6
_READING = attrgetter("start", "end", "index")  # reading order of turns: start, end, index
Span = tuple[int, int, int]  # (turn index, first word, end word)
DECLARED, TEXT, HASH, TIMES = "declared", "text", "text hash", "times"


class Held(msgspec.Struct, frozen=True, gc=False):
    """A passage's spans and how they were found (``DECLARED``, ``TEXT``, ``HASH`` or ``TIMES``): one per passage of an
    inventory, so a Struct the collector does not track (it holds tuples of numbers and a string)."""

    spans: tuple[Span, ...]
    how: str

    @property
    def words(self) -> int:
        return sum(b - a for _, a, b in self.spans)


def window_in(p: Passage, t: Turn, words: Sequence[str]) -> tuple[int, int] | None:
    """The word range [a, b) of turn ``t`` whose text hashes to ``p.text_sha256``, if ``p`` is a window of it.

    A window of a long turn carries times apportioned by words, so its word positions follow from the times to
    within a word either side; only those few candidates are hashed."""
    span = t.end - t.start
    if span <= 0 or not words:
        return None
    lo = round((p.start - t.start) / span * len(words))
    hi = round((p.end - t.start) / span * len(words))
    for a in range(max(0, lo - 1), min(len(words), lo + 2)):
        for b in range(max(a + 1, hi - 1), min(len(words), hi + 1) + 1):
            if _sha(" ".join(words[a:b])) == p.text_sha256:
                return a, b
    return None


def _single_spaced(text: str) -> bool:
    """Whether ``text``'s words are separated by one ASCII space each and nothing else: it is printable (no tab, no
    line end, no space but the ASCII one: Python calls every other whitespace character unprintable), with no space
    at either end and no two together."""
    return text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " "


def word_count(text: str) -> int:
    """``len(text.split())`` without the list: a single-spaced text has one word more than it has spaces."""
    if _single_spaced(text):
        return text.count(" ") + 1 if text else 0
    return len(text.split())


def words_between(text: str, first: int, end: int) -> str:
    """``" ".join(text.split()[first:end])``; a single-spaced text read from its first word to its last is itself."""
    if first == 0 and _single_spaced(text) and end > text.count(" "):
        return text
    return " ".join(text.split()[first:end])


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class MeetingTurns:
    """One meeting's turns, indexed for finding what its passages hold."""

    __slots__ = ("by_index", "by_speaker", "meeting", "starts", "longest", "count", "_words")

    def __init__(self, meeting: Meeting) -> None:
        self.meeting = meeting
        self.by_index = {t.index: t for t in meeting.turns}
        self.count = {t.index: word_count(t.text) for t in meeting.turns}  # words per turn, as str.split counts them
        self._words: dict[int, list[str]] = {}
        self.by_speaker: dict[str, list[Turn]] = {}
        for t in meeting.turns:
            self.by_speaker.setdefault(t.speaker, []).append(t)
        self.starts: dict[str, list[float]] = {}
        self.longest: dict[str, float] = {}
        for sp, spoken in self.by_speaker.items():
            spoken.sort(key=_READING)
            self.starts[sp] = [t.start for t in spoken]
            self.longest[sp] = max(t.end - t.start for t in spoken)

    def words(self, index: int) -> list[str]:
        """Turn ``index``'s words (``str.split``), split when first asked for: most passages need only the counts."""
        found = self._words.get(index)
        if found is None:
            found = self._words[index] = self.by_index[index].text.split()
        return found

    def covered(self, p: Passage) -> list[Turn]:
        """The turns of ``p``'s speakers its time window covers, in reading order (start, end, index)."""
        speakers = self.by_speaker if p.speakers == () else (p.speakers or (p.speaker,))
        out: list[Turn] = []
        ps, pe = p.start, p.end
        for sp in speakers:
            spoken = self.by_speaker.get(sp)
            if not spoken:
                continue
            # a turn can only overlap p if it starts before p ends and ends after p starts: bisect on starts, and
            # look back no further than the speaker's longest turn
            starts = self.starts[sp]
            lo = bisect.bisect_left(starts, ps - self.longest[sp] - 2 * EPSILON_SECONDS)
            hi = bisect.bisect_right(starts, pe + EPSILON_SECONDS)
            for t in spoken[lo:hi]:
                # overlap as the module says (a zero-length turn: its instant inside p's closed interval), inline:
                # this test runs for every turn near every passage
                ts, te = t.start, t.end
                if (ps - EPSILON_SECONDS <= ts <= pe + EPSILON_SECONDS if te - ts <= EPSILON_SECONDS
                        else min(te, pe) - max(ts, ps) > EPSILON_SECONDS):
                    out.append(t)
        if len(speakers) > 1:
            out.sort(key=_READING)
        return out

    def problem(self, p: Passage) -> str | None:
        """Why ``p`` cannot be a passage of this meeting (a speaker who does not speak here, times outside it)."""
        m = self.meeting
        for sp in p.speakers or (() if p.speakers == () else (p.speaker,)):
            if sp not in self.by_speaker:
                return f"{p.id}: speaker {sp!r} does not speak in {m.id}"
        if not (-EPSILON_SECONDS <= p.start <= p.end <= m.duration + EPSILON_SECONDS):
            return f"{p.id}: [{p.start}, {p.end}] is not within {m.id}'s {m.duration} s"
        return None

    def judged(self, p: Passage) -> Held | str:
        """``held(p)``, or ``"foreign:"`` and why ``p`` cannot be a passage of this meeting (``problem``)."""
        return self.judged_all((p,))[0]

    def judged_all(self, passages: Iterable[Passage]) -> list[Held | str]:
        """``judged`` of each passage. The passage turnbench cuts (one speaker, a text hash, no text or declared words:
        nearly every passage of an inventory) is found here inline, by the same rules, with what it reads held in
        locals across the meeting's passages; any other, or one whose hash is not of the whole covered run, takes the
        general path."""
        by_speaker, all_starts, longest, count = self.by_speaker, self.starts, self.longest, self.count
        eps, eps2 = EPSILON_SECONDS, 2 * EPSILON_SECONDS
        end_of_meeting = self.meeting.duration + eps
        left, right, sha256 = bisect.bisect_left, bisect.bisect_right, hashlib.sha256
        out: list[Held | str] = []
        for p in passages:
            if p.speakers is None and p.holds is None and p.text is None and p.text_sha256:
                sp, ps, pe = p.speaker, p.start, p.end
                spoken = by_speaker.get(sp)
                if spoken is not None and -eps <= ps <= pe <= end_of_meeting:
                    starts = all_starts[sp]
                    covered = [t for t in spoken[left(starts, ps - longest[sp] - eps2): right(starts, pe + eps)]
                               if (ps - eps <= t.start <= pe + eps
                                   if t.end - t.start <= eps  # covered()'s overlap, without its calls
                                   else (t.end if t.end < pe else pe) - (t.start if t.start > ps else ps) > eps)]
                    if len(covered) == 1:  # the passage of one turn: most of an inventory
                        t = covered[0]
                        if sha256(t.text.encode("utf-8")).hexdigest() == p.text_sha256:
                            out.append(Held(((t.index, 0, count[t.index]),), HASH))
                            continue
                    elif sha256("\n".join([t.text for t in covered]).encode("utf-8")).hexdigest() == p.text_sha256:
                        out.append(Held(tuple([(t.index, 0, count[t.index]) for t in covered]), HASH))
                        continue
                    out.append(self._by_hash(p, covered))
                    continue
            problem = self.problem(p)
            out.append(self.held(p) if problem is None else f"foreign:{problem}")
        return out

    def held(self, p: Passage) -> Held | str:
        """What ``p`` holds, or why its text (or hash, or declared words) is not this meeting's text."""
        if p.holds is not None:
            return self._declared(p)
        covered = self.covered(p)
        if p.text is not None:
            return self._by_text(p, covered)
        if p.text_sha256:
            return self._by_hash(p, covered)
        return Held(tuple(s for t in covered if (s := self._by_time(p, t)) is not None), TIMES)

    def _declared(self, p: Passage) -> Held | str:
        allowed = None if p.speakers == () else set(p.speakers or (p.speaker,))
        pieces = []
        for turn, first, end in p.holds or ():
            t = self.by_index.get(turn)
            if t is None or (allowed is not None and t.speaker not in allowed):
                return f"foreign:{p.id}: holds turn {turn}, which its speakers do not speak in {self.meeting.id}"
            if end > self.count[turn]:
                return f"foreign:{p.id}: holds words {first}..{end} of turn {turn}, which has {self.count[turn]}"
            pieces.append(" ".join(self.words(turn)[first:end]))
        text = "\n".join(pieces)
        if p.text is not None and " ".join(p.text.split()) != " ".join(text.split()):
            return f"stale:{p.id}: its text is not the words it holds in {self.meeting.id}"
        if p.text is None and p.text_sha256 and _sha(text) != p.text_sha256:
            return f"stale:{p.id}: text_sha256 is not of the words it holds in {self.meeting.id}"
        return Held(tuple(p.holds or ()), DECLARED)

    def _by_text(self, p: Passage, covered: Sequence[Turn]) -> Held | str:
        words = p.text.split() if p.text is not None else []
        if not words:
            return Held((), TEXT)
        flat = [(t.index, i) for t in covered for i in range(self.count[t.index])]
        said = [w for t in covered for w in self.words(t.index)]
        at = _find(said, words)
        if at is None:
            return f"stale:{p.id}: its text is not what {_voices(p)} say in {self.meeting.id} at [{p.start}, {p.end}]"
        return Held(_runs(flat[at:at + len(words)]), TEXT)

    def _by_hash(self, p: Passage, covered: Sequence[Turn]) -> Held | str:
        n = len(covered)
        count = self.count
        # the whole covered run first (how turnbench cuts whole-turn passages: nearly always the one), then shorter
        if _sha("\n".join([t.text for t in covered])) == p.text_sha256:
            return Held(tuple([(t.index, 0, count[t.index]) for t in covered]), HASH)
        for i, j in ((a, b) for a in range(n) for b in range(n, a, -1) if (a, b) != (0, n)):
            if _sha("\n".join([t.text for t in covered[i:j]])) == p.text_sha256:
                return Held(tuple([(t.index, 0, count[t.index]) for t in covered[i:j]]), HASH)
        for t in covered:
            window = window_in(p, t, self.words(t.index))
            if window is not None:
                return Held(((t.index, *window),), HASH)
        return f"stale:{p.id}: text_sha256 is not of what {_voices(p)} say in {self.meeting.id} at [{p.start}, {p.end}]"

    def _by_time(self, p: Passage, t: Turn) -> Span | None:
        n = self.count[t.index]
        duration = t.end - t.start
        if duration <= EPSILON_SECONDS:
            return (t.index, 0, n) if n else None
        a = round((max(p.start, t.start) - t.start) / duration * n)
        b = round((min(p.end, t.end) - t.start) / duration * n)
        return (t.index, a, b) if b > a else None


def _voices(p: Passage) -> str:
    if p.speakers == ():
        return "its speakers"
    return ", ".join(p.speakers) if p.speakers else p.speaker


def _find(haystack: Sequence[str], needle: Sequence[str]) -> int | None:
    """The first position of ``needle`` as a contiguous run in ``haystack`` (word lists), or None."""
    first = needle[0]
    for i in range(len(haystack) - len(needle) + 1):
        if haystack[i] == first and list(haystack[i:i + len(needle)]) == list(needle):
            return i
    return None


def _runs(positions: Sequence[tuple[int, int]]) -> tuple[Span, ...]:
    """(turn, word) positions in reading order, as one span per turn."""
    out: list[Span] = []
    for turn, i in positions:
        if out and out[-1][0] == turn and out[-1][2] == i:
            out[-1] = (turn, out[-1][1], i + 1)
        else:
            out.append((turn, i, i + 1))
    return tuple(out)
