"""Paraphrased questions (turnbench/generator/paraphrase.py): the curated lexicon keeps away from the words
the facts are stated in, descriptions are unique and made of common words, and a drawn paraphrase meets
its answer sentence in at most one content word."""

from __future__ import annotations

import random

from turnbench.generator import vocab
from turnbench.generator.contracts import PARAPHRASE_MAX_OVERLAP, content_words
from turnbench.generator.paraphrase import ALIASES, PARAPHRASES, QUALIFIERS, Descriptions, alias, paraphrase
from turnbench.generator.templates import LOOKUP_TEMPLATES, MULTI_TEMPLATES


def test_every_fact_template_has_paraphrases_that_avoid_its_words():
    stated = {t.name: content_words(t.answer.format(S="", V="")) for t in LOOKUP_TEMPLATES}
    stated |= {t.name: content_words(t.component.format(S="", V="")) for t in MULTI_TEMPLATES}
    asked = {t.name: content_words(t.question.format(S="", T="", K="")) for t in (*LOOKUP_TEMPLATES,
                                                                                   *MULTI_TEMPLATES)}
    assert sorted(PARAPHRASES) == sorted(stated)
    for name, forms in PARAPHRASES.items():
        assert len(forms) >= 2
        for form in forms:
            words = content_words(form.format(D="", T="", K=""))
            assert len(words & stated[name]) <= PARAPHRASE_MAX_OVERLAP, (name, form)
            # the synonym replaces the predicate: a paraphrase is not the question with another subject
            assert len((words & asked[name]) - {"meetings", "sessions"}) <= 1, (name, form)
            assert "{D}" in form and "{S}" not in form and "{V}" not in form
    assert all("{S}" in a and "{D}" in a and not a.startswith("{S}") for a in ALIASES)


def test_descriptions_are_unique_pairs_of_common_words_until_they_run_out():
    assert len(QUALIFIERS) >= 60 and set(QUALIFIERS) <= {w for _, ws in vocab.AGENDA_TOPICS for w in ws}
    d = Descriptions(random.Random(3))
    made = [d.new() for _ in range(len(QUALIFIERS) * len(vocab.SYSTEMS) + 200)]
    assert len(set(made)) == len(made)
    pairs = [m for m in made if len(m.split()) == 2]
    assert len(pairs) > 0.9 * len(QUALIFIERS) * len(vocab.SYSTEMS)
    assert all(m.split()[-1] in vocab.SYSTEMS and all(w in QUALIFIERS for w in m.split()[:-1]) for m in made)


def test_a_drawn_paraphrase_uses_its_description_and_keeps_the_gap():
    rng, d = random.Random(5), Descriptions(random.Random(6))
    sentence = "We picked Voratho Labs for the Kelmira audit."
    for _ in range(50):
        text, description = paraphrase("vendor", (sentence,), d, rng)
        assert description in text and "Kelmira" not in text
        assert len(content_words(text) & content_words(sentence)) <= PARAPHRASE_MAX_OVERLAP
    line = alias("Kelmira", "refund gateway", random.Random(1))
    assert "Kelmira" in line and "refund gateway" in line
    text, _ = paraphrase("reviewers", ("Ana Lee agreed to review the Kelmira proposal.",), d, rng,
                         T="Payments", K="design review")
    assert "Payments design review" in text
