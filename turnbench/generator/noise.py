"""Conversation noise: disfluencies in free talk, and an ASR preset (seeded substitutions at a word error rate).

Disfluencies (every register, at the register's rate): a filler opening a sentence ("Um, we should ..."), a word
said twice ("the the"), a false start ("We should, uh, we should ..."), a sentence trailing off. Where the register
says so, breaks are written with the markers of the AMI and ICSI transcripts that QMSum holds ("We should
{disfmarker} we could ..."), and some backchannels are a non-speech sound ("{vocalsound}"). They touch free talk only
— bulk, the talk around a fact, discussions — never a sentence that carries ground truth, so every contract holds.

The ASR preset (``--asr-wer``) misrecognises words as speech recognition does: each word of free talk is, with
probability ``wer``, replaced by one that sounds like it (``SOUNDS_LIKE``), else dropped or misspelt; names
(capitalised words: people, customers, projects, places) go wrong with probability ``1 − entity_accuracy`` each,
turned into a near spelling (a vowel changed, a letter doubled or dropped). Reference figures for conversational
speech: 18% word error rate and 82% named-entity accuracy, the defaults. What carries ground truth is left exact:
planted facts, markers and deferrals, and the sentences a question's evidence is checked against.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from turnbench.generator import wordlists

_WORD = re.compile(r"[A-Za-z]+")
# Words an ASR system confuses, both ways.
SOUNDS_LIKE = (
    ("their", "there"), ("to", "two"), ("for", "four"), ("right", "write"), ("new", "knew"), ("week", "weak"),
    ("site", "sight"), ("cache", "cash"), ("plan", "plant"), ("test", "text"), ("data", "date"), ("board", "bored"),
    ("sale", "sail"), ("price", "prize"), ("cost", "coast"), ("team", "teem"), ("review", "preview"),
    ("ticket", "tick it"), ("release", "realise"), ("owner", "own her"), ("budget", "bud get"), ("audit", "audited"),
    ("version", "vision"), ("vendor", "vender"), ("license", "licence"), ("quote", "coat"), ("scope", "scape"),
)
_CONFUSED = {a: b for a, b in SOUNDS_LIKE} | {b: a for a, b in SOUNDS_LIKE}
VOWELS = "aeiou"


@dataclass(frozen=True)
class Asr:
    """The ASR preset's rates, written into the recorded configuration."""

    wer: float = 0.18
    entity_accuracy: float = 0.82


DISFMARKER = "{disfmarker}"
VOCALSOUND = "{vocalsound}"


def disfluent(text: str, rng: random.Random, rate: float, markers: float = 0.0) -> str:
    """``text`` with a filler, a repeated word, a false start or a trailing off, with probability ``rate``; with
    probability ``markers`` the break is written as transcripts mark it (``{disfmarker}``) instead of "uh"."""
    if rate <= 0 or rng.random() >= rate or not text:
        return text
    kind = rng.randrange(4)
    marked = rng.random() < markers
    words = text.split(" ")
    if kind == 0 or len(words) < 4:
        filler = wordlists.FILLERS[rng.randrange(len(wordlists.FILLERS))]
        return filler + (text if text.startswith("I ") else text[0].lower() + text[1:])
    if kind == 1:
        i = rng.randrange(len(words) // 2)
        again = words[i].lower().strip(",.?")
        return " ".join([*words[:i + 1], *((DISFMARKER,) if marked else ()), again, *words[i + 1:]])
    if kind == 2:
        start = " ".join(words[:2]).rstrip(",.?")
        rest = text if text.startswith("I ") else text[0].lower() + text[1:]
        return f"{start} {DISFMARKER} {rest}" if marked else f"{start}, uh, {rest}"
    # trailing off: the sentence stops short
    cut = max(2, rng.randrange(len(words) // 2, len(words)))
    return " ".join(words[:cut]).rstrip(",.?") + (f" {DISFMARKER}" if marked else " ...")


def _misspelt(word: str, rng: random.Random) -> str:
    """A near spelling of a name, as a recogniser might write it: a vowel changed, or a letter doubled or dropped."""
    inner = [i for i in range(1, len(word)) if word[i].lower() in VOWELS]
    if inner and rng.random() < 0.6:
        i = inner[rng.randrange(len(inner))]
        return word[:i] + rng.choice([v for v in VOWELS if v != word[i].lower()]) + word[i + 1:]
    i = 1 + rng.randrange(max(1, len(word) - 1))
    return word[:i] + word[i - 1:] if rng.random() < 0.5 else word[:i] + word[i + 1:]


def misrecognised(text: str, rng: random.Random, asr: Asr) -> str:
    """``text`` as a recogniser at ``asr``'s rates might write it (free talk only: see the module's docstring)."""
    def one(m: re.Match[str]) -> str:
        word = m.group(0)
        if word[0].isupper() and m.start() > 0:
            return _misspelt(word, rng) if rng.random() > asr.entity_accuracy else word
        if rng.random() >= asr.wer:
            return word
        low = word.lower()
        if low in _CONFUSED:
            return _CONFUSED[low]
        return "" if rng.random() < 0.3 else _misspelt(low, rng)  # a deletion, or a near sound
    out = _WORD.sub(one, text)
    return re.sub(r" {2,}", " ", out).replace(" ,", ",").replace(" .", ".").strip()
