"""The word lists (turnbench/generator/wordlists.py): every word that carries ground truth stays out of the
bulk lists, so a planted phrase can only appear where the plan put it."""

from __future__ import annotations

import re

from turnbench.generator import wordlists
from turnbench.generator.plan import plural


def test_reserved_words_never_occur_in_bulk_lists():
    bulk = set()
    for group in (wordlists.SUBJECTS, wordlists.MODALS, wordlists.VERBS, wordlists.VERBS_PAST, wordlists.ADJECTIVES,
                  wordlists.NOUNS, wordlists.TIMES, wordlists.PREPS, wordlists.OPENERS, wordlists.NUMBERS,
                  wordlists.FILLERS, wordlists.BACKCHANNELS, wordlists.BULK_TEMPLATES, wordlists.FRAGMENTS,
                  wordlists.SYSTEMS, wordlists.TEAM_NAMES, wordlists.KINDS):
        for phrase in group:
            bulk.update(re.findall(r"[a-z0-9]+", phrase.lower()))
    for _, words in wordlists.AGENDA_TOPICS:
        bulk.update(words)
    reserved = (set(wordlists.MARKER_FIRST) | set(wordlists.MARKER_SECOND) | set(wordlists.SIBLING_FIRST)
                | set(wordlists.SIBLING_SECOND))
    reserved |= {plural(w) for w in wordlists.MARKER_SECOND} | {wordlists.DEFER_VERB}
    assert bulk & reserved == set()
    assert set(wordlists.MARKER_FIRST) & set(wordlists.MARKER_SECOND) == set()
    assert {plural(w) for w in wordlists.MARKER_SECOND} & set(wordlists.MARKER_SECOND) == set()
    assert {plural(w) for w in wordlists.ITEM_THINGS} & set(wordlists.ITEM_THINGS) == set()
    # no ground-truth template starts with its slot, so a planted word never opens a sentence or turn
    for t in wordlists.MARKER_TEMPLATES + wordlists.DEFER_TEMPLATES + wordlists.MENTION_TEMPLATES:
        assert not t.startswith("{x}")


def test_system_nouns_are_ordinary_bulk_nouns_and_fragments_are_not_backchannels():
    from turnbench.generator.realism import is_backchannel

    # a description's words must be common in the corpus: only their pairing may be rare
    assert set(wordlists.SYSTEMS) <= set(wordlists.NOUNS)
    assert not any(is_backchannel(f.format(n="plan", a="new", t="soon", o="Okay so")) for f in wordlists.FRAGMENTS)
    assert all(is_backchannel(b) for b in wordlists.BACKCHANNELS)
