"""Rendering one meeting's transcript from its plan: a pure function of the MeetingPlan.

A meeting is a shuffled sequence of blocks: planted turns (one sentence of ground truth inside a
short turn, or a lookup's setup and answer turns), long monologues with nothing planted, and bulk
turns and backchannels. Times are integer centiseconds until the end, so rounding to two decimals
never reorders turns.
"""

from __future__ import annotations

import random
import re
from typing import NamedTuple

from turnbench import canonical
from turnbench.corpus.records import Meeting, Turn
from turnbench.generator import vocab
from turnbench.generator.contracts import MAX_PLANTED_TURN_WORDS, LocatedFact
from turnbench.generator.plan import MeetingPlan, Plant

_SLOT = re.compile(r"\{([a-z])\}")
_SLOT_LISTS = {"s": vocab.SUBJECTS, "m": vocab.MODALS, "v": vocab.VERBS, "p": vocab.VERBS_PAST,
               "a": vocab.ADJECTIVES, "t": vocab.TIMES, "r": vocab.PREPS, "o": vocab.OPENERS,
               "k": vocab.NUMBERS}


def _compile(template: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    parts = _SLOT.split(template)
    return tuple(parts[0::2]), tuple(parts[1::2])


_TEMPLATES = tuple(_compile(t) for t in vocab.BULK_TEMPLATES)
# Near-duplicate sessions: this share of bulk sentences comes from a per-series bank of this size.
BANK_SHARE = 0.6
BANK_SIZE = 150


class _Bulk:
    """Filler sentences from the bulk lists, nouns leaning towards the meeting's agenda topics."""

    def __init__(self, rng: random.Random, topic_words: tuple[str, ...], bank: tuple[str, ...] = ()):
        self.rng = rng
        lists = dict(_SLOT_LISTS)
        lists["n"] = vocab.NOUNS + topic_words * 3
        self.lists = lists
        self.bank = bank

    def sentence(self) -> tuple[str, int]:
        if self.bank and self.rng.random() < BANK_SHARE:
            text = self.rng.choice(self.bank)
            return text, text.count(" ") + 1
        choice = self.rng.choice
        literals, slots = choice(_TEMPLATES)
        lists = self.lists
        out = [literals[0]]
        for lit, slot in zip(literals[1:], slots, strict=True):
            out.append(choice(lists[slot]))
            out.append(lit)
        text = "".join(out)
        if self.rng.random() < 0.12:
            # a filler opens the sentence, so what follows loses its capital (but "I" keeps its own)
            text = choice(vocab.FILLERS) + (text if text.startswith("I ") else text[0].lower() + text[1:])
        else:
            text = text[0].upper() + text[1:]
        return text, text.count(" ") + 1

    def words(self, target: int, limit: int | None = None) -> tuple[list[str], int]:
        """Sentences until ``target`` words are reached, never passing ``limit`` when one is given."""
        sentences: list[str] = []
        n = 0
        while n < target:
            s, w = self.sentence()
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


def _planted_turn(bulk: _Bulk, rng: random.Random, sentence: str) -> tuple[str, int]:
    own = sentence.count(" ") + 1
    room = MAX_PLANTED_TURN_WORDS - own
    before, nb = bulk.words(rng.randint(0, 45), limit=room // 2)
    after, na = bulk.words(rng.randint(0, 45), limit=room - nb)
    return " ".join([*before, sentence, *after]), own + nb + na


def render_meeting(mp: MeetingPlan) -> tuple[bytes, list[LocatedFact], dict[str, int]]:
    """The meeting's canonical JSON line, the facts it planted, and its turn and word counts."""
    rng = random.Random(mp.render_seed)
    bank: tuple[str, ...] = ()
    if mp.bank_seed:
        # the series' recurring talk: identical sentences in every session that repeats the template
        series_bulk = _Bulk(random.Random(mp.bank_seed), mp.topic_words)
        bank = tuple(series_bulk.sentence()[0] for _ in range(BANK_SIZE))
    bulk = _Bulk(rng, mp.topic_words, bank)
    # a block's turns stay together when blocks are shuffled (a lookup's setup, backchannels, answer)
    blocks: list[list[_Draft]] = []
    used = 0
    for plant in mp.plants:
        if plant.type == "lookup":
            setup, answer = plant.sentences
            s_text, s_w = _planted_turn(bulk, rng, setup)
            a_text, a_w = _planted_turn(bulk, rng, answer)
            asker = mp.speakers[rng.randrange(len(mp.speakers))]
            answerer = rng.choice([p for p in mp.speakers if p != asker])
            block = [_Draft(s_text, s_w, "lookup_setup", asker, plant)]
            for _ in range(rng.choice((0, 0, 1, 1, 2))):
                block.append(_Draft(rng.choice(vocab.BACKCHANNELS), 1, "backchannel", None, None))
            block.append(_Draft(a_text, a_w, "lookup_answer", answerer, plant))
            blocks.append(block)
            used += s_w + a_w
        else:
            text, w = _planted_turn(bulk, rng, plant.sentences[0])
            blocks.append([_Draft(text, w, plant.type, None, plant)])
            used += w
    n_mono = max(1, mp.words // 2500) if mp.words >= 800 else 0
    for _ in range(n_mono):
        sentences, w = bulk.words(rng.randint(410, 560))
        blocks.append([_Draft(" ".join(sentences), w, "monologue", None, None)])
        used += w
    while used < mp.words:
        r = rng.random()
        if r < 0.18:
            blocks.append([_Draft(rng.choice(vocab.BACKCHANNELS), 1, "backchannel", None, None)])
            used += 1
            continue
        target = rng.randint(6, 25) if r < 0.65 else rng.randint(25, 80) if r < 0.93 else rng.randint(80, 180)
        sentences, w = bulk.words(target)
        blocks.append([_Draft(" ".join(sentences), w, "bulk", None, None)])
        used += w
    rng.shuffle(blocks)
    opening, w = bulk.words(rng.randint(12, 40))
    drafts = [_Draft(" ".join(opening), w, "bulk", mp.speakers[0], None)]
    for block in blocks:
        drafts.extend(block)

    # speakers: constrained turns keep theirs; the rest go first to whoever has not spoken yet
    spoken_constrained = {d.speaker for d in drafts if d.speaker is not None}
    unspoken = [p for p in mp.speakers[1:] if p not in spoken_constrained]
    prev = mp.speakers[0]
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

    # times in centiseconds: overlaps, shared starts and gaps
    out_turns: list[Turn] = []
    facts: list[LocatedFact] = []
    cursor = 0
    prev_start = 0
    words_total = 0
    for index, (text, w, role, speaker, carried) in enumerate(turns):
        dur = int((w / rng.uniform(2.2, 3.2) + 0.4) * 100)
        if index == 0:
            start = rng.randint(30, 300)
        else:
            r = rng.random()
            if role == "backchannel" and r < 0.35:
                start = prev_start + int(rng.random() * max(0, cursor - prev_start))
            elif r < (0.45 if role == "backchannel" else 0.04):
                start = prev_start
            elif r < (0.45 if role == "backchannel" else 0.04) + 0.08:
                start = max(prev_start, cursor - rng.randint(20, 120))
            else:
                start = cursor + rng.randint(5, 120)
        end = start + dur
        cursor = max(cursor, end)
        prev_start = start
        out_turns.append(Turn(index, speaker, start / 100, end / 100, text))
        words_total += len(text.split())
        if carried is not None:
            ptype = role if carried.type == "lookup" else carried.type
            sentence = carried.sentences[1] if role == "lookup_answer" else carried.sentences[0]
            facts.append({"type": ptype, "meeting": mp.id, "turn": index, "speaker": speaker,
                          "text": sentence, **carried.fact})
    duration = (cursor + rng.randint(100, 500)) / 100
    meeting = Meeting(
        id=mp.id, title=mp.title, recorded_date=mp.date, duration=duration, timing="synthetic",
        speakers=tuple(sorted({t.speaker for t in out_turns})), turns=tuple(out_turns),
        attendees=mp.attendees, agenda=mp.agenda,
        meta={"team": mp.team, "kind": mp.kind, "series": mp.series, "session": str(mp.session),
              "near_duplicate": "true" if mp.near_duplicate else "false"},
    )
    return canonical.dumps_line(meeting.to_json()), facts, {"turns": len(out_turns), "words": words_total}
