"""The answer engine on a corpus whose titles are recordings' file names (the default since generator 3): every
in-grammar question is answered exactly, R6 included — its series are found in the talk, not the titles."""

from __future__ import annotations

import pytest

from turnbench.corpus.format import open_corpus
from turnbench.engines.answer.engine import answer_queries
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.generate import generate
from turnbench.harness.answers import score_answers
from turnbench.loading.load import load_corpus

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def opaque(stack, tmp_path_factory):
    root = tmp_path_factory.mktemp("opaque") / "corpus"
    generate(GeneratorConfig(seed=5, meetings=24, words_per_meeting=700), root)
    corpus = open_corpus(root)
    load_corpus(stack, corpus)
    return corpus


def test_reference_answers_r6_from_the_talk_under_opaque_titles(stack, opaque):
    assert all(m.title.startswith("rec-") for m in opaque.iter_meetings())
    queries = opaque.queries()
    res = score_answers(queries, answer_queries(stack, queries, answerer="reference", corpus=opaque),
                        corpus=opaque.id, answerer="reference")
    inside = [s for s in res.scores if s.grammar == "in"]
    wrong = [(s.query_id, s.gold.to_json(), s.submitted.to_json()) for s in inside if s.em != 1.0]
    assert wrong == []
    r6 = [s for s in inside if s.rule == "R6"]
    assert len(r6) >= 2 and all(s.em == 1.0 for s in r6)
