"""Invented code words: the few subjects (``subjects.INVENTED_SHARE`` of customers and projects) that real teams
name with a made-up word.

Each is unique across the corpus and is none of the words of people's names, cities, agenda topics, subjects or
the bulk and reserved word lists, so it says nothing but the subject it names.
"""

from __future__ import annotations

import random
import re

from turnbench.generator import wordlists
from turnbench.generator.org import Organisation


class InventedNames:
    """Invented names drawn from syllables; three per name until they run out, then more."""

    def __init__(self, rng: random.Random, forbidden: set[str]) -> None:
        self.rng = rng
        self.used = set(forbidden)
        self.syllables = 3
        self.misses = 0

    def new(self) -> str:
        while True:
            w = "".join(self.rng.choice(wordlists.SYLLABLES) for _ in range(self.syllables))
            if w not in self.used and len(w) >= 6:
                self.used.add(w)
                self.misses = 0
                return w.capitalize()
            self.misses += 1
            if self.misses >= 50:
                # three syllables are running out (very large corpora): lengthen names from here on
                self.syllables += 1
                self.misses = 0


def reserved_words(org: Organisation) -> set[str]:
    """Every word an invented name must not be: names, cities and every word list's words."""
    words: set[str] = set(org.name_tokens)
    for group in (wordlists.SUBJECTS, wordlists.MODALS, wordlists.VERBS, wordlists.VERBS_PAST, wordlists.ADJECTIVES,
                  wordlists.NOUNS, wordlists.TIMES, wordlists.PREPS, wordlists.NUMBERS, wordlists.MARKER_FIRST,
                  wordlists.MARKER_SECOND, wordlists.SIBLING_FIRST, wordlists.SIBLING_SECOND, wordlists.INSERTED,
                  wordlists.ITEM_AREAS, wordlists.ITEM_THINGS, wordlists.ITEM_SIBLING_THINGS):
        for phrase in group:
            words.update(phrase.lower().split())
    for _, topic in wordlists.AGENDA_TOPICS:
        words.update(topic)
    for named in (*wordlists.TEAM_NAMES, *wordlists.KINDS, *wordlists.SYSTEMS, *wordlists.FRAGMENTS):
        words.update(re.findall(r"[a-z0-9]+", named.lower()))
    for c in org.cities:
        words.update(c.lower().split())
    return words
