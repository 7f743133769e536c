"""An index written to by another client while a bench searched it: the claim is refused, nothing written (issue 46
item 5). The session's stack is reached as an external one, as anyone else's stack would be."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnbench.engines.arms import builtin
from turnbench.errors import IndexChanged
from turnbench.pipeline import bench as pipeline
from turnbench.stack.clients import opensearch_client

SMALL = Path(__file__).resolve().parents[2] / "fixtures" / "small"
INDEX = "turnbench-index-changed-test"

pytestmark = pytest.mark.integration


def _options(stack, **kw):
    return pipeline.BenchOptions(provider="external", index=INDEX, answerer="skip", stack_options={
        "opensearch_url": stack.opensearch_url, "postgres_dsn": stack.postgres_dsn}, **kw)


def _intruder(client) -> None:
    """One more document, a copy of a loaded passage under a new id, indexed through the real client as another
    client of the stack would (not refreshed: the indexing total moves at once)."""
    hit = client.search(index=INDEX, body={"size": 1, "query": {"match_all": {}}})["hits"]["hits"][0]
    client.index(index=INDEX, id="intruder", body=hit["_source"])


@pytest.mark.parametrize("when", ["during", "before"])
def test_a_document_indexed_around_the_run_refuses_the_claim_and_writes_nothing(stack, tmp_path, monkeypatch, when):
    client = opensearch_client(stack)
    real_run = pipeline._run
    real_unchanged = pipeline._index_unchanged
    intruded = []

    def run_then_intrude(*args, **kw):
        result = real_run(*args, **kw)
        if when == "during":
            _intruder(client)
            intruded.append(when)
        return result

    def intrude_then_check(*args, **kw):  # between the load and the run's first re-read
        if when == "before":
            _intruder(client)
            intruded.append(when)
        return real_unchanged(*args, **kw)

    monkeypatch.setattr(pipeline, "_run", run_then_intrude)
    monkeypatch.setattr(pipeline, "_index_unchanged", intrude_then_check)
    try:
        with pytest.raises(IndexChanged, match=r"^index 'turnbench-index-changed-test' was written to "
                                               r"(while bm25 ran|between its load and bm25's run): "
                                               r"indexing_index_total \d+ -> \d+"):
            pipeline.bench(SMALL, [builtin("bm25")], tmp_path / "out", _options(stack, reload=True))
        assert intruded == [when]
        assert not (tmp_path / "out" / "bm25").exists()  # no claim, not even a partial one
    finally:
        client.indices.delete(index=INDEX, params={"ignore_unavailable": "true"})


def test_an_index_nobody_writes_benches_as_before(stack, tmp_path):
    try:
        out = pipeline.bench(SMALL, [builtin("bm25")], tmp_path / "out", _options(stack, reload=True))
        assert (out[0].out_dir / "metrics.json").is_file()
    finally:
        opensearch_client(stack).indices.delete(index=INDEX, params={"ignore_unavailable": "true"})
