"""Writing one meeting's transcript from its plan: a pure function of the MeetingPlan.

A meeting is an opening turn, a shuffled sequence of blocks and perhaps a closing turn. Blocks are
planted turns (one sentence of ground truth inside a short turn, or a lookup's setup and answer turns),
long monologues with nothing planted, and bulk turns, fragments and backchannels, in the proportions of
the meeting's register (generator/register.py). A series mention planted at the opening or the closing
goes into the first or the last turn, spoken by whoever opens the meeting.

Times are integer centiseconds until the end, so rounding to two decimals never reorders turns. Different
speakers overlap, backchannels start inside another's turn, turns share a start time; a speaker never
overlaps themselves: each turn starts no earlier than its speaker's previous turn ended, so a passage cut
from one speaker's turns never shares time with another turn of the same speaker (docs/design.md §6 would grade it
as covering that turn).
"""

from __future__ import annotations

import dataclasses
import random
import re
from typing import NamedTuple

from turnbench import canonical
from turnbench.corpus.records import Meeting, Turn
from turnbench.generator import talk, wordlists
from turnbench.generator.contracts import MAX_PLANTED_TURN_WORDS, LocatedFact, tokens
from turnbench.generator.noise import VOCALSOUND, Asr, disfluent, misrecognised
from turnbench.generator.planting import CLOSING, OPENING, Discussion, MeetingPlan, Plant
from turnbench.generator.register import REGISTERS, Register

_SLOT = re.compile(r"\{([a-z])\}")
_SLOT_LISTS = {"s": wordlists.SUBJECTS, "m": wordlists.MODALS, "v": wordlists.VERBS, "p": wordlists.VERBS_PAST,
               "a": wordlists.ADJECTIVES, "t": wordlists.TIMES, "r": wordlists.PREPS, "o": wordlists.OPENERS,
               "k": wordlists.NUMBERS}


def _compile(template: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    parts = _SLOT.split(template)
    return tuple(parts[0::2]), tuple(parts[1::2])


_TEMPLATES = tuple(_compile(t) for t in wordlists.BULK_TEMPLATES)
_FRAGMENTS = tuple(_compile(t) for t in wordlists.FRAGMENTS)
# Near-duplicate sessions: this share of bulk sentences comes from a per-series bank of this size.
BANK_SHARE = 0.6
BANK_SIZE = 150
# How often a sentence that uses an avoided word is drawn again before the talk stops short instead.
MAX_REDRAWS = 50
# While a meeting has words to fill, this share of the blocks is one of its background discussions (until they run out).
BACKGROUND_SHARE = 0.35


class _Bulk:
    """Filler sentences from the bulk lists, nouns leaning towards the meeting's agenda topics; free talk said as
    the register says it (disfluencies) and, with the ASR preset, as a recogniser writes it."""

    def __init__(self, rng: random.Random, topic_words: tuple[str, ...], bank: tuple[str, ...] = (),
                 disfluency: float = 0.0, asr: Asr | None = None, markers: float = 0.0):
        self.rng = rng
        lists = dict(_SLOT_LISTS)
        lists["n"] = wordlists.NOUNS + topic_words * 3
        self.lists = lists
        self.bank = bank
        self.disfluency = disfluency
        self.asr = asr
        self.markers = markers

    def free(self, text: str) -> str:
        """A sentence of free talk as it is spoken (and recognised)."""
        text = disfluent(text, self.rng, self.disfluency, self.markers)
        return misrecognised(text, self.rng, self.asr) if self.asr is not None else text

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
        text = self._fill(self.rng.choice(_TEMPLATES))
        text = self.free(text[0].upper() + text[1:])
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
                  after: bool = True, avoid: frozenset[str] = frozenset(), plant: Plant | None = None,
                  voice: Register | None = None) -> tuple[str, int]:
    """The sentence with talk before and after it, within the planted-turn limit: talk about the plant's subject and
    topic when it has one (evidence in context), else up to ``padding`` words of bulk talk."""
    own = sentence.count(" ") + 1
    room = MAX_PLANTED_TURN_WORDS - own
    if plant is not None and plant.about and voice is not None:
        lo, hi = voice.context_sentences
        pre = _talk(bulk, rng, plant, rng.randint(lo, hi) if before else 0, avoid)
        post = _talk(bulk, rng, plant, rng.randint(lo, hi) if after else 0, avoid)
        while pre and sum(x.count(" ") + 1 for x in (*pre, *post)) > room:
            pre.pop()
        while post and sum(x.count(" ") + 1 for x in (*pre, *post)) > room:
            post.pop()
        text = " ".join([*pre, sentence, *post])
        return text, text.count(" ") + 1
    pre_b, nb = bulk.words(rng.randint(0, padding), limit=room // 2, avoid=avoid) if before else ([], 0)
    post_b, na = bulk.words(rng.randint(0, padding), limit=room - nb, avoid=avoid) if after else ([], 0)
    return " ".join([*pre_b, sentence, *post_b]), own + nb + na


def _talk(bulk: _Bulk, rng: random.Random, plant: Plant, n: int, avoid: frozenset[str]) -> list[str]:
    """``n`` sentences about the plant's subject and topic, as spoken."""
    return [bulk.free(x) for x in talk.context(rng, plant.about, plant.talk, n, avoid)]


def _lookup_block(mp: MeetingPlan, plant: Plant, bulk: _Bulk, rng: random.Random, voice: Register) -> list[_Draft]:
    """A fact asked, talked around by others and stated: every turn about its subject and topic."""
    setup, answer = plant.sentences
    s_text, s_w = _planted_turn(bulk, rng, setup, voice.padding, after=rng.random() < 0.3, avoid=plant.avoid,
                                plant=plant, voice=voice)
    a_text, a_w = _planted_turn(bulk, rng, answer, voice.padding, before=rng.random() < 0.5, avoid=plant.avoid,
                                plant=plant, voice=voice)
    asker = mp.speakers[rng.randrange(len(mp.speakers))]
    answerer = rng.choice([p for p in mp.speakers if p != asker])
    block = [_Draft(s_text, s_w, "lookup_setup", asker, plant)]
    for _ in range(rng.choice((0, 1, 1, 2))):
        said = _talk(bulk, rng, plant, rng.randint(1, 2), plant.avoid)
        if said:
            text = " ".join(said)
            block.append(_Draft(text, text.count(" ") + 1, "context", None, None))
    for _ in range(rng.choice(voice.answer_backchannels)):
        block.append(_Draft(_backchannel(rng), 1, "backchannel", None, None))
    block.append(_Draft(a_text, a_w, "lookup_answer", answerer, plant))
    return block


def _discussion_block(mp: MeetingPlan, d: Discussion, bulk: _Bulk, rng: random.Random,
                      voice: Register) -> list[_Draft]:
    """Three or four people on one aspect of a subject: an opening that names it, opinions and questions to each
    other, a close. A queried discussion's first and last turns carry it (facts.jsonl records the span). The person
    an opinion question names is asked by first name once and takes a stand on the aspect, and right after them
    someone else does too (the question's distractor); every turn of theirs is an opinion: no backchannel, reaction
    or close."""
    people = d.speakers or tuple(rng.sample(mp.speakers, min(len(mp.speakers), rng.randint(3, 4))))
    slots = {"X": f"{d.subject} {d.aspect}", "A": d.agenda, "S": d.said}
    addressed = d.named if d.named in people else None
    carried = None
    if d.query is not None:
        fact: LocatedFact = {"query": d.query, "subject": d.subject, "aspect": d.aspect}
        if addressed is not None:
            fact["person"], fact["named"] = d.addressed, addressed
        carried = Plant(d.did, "discussion", ("",), fact)
    opening = talk.draw(talk.OPENINGS, rng, d.talk, d.avoid, **slots, p="") or f"Next, the {slots['X']}."
    carried = dataclasses.replace(carried, sentences=(opening,)) if carried is not None else None
    drafts: list[_Draft] = []
    first = [opening, *_said(bulk, rng, talk.OPINIONS, d, slots, people, people[0], 0, 1)]
    drafts.append(_Draft(" ".join(first), sum(x.count(" ") + 1 for x in first), "discussion", people[0], carried))
    prev = people[0]
    ask_at = rng.randrange(1, max(2, d.turns - 2)) if addressed is not None else -1
    heard = {people[0]}
    k = 1
    while k < d.turns - 1:
        stance = k in (ask_at, ask_at + 1)
        if k == ask_at and addressed is not None:
            asker = rng.choice([x for x in people if x != addressed and x != prev] or [x for x in people
                                                                                     if x != addressed])
            question = talk.draw(talk.ADDRESSING, rng, d.talk, d.avoid, **slots, p=d.addressed) or \
                f"{d.addressed}, what do you think?"
            drafts.append(_Draft(question, question.count(" ") + 1, "discussion", asker, None))
            heard.add(asker)
            speaker = addressed
        else:
            others = [x for x in people if x != prev and (x != addressed or not stance)]
            speaker = rng.choice(others or [x for x in people if x != prev])
            # everyone taking part speaks: once the turns left are only enough for those not heard yet, they speak
            unheard = [x for x in people if x not in heard and x != prev]
            if unheard and d.turns - 1 - k <= len(set(people) - heard) and speaker not in unheard:
                speaker = unheard[0]
        lo, hi = voice.discussion_sentences
        short = rng.random() < voice.discussion_reactions and not stance and speaker != addressed
        said = _said(bulk, rng, talk.REACTIONS if short else talk.OPINIONS, d, slots, people, speaker,
                     1 if short else lo - int(stance), 1 if short else hi - int(stance))
        if stance:
            said.insert(0, talk.draw(talk.STANCES, rng, d.talk, d.avoid, **slots, p="")
                        or f"That is my view on the {slots['X']}.")
        if not said and speaker not in heard:
            # every draw said a word the question avoids: a reaction instead
            said = [rng.choice(wordlists.BACKCHANNELS)]
        if said:
            text = " ".join(said)
            drafts.append(_Draft(text, text.count(" ") + 1, "discussion", speaker, None))
            heard.add(speaker)
            prev = speaker
        listeners = [x for x in people if x not in (prev, addressed)]
        if rng.random() < voice.backchannel_rate / 2 and listeners:
            drafts.append(_Draft(_backchannel(rng), 1, "backchannel", rng.choice(listeners), None))
        k += 1
    close = talk.draw(talk.CLOSINGS, rng, d.talk, d.avoid, **slots, p="") or f"Okay, that is the {slots['X']}."
    closer = people[0] if people[0] != prev else next((x for x in people[1:] if x != addressed), people[0])
    drafts.append(_Draft(close, close.count(" ") + 1, "discussion_end", closer, carried))
    return drafts


def _said(bulk: _Bulk, rng: random.Random, table: tuple[str, ...], d: Discussion, slots: dict[str, str],
          people: tuple[str, ...], speaker: str, lo: int, hi: int) -> list[str]:
    """A turn's sentences of a discussion, said by ``speaker`` (a {p} is someone else in it)."""
    others = [x.split(" ")[0] for x in people if x != speaker and x.split(" ")[0] != d.addressed] or [""]
    out = []
    for _ in range(rng.randint(lo, hi)):
        s = talk.draw(table, rng, d.talk, d.avoid, **slots, p=others[rng.randrange(len(others))])
        if s is not None:
            out.append(bulk.free(s))
    return out


def _backchannel(rng: random.Random) -> str:
    return rng.choices(wordlists.BACKCHANNELS, wordlists.BACKCHANNEL_WEIGHTS)[0]


def _bulk_block(bulk: _Bulk, rng: random.Random, voice: Register) -> _Draft:
    """One unplanted block: a backchannel, a fragment or a turn of talk, in the register's proportions."""
    r = rng.random()
    if r < voice.backchannel_rate:
        sound = rng.random() < voice.markers / 3
        return _Draft(VOCALSOUND if sound else _backchannel(rng), 1, "backchannel", None, None)
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


def write_meeting(mp: MeetingPlan) -> tuple[bytes, list[LocatedFact], dict[str, int]]:
    """The meeting's canonical JSON line, the facts it planted, and its turn and word counts."""
    rng = random.Random(mp.transcript_seed)
    voice = REGISTERS[mp.register]
    asr = Asr(mp.asr_wer, mp.asr_entity_accuracy) if mp.asr_wer > 0 else None
    bank: tuple[str, ...] = ()
    if mp.bank_seed:
        # the series' recurring talk: identical sentences in every session that repeats the template
        series_bulk = _Bulk(random.Random(mp.bank_seed), mp.topic_words, disfluency=voice.disfluency,
                            markers=voice.markers)
        bank = tuple(series_bulk.sentence()[0] for _ in range(BANK_SIZE))
    bulk = _Bulk(rng, mp.topic_words, bank, disfluency=voice.disfluency, asr=asr, markers=voice.markers)
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
    # a block's turns stay together when blocks are shuffled (a lookup's setup, talk and answer; a discussion)
    blocks: list[list[_Draft]] = []
    opening: _Draft | None = None
    closing: _Draft | None = None
    used = 0
    for plant in mp.plants:
        if plant.type == "lookup":
            block = _lookup_block(mp, plant, bulk, rng, voice)
            blocks.append(block)
            used += sum(d.words for d in block)
        elif plant.position == OPENING:
            text, w = _planted_turn(bulk, rng, plant.sentences[0], 30, before=False)
            opening = _Draft(text, w, plant.type, opener, plant)
            used += w
        elif plant.position == CLOSING:
            text, w = _planted_turn(bulk, rng, plant.sentences[0], 20, after=False)
            closing = _Draft(text, w, plant.type, opener, plant)
            used += w
        else:
            text, w = _planted_turn(bulk, rng, plant.sentences[0], voice.padding, avoid=plant.avoid, plant=plant,
                                    voice=voice)
            blocks.append([_Draft(text, w, plant.type, None, plant)])
            used += w
    for d in mp.discussions:
        block = _discussion_block(mp, d, bulk, rng, voice)
        blocks.append(block)
        used += sum(x.words for x in block)
    n_mono = max(1, mp.words // voice.words_per_monologue) if voice.words_per_monologue and mp.words >= 800 else 0
    for _ in range(n_mono):
        sentences, w = bulk.words(rng.randint(410, 560))
        blocks.append([_Draft(" ".join(sentences), w, "monologue", None, None)])
        used += w
    background = list(mp.background)
    while used < mp.words:
        if background and rng.random() < BACKGROUND_SHARE:
            block = _discussion_block(mp, background.pop(0), bulk, rng, voice)
        else:
            block = [_bulk_block(bulk, rng, voice)]
        blocks.append(block)
        used += sum(1 if x.role == "backchannel" else x.words for x in block)
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
        if carried is not None and role == "discussion_end":
            # a discussion's fact was written at its first turn; its last turn closes the span
            (opened,) = [f for f in facts if f.get("type") == "discussion" and f.get("query") == carried.fact["query"]]
            opened["last"] = index
            if "named" in opened:
                opened["named_turns"] = [t.index for t in out_turns[opened["turn"]:] if t.speaker == opened["named"]]
        elif carried is not None:
            ptype = role if carried.type == "lookup" else carried.type
            sentence = carried.sentences[1] if role == "lookup_answer" else carried.sentences[0]
            facts.append({"type": ptype, "meeting": mp.id, "turn": index, "speaker": speaker,
                          "text": sentence, **carried.fact})
    return out_turns, facts, (cursor + rng.randint(100, 500)) / 100
