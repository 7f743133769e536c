"""A passage inventory must describe the corpus it is scored against, not merely share its meeting ids.

Another corpus (or another version of this one) can reuse the same meeting ids; judging its passages against
this corpus's gold would give plausible, wrong numbers. So before judging, every passage is checked against
the meeting it names:

* its speaker speaks in that meeting, and ``0 <= start <= end <= duration`` (within ``EPSILON_SECONDS``);
* when it carries ``text``, that text (whitespace collapsed) occurs in the text of the same-speaker turns its
  time span covers, read in (start, end, index) order and joined by single spaces;
* when it carries ``text_sha256``, that hash is of the text of a run of consecutive covered turns joined by
  newlines — how turnbench cuts whole-turn passages — or of a window of one covered turn's words, ``max_words``
  at a time, as turnbench cuts a long monologue. An inventory from a chunker that forms its text another way
  gives ``text`` (checked by containment) or neither.
* when it declares the words it holds (``holds``: turn, first word, end word), each held turn is the speaker's,
  in this meeting, with that many words, and the passage's text (or its hash) is exactly those words — the words
  bind it, not its times, which for a window of a very long turn are only rounded approximations.

A mismatch is refused (``ForeignInventory``; ``StaleBinding`` when only the text differs), naming the first
offending passage and how many there are.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from turnbench.corpus.records import Meeting, Turn
from turnbench.harness.held import window_in
from turnbench.passages import Passage

EPSILON_SECONDS = 1e-6


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _covered(p: Passage, spoken: Sequence[Turn]) -> list[Turn]:
    """The same-speaker turns whose time overlaps the passage's span (a zero-length turn: inside it)."""
    out = []
    for t in spoken:
        if t.end - t.start <= EPSILON_SECONDS:
            if p.start - EPSILON_SECONDS <= t.start <= p.end + EPSILON_SECONDS:
                out.append(t)
        elif min(t.end, p.end) - max(t.start, p.start) > EPSILON_SECONDS:
            out.append(t)
    return out


def _hash_matches(p: Passage, covered: Sequence[Turn]) -> bool:
    for i in range(len(covered)):
        for j in range(i + 1, len(covered) + 1):
            if _sha("\n".join(t.text for t in covered[i:j])) == p.text_sha256:
                return True
    return any(window_in(p, t, t.text.split()) is not None for t in covered)


def problems_in(meeting: Meeting, passages: Sequence[Passage]) -> tuple[list[str], list[str]]:
    """(foreign, stale): passages of ``meeting`` whose speaker or times it cannot have, and passages whose text
    is not its text."""
    by_speaker: dict[str, list[Turn]] = {}
    for t in meeting.turns:
        by_speaker.setdefault(t.speaker, []).append(t)
    for turns in by_speaker.values():
        turns.sort(key=lambda t: (t.start, t.end, t.index))
    foreign: list[str] = []
    stale: list[str] = []
    for p in passages:
        spoken = by_speaker.get(p.speaker)
        if spoken is None:
            foreign.append(f"{p.id}: speaker {p.speaker!r} does not speak in {meeting.id}")
            continue
        if not (-EPSILON_SECONDS <= p.start <= p.end <= meeting.duration + EPSILON_SECONDS):
            foreign.append(f"{p.id}: [{p.start}, {p.end}] is not within {meeting.id}'s {meeting.duration} s")
            continue
        if p.holds is not None:
            problem = _held_problem(p, meeting)
            if problem is not None:
                (foreign if problem[0] == "foreign" else stale).append(problem[1])
            continue
        if not (p.text is not None or p.text_sha256):
            continue
        covered = _covered(p, spoken)
        if p.text is not None:
            said = " ".join(" ".join(t.text for t in covered).split())
            if " ".join(p.text.split()) not in said:
                stale.append(f"{p.id}: its text is not what {p.speaker} says in {meeting.id} at [{p.start}, {p.end}]")
        elif not _hash_matches(p, covered):
            stale.append(f"{p.id}: text_sha256 is not of what {p.speaker} says in {meeting.id} at "
                         f"[{p.start}, {p.end}]")
    return foreign, stale


def _held_problem(p: Passage, meeting: Meeting) -> tuple[str, str] | None:
    """("foreign" | "stale", why) when a passage's declared words are not in ``meeting``, or not its text."""
    turns = {t.index: t for t in meeting.turns}
    pieces = []
    for turn, first, end in p.holds or ():
        t = turns.get(turn)
        if t is None or t.speaker != p.speaker:
            return "foreign", f"{p.id}: holds turn {turn}, which {p.speaker} does not speak in {meeting.id}"
        words = t.text.split()
        if end > len(words):
            return "foreign", f"{p.id}: holds words {first}..{end} of turn {turn}, which has {len(words)}"
        pieces.append(" ".join(words[first:end]))
    text = "\n".join(pieces)
    if p.text is not None and " ".join(p.text.split()) != " ".join(text.split()):
        return "stale", f"{p.id}: its text is not the words it holds in {meeting.id}"
    if p.text is None and p.text_sha256 and _sha(text) != p.text_sha256:
        return "stale", f"{p.id}: text_sha256 is not of the words it holds in {meeting.id}"
    return None
