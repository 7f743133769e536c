"""The bge-small arms on the real stack: a vector field filled by bge-small, its exact and hybrid arms, the query
vectors embedded as queries, and the RRF constant the server really reads."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from turnbench.corpus.format import open_corpus
from turnbench.engines.arms import builtin
from turnbench.engines.embeddings import vector_spec
from turnbench.engines.retrieval import run_arm
from turnbench.errors import StackStateError
from turnbench.loading.load import load_corpus

pytestmark = pytest.mark.integration

SMALL = Path(__file__).resolve().parents[3] / "fixtures" / "small"
INDEX = "turnbench-bge-test"


@pytest.fixture(scope="module")
def corpus():
    return open_corpus(SMALL)


@pytest.fixture(scope="module")
def loaded(stack, corpus):
    return load_corpus(stack, corpus, index=INDEX, vectors=vector_spec("bge-small-en-v15-int8", graph=False))


def test_the_bge_arms_run_on_a_bge_vector_field_and_record_its_encoder(stack, corpus, loaded):
    v = loaded.provenance["vectors"]
    assert v["encoder"] == "bge-small-en-v15-int8" and v["mapping"] == {"type": "knn_vector", "dimension": 384}
    assert v["embeddings"]["encoder"]["id"] == "bge-small-en-v15-int8"
    assert v["embeddings"]["digest"]["count"] == loaded.provenance["passages"]
    for name in ("dense-exact-bge", "hybrid-rrf-bge"):
        result = run_arm(stack, corpus, name, index=INDEX)
        queries = result.arm_config["queries"]["count"]
        assert result.arm_config["query_vectors"]["digest"]["count"] == queries
        assert result.arm_config["query_vectors"]["encoder"]["roles"]["passage"] == "the text as it is"
        assert len({e.query_id for e in result.entries}) == queries  # every question answered
    again = run_arm(stack, corpus, "dense-exact-bge", index=INDEX)
    first = run_arm(stack, corpus, "dense-exact-bge", index=INDEX)
    assert [(e.query_id, e.passage_id, e.score) for e in first.entries] == [
        (e.query_id, e.passage_id, e.score) for e in again.entries]


def test_a_minilm_arm_on_the_bge_field_is_refused_before_any_query(stack, corpus, loaded):
    with pytest.raises(StackStateError, match=r"arm dense-exact needs vector field 'embedding' \(minilm-l6-v2-int8, "
                                              r"no graph\); index 'turnbench-bge-test' holds 'embedding' "
                                              r"\(bge-small-en-v15-int8, no graph\)"):
        run_arm(stack, corpus, "dense-exact", index=INDEX)


def _with_constant(where: str, k: int):
    """hybrid-rrf-bge with the RRF constant ``k`` written under combination.parameters or directly under
    combination."""
    combination = '"technique": "rrf", ' + (f'"parameters": {{"rank_constant": {k}}}' if where == "parameters"
                                            else f'"rank_constant": {k}')
    pipeline = f'{{"phase_results_processors": [{{"score-ranker-processor": {{"combination": {{{combination}}}}}}}]}}'
    return dataclasses.replace(builtin("hybrid-rrf-bge"), name=f"rrf-{where}-{k}", pipeline=pipeline)


def test_the_server_reads_the_rrf_constant_under_parameters_and_ignores_it_beside_technique(stack, corpus, loaded):
    """A passage ranked r1 and r2 by the two legs scores 1/(k+r1) + 1/(k+r2): with k = 60 no score exceeds
    2/61 = 0.0328; with k = 1 the best passage of a question scores at least 1/2 (first in one leg). Written under
    combination.parameters, k = 1 takes effect; written directly under combination, it is ignored and the scores
    are those of the default 60."""
    def top(arm) -> float:
        return max(e.score for e in run_arm(stack, corpus, arm, index=INDEX).entries)

    default = top("hybrid-rrf-bge")
    assert default <= 2 / 61 + 1e-9
    assert top(_with_constant("parameters", 1)) >= 0.5
    assert top(_with_constant("combination", 1)) == default
