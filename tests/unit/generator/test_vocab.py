"""The word lists (turnbench/generator/vocab.py): every word that carries ground truth stays out of the
bulk lists, so a planted phrase can only appear where the plan put it."""

from __future__ import annotations

import re

from turnbench.generator import vocab
from turnbench.generator.plan import plural


def test_reserved_words_never_occur_in_bulk_lists():
    bulk = set()
    for group in (vocab.SUBJECTS, vocab.MODALS, vocab.VERBS, vocab.VERBS_PAST, vocab.ADJECTIVES, vocab.NOUNS,
                  vocab.TIMES, vocab.PREPS, vocab.OPENERS, vocab.NUMBERS, vocab.FILLERS, vocab.BACKCHANNELS,
                  vocab.BULK_TEMPLATES, vocab.FRAGMENTS, vocab.SYSTEMS, vocab.TEAM_NAMES, vocab.KINDS):
        for phrase in group:
            bulk.update(re.findall(r"[a-z0-9]+", phrase.lower()))
    for _, words in vocab.AGENDA_TOPICS:
        bulk.update(words)
    reserved = set(vocab.MARKER_FIRST) | set(vocab.MARKER_SECOND) | set(vocab.SIBLING_FIRST) | set(vocab.SIBLING_SECOND)
    reserved |= {plural(w) for w in vocab.MARKER_SECOND} | {vocab.DEFER_VERB}
    assert bulk & reserved == set()
    assert set(vocab.MARKER_FIRST) & set(vocab.MARKER_SECOND) == set()
    assert {plural(w) for w in vocab.MARKER_SECOND} & set(vocab.MARKER_SECOND) == set()
    assert {plural(w) for w in vocab.ITEM_THINGS} & set(vocab.ITEM_THINGS) == set()
    # no ground-truth template starts with its slot, so a planted word never opens a sentence or turn
    for t in vocab.MARKER_TEMPLATES + vocab.DEFER_TEMPLATES + vocab.MENTION_TEMPLATES:
        assert not t.startswith("{x}")


def test_system_nouns_are_ordinary_bulk_nouns_and_fragments_are_not_backchannels():
    from turnbench.generator.realism import is_backchannel

    # a description's words must be common in the corpus: only their pairing may be rare
    assert set(vocab.SYSTEMS) <= set(vocab.NOUNS)
    assert not any(is_backchannel(f.format(n="plan", a="new", t="soon", o="Okay so")) for f in vocab.FRAGMENTS)
    assert all(is_backchannel(b) for b in vocab.BACKCHANNELS)
