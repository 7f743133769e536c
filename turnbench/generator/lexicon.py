"""Questions at a graded distance from their evidence: a calibrated share of the meeting's own words, the rest said
another way from a curated lexicon of meaning-preserving substitutions. Seeded; no model.

A question form marks its substitutable words in brackets: ``"What [budget] did we [settle] on for the {S}
[contract]?"``. Every bracketed word is a word the evidence says (the answer sentence, or the discussion), and the
lexicon below gives what else it may be called, meaning kept: a synonym (budget → funding), a hypernym (audit →
review), a periphrase (own → be responsible for). A subject's substitutable words (its sector, a product's area and
thing, a site) come from its sense (``generator/subjects.py``); its identifying word never changes.

How far a question is from its evidence is drawn first: a target *overlap*, the share of the question's content
words (tokens minus ``contracts.STOPWORDS`` and ``contracts.FRAMING``) that its evidence holds, from
``OVERLAP_DECILES``, measured on real meeting queries (QMSum, all splits: 1,060 specific queries against their gold
spans). Then words are said another way, one at a time in a seeded order, while that brings the share nearer the
target; the share is computed on the words themselves, so a periphrase of three words counts three. The transcript keeps
every substitute out of the evidence turns (``Plant.avoid``), so the share ``turnbench measure`` finds on disk is the
one drawn here; the validator's ``question_overlap`` check recomputes it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping

from turnbench.generator.contracts import question_words

# Deciles (0%, 10%, ..., 100%) of the overlap share of QMSum's specific queries with their gold spans (all splits,
# 1,060 queries; `turnbench measure` on an import gives the same figures): a share is drawn uniformly between
# neighbouring deciles of a uniformly drawn decile band.
OVERLAP_DECILES = (0.0, 0.0, 0.2, 0.286, 0.333, 0.429, 0.5, 0.6, 0.667, 0.833, 1.0)

# The validator's question_overlap check: a corpus's lookup questions are distributed as the calibration when the
# largest gap between the two distribution functions (Kolmogorov-Smirnov) is at most OVERLAP_KS (what the lexicon
# cannot reach: a question naming a customer keeps its brand, so few share nothing) plus the 1% critical value
# 1.63 / sqrt(n) of n questions' own draws, over at least OVERLAP_MIN questions.
OVERLAP_KS = 0.15
OVERLAP_MIN = 40

# Word the evidence says -> what else it may be called. Reviewable: every entry keeps the meaning in its sentence.
LEXICON: Mapping[str, tuple[str, ...]] = {
    # facts
    "budget": ("funding", "money set aside", "spending limit"),
    "settle": ("agree", "decide"),
    "contract": ("deal", "agreement"),
    "rollout": ("launch", "go-live"),
    "due": ("scheduled", "expected"),
    "own": ("lead", "be responsible for", "take charge of"),
    "migration": ("move", "switchover", "transition"),
    "licences": ("seats", "user accounts"),
    "need": ("require", "have to buy"),
    "holding": ("hosting", "running"),
    "offsite": ("retreat", "away day", "team trip"),
    "vendor": ("supplier", "outside firm"),
    "pick": ("choose", "select", "go with"),
    "audit": ("review", "inspection", "assessment"),
    "version": ("release", "build"),
    "pinning": ("locking", "freezing", "sticking with"),
    "discount": ("price cut", "reduction", "markdown"),
    "offer": ("give", "propose"),
    "people": ("engineers", "staff", "hires"),
    "adding": ("bringing in", "putting"),
    "tender": ("bid", "procurement"),
    "shortlist": ("final list", "short list"),
    "trial": ("test", "try out"),
    "sites": ("locations", "places"),
    "review": ("read through", "look over"),
    "proposal": ("write-up", "paper", "plan"),
    # discussions
    "renewal": ("extension", "re-signing"),
    "escalation": ("complaint", "issue"),
    "expansion": ("growth", "upsell"),
    "adoption": ("uptake", "usage"),
    "performance": ("speed", "responsiveness"),
    "feedback": ("reviews", "user comments"),
    "staffing": ("team size", "resourcing"),
    "scope": ("features", "requirements"),
    "risks": ("concerns", "dangers"),
    "lease": ("rental", "tenancy"),
    "move": ("relocation",),
    "equipment": ("hardware", "kit"),
    "discussed": ("talked about", "covered"),
    "think": ("feel",),
}

_SLOT = re.compile(r"\[([A-Za-z-]+)\]")


class Phrasing:
    """A question form with its substitutable words filled: the words said as the evidence says them, and the
    choices for each."""

    def __init__(self, form: str, extra: Mapping[str, tuple[str, ...]] = {}) -> None:
        self.form = form
        self.choices: dict[str, tuple[str, ...]] = {}
        for word in _SLOT.findall(form):
            senses = extra.get(word, LEXICON.get(word, ()))
            if senses:
                self.choices[word] = senses

    def text(self, swapped: Mapping[str, str]) -> str:
        return _SLOT.sub(lambda m: swapped.get(m.group(1), m.group(1)), self.form)


def overlap_share(question: str, evidence: frozenset[str]) -> float | None:
    """The share of the question's content words its evidence holds; None when it has none."""
    words = question_words(question)
    return len(words & evidence) / len(words) if words else None


def draw_target(rng: random.Random) -> float:
    """An overlap share drawn from the calibration: a decile band, then uniformly inside it."""
    band = rng.randrange(len(OVERLAP_DECILES) - 1)
    lo, hi = OVERLAP_DECILES[band], OVERLAP_DECILES[band + 1]
    return lo + (hi - lo) * rng.random()


def graded(phrasing: Phrasing, evidence: frozenset[str], target: float, rng: random.Random,
           fill: Mapping[str, str] = {}) -> tuple[str, float]:
    """The question and its share: words said another way, in a seeded order, while that brings the share nearer
    ``target``. ``fill`` replaces other ``{slots}`` first (a subject's name, a series' team and kind)."""
    def render(swapped: Mapping[str, str]) -> str:
        text = phrasing.text(swapped)
        for slot, value in fill.items():
            text = text.replace("{" + slot + "}", value)
        return text

    swapped: dict[str, str] = {}
    text = render(swapped)
    share = overlap_share(text, evidence)
    order = sorted(phrasing.choices)
    rng.shuffle(order)
    for word in order:
        if share is None or share <= target:
            break
        options = phrasing.choices[word]
        candidate = {**swapped, word: options[rng.randrange(len(options))]}
        new_text = render(candidate)
        new_share = overlap_share(new_text, evidence)
        if new_share is not None and abs(new_share - target) < abs(share - target):
            swapped, text, share = candidate, new_text, new_share
    return text, share if share is not None else 0.0


def calibration_cdf(x: float) -> float:
    """The calibration's distribution function: piecewise linear between its deciles (a tie of deciles is a step)."""
    d = OVERLAP_DECILES
    if x < d[0]:
        return 0.0
    for k in range(len(d) - 1, 0, -1):
        if x >= d[k]:
            return 1.0 if k == len(d) - 1 else k / 10
        if x >= d[k - 1]:
            return ((k - 1) + (x - d[k - 1]) / (d[k] - d[k - 1])) / 10
    return 0.0


def overlap_bound(n: int) -> float:
    """The largest calibration gap n questions may show."""
    return round(OVERLAP_KS + 1.63 / n ** 0.5, 6)


def calibration_gap(shares: Iterable[float]) -> float:
    """The Kolmogorov-Smirnov distance between the shares' distribution and the calibration's."""
    xs = sorted(shares)
    n = len(xs)
    gap = 0.0
    for i, x in enumerate(xs):
        c = calibration_cdf(x)
        gap = max(gap, abs((i + 1) / n - c), abs(i / n - c))
    return round(gap, 6)


def closest(forms: Iterable[str], senses: Mapping[str, tuple[str, ...]], evidence: frozenset[str], target: float,
            rng: random.Random, fill: Mapping[str, str] = {}, tails: Iterable[str] = ()) -> tuple[str, float]:
    """The question nearest ``target`` among ``forms``, each alone and with each of ``tails`` (a context phrase
    before its closing mark: "... in the Payments planning?"), each graded by ``graded``; the first of equals."""
    best: tuple[str, float] | None = None
    for form in forms:
        for tail in ("", *tails):
            variant = form if not tail else form[:-1] + " " + tail + form[-1] if form[-1] in "?." else f"{form} {tail}"
            text, share = graded(Phrasing(variant, senses), evidence, target, rng, fill)
            if best is None or abs(share - target) < abs(best[1] - target):
                best = (text, share)
    if best is None:
        raise ValueError("no question form to grade")
    return best
