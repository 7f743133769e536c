"""The bge-small arms on the real stack: a vector field filled by bge-small, its exact and hybrid arms (the hybrid
arm's fusion checked against what the server answered), the query vectors embedded as queries."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnbench.corpus.format import open_corpus
from turnbench.engines.embeddings import vector_spec
from turnbench.engines.retrieval import run_arm
from turnbench.errors import StackStateError
from turnbench.loading.load import load_corpus
from turnbench.loading.spec import LoadSpec

pytestmark = pytest.mark.integration

SMALL = Path(__file__).resolve().parents[3] / "fixtures" / "small"
INDEX = "turnbench-bge-test"


@pytest.fixture(scope="module")
def corpus():
    return open_corpus(SMALL)


@pytest.fixture(scope="module")
def loaded(stack, corpus):
    return load_corpus(stack, corpus, LoadSpec(index=INDEX, vectors=vector_spec("bge-small-en-v15-int8", graph=False)))


def test_the_bge_arms_run_on_a_bge_vector_field_and_record_its_encoder(stack, corpus, loaded):
    v = loaded.provenance["vectors"]
    assert v["encoder"] == "bge-small-en-v15-int8" and v["mapping"] == {"type": "knn_vector", "dimension": 384}
    assert v["embeddings"]["encoder"]["id"] == "bge-small-en-v15-int8"
    assert v["embeddings"]["digest"]["count"] == loaded.provenance["passages"]
    results = {}
    for name in ("dense-exact-bge", "hybrid-rrf-bge"):
        results[name] = result = run_arm(stack, corpus, name, index=INDEX)
        queries = result.arm_config["queries"]["count"]
        assert result.arm_config["query_vectors"]["digest"]["count"] == queries
        assert result.arm_config["query_vectors"]["encoder"]["roles"]["passage"] == "the text as it is"
        assert len({e.query_id for e in result.entries}) == queries  # every question answered
    check = results["hybrid-rrf-bge"].arm_config["pipeline_check"]
    assert check["fusion"] == "score-ranker-processor: rrf, rank constant 60" and check["hits"] > 0
    again = run_arm(stack, corpus, "dense-exact-bge", index=INDEX)
    assert [(e.query_id, e.passage_id, e.score) for e in results["dense-exact-bge"].entries] == [
        (e.query_id, e.passage_id, e.score) for e in again.entries]


def test_a_minilm_arm_on_the_bge_field_is_refused_before_any_query(stack, corpus, loaded):
    with pytest.raises(StackStateError, match=r"arm dense-exact needs vector field 'embedding' \(minilm-l6-v2-int8, "
                                              r"no graph\); index 'turnbench-bge-test' holds 'embedding' "
                                              r"\(bge-small-en-v15-int8, no graph\)"):
        run_arm(stack, corpus, "dense-exact", index=INDEX)
