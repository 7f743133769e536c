"""Rendering one meeting's transcript from its plan: a pure function of the MeetingPlan.

A meeting is an opening turn, a shuffled sequence of blocks and perhaps a closing turn. Blocks are
planted turns (one sentence of ground truth inside a short turn, or a lookup's setup and answer turns),
long monologues with nothing planted, and bulk turns, fragments and backchannels, in the proportions of
the meeting's register (generator/register.py). A series mention planted at the opening or the closing
goes into the first or the last turn, spoken by whoever opens the meeting.

Times are integer centiseconds until the end, so rounding to two decimals never reorders turns. Different
speakers overlap, backchannels start inside another's turn, turns share a start time; a speaker never
overlaps themselves: each turn starts no earlier than its speaker's previous turn ended, so a passage cut
from one speaker's turns never shares time with another turn of the same speaker (DESIGN §6 would grade it
as covering that turn).
"""

from __future__ import annotations

import random
import re
from typing import NamedTuple

from turnbench import canonical
from turnbench.corpus.records import Meeting, Turn
from turnbench.generator import vocab
from turnbench.generator.contracts import MAX_PLANTED_TURN_WORDS, LocatedFact, tokens
from turnbench.generator.planting import CLOSING, OPENING, MeetingPlan, Plant
from turnbench.generator.register import REGISTERS, Register

_SLOT = re.compile(r"\{([a-z])\}")
_SLOT_LISTS = {"s": vocab.SUBJECTS, "m": vocab.MODALS, "v": vocab.VERBS, "p": vocab.VERBS_PAST,
               "a": vocab.ADJECTIVES, "t": vocab.TIMES, "r": vocab.PREPS, "o": vocab.OPENERS,
               "k": vocab.NUMBERS}


def _compile(template: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    parts = _SLOT.split(template)
    return tuple(parts[0::2]), tuple(parts[1::2])


_TEMPLATES = tuple(_compile(t) for t in vocab.BULK_TEMPLATES)
_FRAGMENTS = tuple(_compile(t) for t in vocab.FRAGMENTS)
# Near-duplicate sessions: this share of bulk sentences comes from a per-series bank of this size.
BANK_SHARE = 0.6
BANK_SIZE = 150
# How often a sentence that uses an avoided word is drawn again before the talk stops short instead.
MAX_REDRAWS = 50


class _Bulk:
    """Filler sentences from the bulk lists, nouns leaning towards the meeting's agenda topics."""

    def __init__(self, rng: random.Random, topic_words: tuple[str, ...], bank: tuple[str, ...] = ()):
        self.rng = rng
        lists = dict(_SLOT_LISTS)
        lists["n"] = vocab.NOUNS + topic_words * 3
        self.lists = lists
        self.bank = bank

    def _fill(self, template: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
        literals, slots = template
        choice = self.rng.choice
        out = [literals[0]]
        for lit, slot in zip(literals[1:], slots, strict=True):
            out.append(choice(self.lists[slot]))
            out.append(lit)
        return "".join(out)

    def fragment(self) -> tuple[str, int]:
        """A short fragment of interactive talk."""
        text = self._fill(self.rng.choice(_FRAGMENTS))
        text = text[0].upper() + text[1:]
        return text, text.count(" ") + 1

    def sentence(self) -> tuple[str, int]:
        if self.bank and self.rng.random() < BANK_SHARE:
            text = self.rng.choice(self.bank)
            return text, text.count(" ") + 1
        choice = self.rng.choice
        text = self._fill(choice(_TEMPLATES))
        if self.rng.random() < 0.12:
            # a filler opens the sentence, so what follows loses its capital (but "I" keeps its own)
            text = choice(vocab.FILLERS) + (text if text.startswith("I ") else text[0].lower() + text[1:])
        else:
            text = text[0].upper() + text[1:]
        return text, text.count(" ") + 1

    def words(self, target: int, limit: int | None = None,
              avoid: frozenset[str] = frozenset()) -> tuple[list[str], int]:
        """Sentences until ``target`` words are reached, never passing ``limit`` when one is given and never
        using a word of ``avoid``."""
        sentences: list[str] = []
        n = 0
        redraws = 0
        while n < target:
            s, w = self.sentence()
            if avoid and not avoid.isdisjoint(tokens(s)):
                redraws += 1
                if redraws > MAX_REDRAWS:
                    break
                continue
            if limit is not None and n + w > limit:
                break
            sentences.append(s)
            n += w
        return sentences, n


class _Draft(NamedTuple):
    """A turn before times: its speaker is None until one is assigned; plant is what it carries."""

    text: str
    words: int
    role: str  # bulk | monologue | backchannel | lookup_setup | lookup_answer | a plant type
    speaker: str | None
    plant: Plant | None


class _Spoken(NamedTuple):
    text: str
    words: int
    role: str
    speaker: str
    plant: Plant | None


def _planted_turn(bulk: _Bulk, rng: random.Random, sentence: str, padding: int, *, before: bool = True,
                  after: bool = True, avoid: frozenset[str] = frozenset()) -> tuple[str, int]:
    """The sentence with up to ``padding`` words of talk before and after it, within the planted-turn limit."""
    own = sentence.count(" ") + 1
    room = MAX_PLANTED_TURN_WORDS - own
    pre, nb = bulk.words(rng.randint(0, padding), limit=room // 2, avoid=avoid) if before else ([], 0)
    post, na = bulk.words(rng.randint(0, padding), limit=room - nb, avoid=avoid) if after else ([], 0)
    return " ".join([*pre, sentence, *post]), own + nb + na


def _bulk_block(bulk: _Bulk, rng: random.Random, voice: Register) -> _Draft:
    """One unplanted block: a backchannel, a fragment or a turn of talk, in the register's proportions."""
    r = rng.random()
    if r < voice.backchannel_rate:
        return _Draft(rng.choice(vocab.BACKCHANNELS), 1, "backchannel", None, None)
    r -= voice.backchannel_rate
    if r < voice.fragment_rate:
        text, w = bulk.fragment()
        return _Draft(text, w, "fragment", None, None)
    r -= voice.fragment_rate
    band = voice.turns[-1]
    for b in voice.turns:
        if r < b.weight:
            band = b
            break
        r -= b.weight
    sentences, w = bulk.words(rng.randint(band.lo, band.hi))
    return _Draft(" ".join(sentences), w, "bulk", None, None)


def render_meeting(mp: MeetingPlan) -> tuple[bytes, list[LocatedFact], dict[str, int]]:
    """The meeting's canonical JSON line, the facts it planted, and its turn and word counts."""
    rng = random.Random(mp.render_seed)
    voice = REGISTERS[mp.register]
    bank: tuple[str, ...] = ()
    if mp.bank_seed:
        # the series' recurring talk: identical sentences in every session that repeats the template
        series_bulk = _Bulk(random.Random(mp.bank_seed), mp.topic_words)
        bank = tuple(series_bulk.sentence()[0] for _ in range(BANK_SIZE))
    bulk = _Bulk(rng, mp.topic_words, bank)
    drafts, closing = _drafts(mp, rng, voice, bulk)
    turns = _speak(mp, drafts, closing, rng, bulk)
    out_turns, facts, duration = _timed(mp, turns, rng, voice)
    meeting = Meeting(
        id=mp.id, title=mp.title, recorded_date=mp.date, duration=duration, timing="synthetic",
        speakers=tuple(sorted({t.speaker for t in out_turns})), turns=tuple(out_turns),
        attendees=mp.attendees, agenda=mp.agenda,
        meta={"team": mp.team, "kind": mp.kind, "series": mp.series, "session": str(mp.session),
              "near_duplicate": "true" if mp.near_duplicate else "false"},
    )
    words_total = sum(len(t.text.split()) for t in out_turns)
    return canonical.dumps_line(meeting.to_json()), facts, {"turns": len(out_turns), "words": words_total}


def _drafts(mp: MeetingPlan, rng: random.Random, voice: Register, bulk: _Bulk
            ) -> tuple[list[_Draft], _Draft | None]:
    """The meeting's turns before speakers and times, in order (opening first), and its closing turn if any. The
    draws from ``rng`` are the meeting's bytes: their order is fixed."""
    opener = mp.speakers[0]
    # a block's turns stay together when blocks are shuffled (a lookup's setup, backchannels, answer)
    blocks: list[list[_Draft]] = []
    opening: _Draft | None = None
    closing: _Draft | None = None
    used = 0
    for plant in mp.plants:
        if plant.type == "lookup":
            setup, answer = plant.sentences
            s_text, s_w = _planted_turn(bulk, rng, setup, voice.padding)
            a_text, a_w = _planted_turn(bulk, rng, answer, voice.padding, avoid=plant.avoid)
            asker = mp.speakers[rng.randrange(len(mp.speakers))]
            answerer = rng.choice([p for p in mp.speakers if p != asker])
            block = [_Draft(s_text, s_w, "lookup_setup", asker, plant)]
            for _ in range(rng.choice(voice.answer_backchannels)):
                block.append(_Draft(rng.choice(vocab.BACKCHANNELS), 1, "backchannel", None, None))
            block.append(_Draft(a_text, a_w, "lookup_answer", answerer, plant))
            blocks.append(block)
            used += s_w + a_w
        elif plant.position == OPENING:
            text, w = _planted_turn(bulk, rng, plant.sentences[0], 30, before=False)
            opening = _Draft(text, w, plant.type, opener, plant)
            used += w
        elif plant.position == CLOSING:
            text, w = _planted_turn(bulk, rng, plant.sentences[0], 20, after=False)
            closing = _Draft(text, w, plant.type, opener, plant)
            used += w
        else:
            text, w = _planted_turn(bulk, rng, plant.sentences[0], voice.padding, avoid=plant.avoid)
            blocks.append([_Draft(text, w, plant.type, None, plant)])
            used += w
    n_mono = max(1, mp.words // voice.words_per_monologue) if voice.words_per_monologue and mp.words >= 800 else 0
    for _ in range(n_mono):
        sentences, w = bulk.words(rng.randint(410, 560))
        blocks.append([_Draft(" ".join(sentences), w, "monologue", None, None)])
        used += w
    while used < mp.words:
        draft = _bulk_block(bulk, rng, voice)
        blocks.append([draft])
        used += 1 if draft.role == "backchannel" else draft.words
    rng.shuffle(blocks)
    if opening is None:
        sentences, w = bulk.words(rng.randint(12, 40))
        opening = _Draft(" ".join(sentences), w, "bulk", opener, None)
    drafts = [opening]
    for block in blocks:
        drafts.extend(block)
    return drafts, closing


def _speak(mp: MeetingPlan, drafts: list[_Draft], closing: _Draft | None, rng: random.Random, bulk: _Bulk
           ) -> list[_Spoken]:
    """Speakers for the drafts: constrained turns keep theirs; the rest go first to whoever has not spoken yet."""
    opener = mp.speakers[0]
    spoken_constrained = {d.speaker for d in (*drafts, closing) if d is not None and d.speaker is not None}
    unspoken = [p for p in mp.speakers[1:] if p not in spoken_constrained]
    prev = opener
    turns: list[_Spoken] = []
    for d in drafts:
        speaker = d.speaker
        if speaker is None:
            if unspoken and unspoken[0] != prev:
                speaker = unspoken.pop(0)
            else:
                others = [p for p in mp.speakers if p != prev]
                speaker = others[rng.randrange(len(others))]
        turns.append(_Spoken(d.text, d.words, d.role, speaker, d.plant))
        prev = speaker
    # very short meetings can run out of free turns: whoever has not spoken closes the meeting
    for p in unspoken:
        sentences, w = bulk.words(rng.randint(4, 12))
        turns.append(_Spoken(" ".join(sentences), w, "bulk", p, None))
    if closing is not None:
        turns.append(_Spoken(closing.text, closing.words, closing.role, opener, closing.plant))
    return turns


def _timed(mp: MeetingPlan, turns: list[_Spoken], rng: random.Random,
           voice: Register) -> tuple[list[Turn], list[LocatedFact], float]:
    """Times in centiseconds (overlaps, shared starts and gaps, never a speaker over themselves), the facts
    located at their turns, and the meeting's duration."""
    out_turns: list[Turn] = []
    facts: list[LocatedFact] = []
    free: dict[str, int] = {}  # speaker -> when their last turn ended
    cursor = 0
    prev_start = 0
    shared_backchannel = voice.backchannel_inside_rate + 0.10
    for index, (text, w, role, speaker, carried) in enumerate(turns):
        dur = int((w / rng.uniform(2.2, 3.2) + 0.4) * 100)
        if index == 0:
            start = rng.randint(30, 300)
        else:
            r = rng.random()
            shared = shared_backchannel if role == "backchannel" else voice.shared_start_rate
            if role == "backchannel" and r < voice.backchannel_inside_rate:
                start = prev_start + int(rng.random() * max(0, cursor - prev_start))
            elif r < shared:
                start = prev_start
            elif r < shared + voice.overlap_rate:
                start = max(prev_start, cursor - rng.randint(20, 120))
            else:
                start = cursor + rng.randint(5, 120)
        start = max(start, free.get(speaker, 0))
        end = start + dur
        free[speaker] = end
        cursor = max(cursor, end)
        prev_start = start
        out_turns.append(Turn(index, speaker, start / 100, end / 100, text))
        if carried is not None:
            ptype = role if carried.type == "lookup" else carried.type
            sentence = carried.sentences[1] if role == "lookup_answer" else carried.sentences[0]
            facts.append({"type": ptype, "meeting": mp.id, "turn": index, "speaker": speaker,
                          "text": sentence, **carried.fact})
    return out_turns, facts, (cursor + rng.randint(100, 500)) / 100
