"""Dense and hybrid arms on the real embedded stack: a vector field built reproducibly, exact and HNSW search,
server-side hybrid fusion against client-side fusion of the same legs, and the refusals."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.corpus.format import open_corpus
from turnbench.engines.embeddings import vector_spec
from turnbench.engines.fusion import Fusion, fuse
from turnbench.engines.retrieval import run_arm
from turnbench.errors import BadInput
from turnbench.loading.load import load_corpus
from turnbench.loading.spec import LoadSpec

pytestmark = pytest.mark.integration

SMALL = Path(__file__).resolve().parents[3] / "fixtures" / "small"
INDEX = "turnbench-dense-test"


@pytest.fixture(scope="module")
def corpus():
    return open_corpus(SMALL)


def _raw(result):
    return [(e.query_id, e.passage_id, e.rank, e.score) for e in result.entries]


def test_two_loads_with_vectors_give_the_same_index_and_the_same_dense_and_hybrid_results(stack, corpus):
    arms = ("dense-exact", "dense-hnsw", "hybrid-rrf", "hybrid-minmax")
    seen = []
    for _ in range(2):
        loaded = load_corpus(stack, corpus, LoadSpec(index=INDEX, vectors=vector_spec("minilm-l6-v2-int8")))
        seen.append((dict(loaded.provenance), {a: _raw(run_arm(stack, corpus, a, index=INDEX)) for a in arms}))
    (prov, runs), (prov2, runs2) = seen
    assert prov == prov2 and runs == runs2
    v = prov["vectors"]
    assert v["mapping"] == {"type": "knn_vector", "dimension": 384, "method": {
        "name": "hnsw", "engine": "lucene", "space_type": "cosinesimil",
        "parameters": {"m": 16, "ef_construction": 100}}}
    assert v["segments_before_merge"] == 1 and prov["segments_per_shard"] == 1  # 773 passages: one refresh
    assert v["embeddings"]["digest"]["count"] == prov["passages"]
    assert all(len(r) > 0 for r in runs.values())
    hnsw = run_arm(stack, corpus, "dense-hnsw", index=INDEX)
    approx = hnsw.arm_config["approximation"]
    # exact scoring reads the stored vectors only: without a graph the exact and hybrid arms rank the same
    flat = load_corpus(stack, corpus, LoadSpec(index=INDEX, vectors=vector_spec("minilm-l6-v2-int8", graph=False)))
    assert flat.provenance["vectors"]["mapping"] == {"type": "knn_vector", "dimension": 384}
    assert flat.provenance["vectors"]["embeddings"] == v["embeddings"]
    for a in ("dense-exact", "hybrid-rrf", "hybrid-minmax"):
        assert _raw(run_arm(stack, corpus, a, index=INDEX)) == runs[a], a
    assert approx["of"] == "dense-exact" and approx["recall@10"] >= 0.95 and approx["recall@100"] >= 0.95
    assert hnsw.arm_config["query_vectors"]["digest"]["count"] == hnsw.arm_config["queries"]["count"]


def test_server_side_rrf_against_client_side_fuse_of_the_same_two_legs(stack, corpus, capsys):
    """hybrid-rrf fuses bm25 and dense-exact inside OpenSearch; `fuse --method rrf --k 60` fuses the bm25 and
    dense-exact runs on the client. Same legs, same depth, same constant: they should rank alike."""
    load_corpus(stack, corpus, LoadSpec(index=INDEX, vectors=vector_spec("minilm-l6-v2-int8")))
    server = run_arm(stack, corpus, "hybrid-rrf", index=INDEX)
    legs = _answered_by_both([run_arm(stack, corpus, a, index=INDEX) for a in ("bm25", "dense-exact")])
    by_id = {p.id: p for p in server.passages}
    client = fuse(legs, by_id, Fusion("rrf", 60, (), 100))
    same_top10, overlap10, n = 0, 0.0, 0
    for qid, fused in client.items():
        mine = [e.passage_id for e in sorted(fused, key=lambda e: e.rank)][:10]
        theirs = [e.passage_id for e in server.run.get(qid, [])][:10]
        same_top10 += mine == theirs
        overlap10 += len(set(mine) & set(theirs)) / max(1, len(theirs))
        n += 1
    with capsys.disabled():
        print(f"\nhybrid-rrf vs fuse rrf k=60 on {n} queries: identical top 10 in {same_top10}, "
              f"mean top-10 overlap {overlap10 / n:.4f}")
    assert overlap10 / n >= 0.9


def _answered_by_both(legs):
    """The legs' entries for the questions both answer: a question no word of which is in the corpus has no bm25
    hits (two of fixtures/small's), and fuse refuses runs of different questions."""
    both = set.intersection(*({e.query_id for e in r.entries} for r in legs))
    return [[e for e in r.entries if e.query_id in both] for r in legs]


def _rrf_arm(k: int, *, misplaced: bool = False):
    """hybrid-rrf with rank constant ``k`` in a pipeline of its own: where OpenSearch reads it, or (``misplaced``)
    directly under combination, where 2.19.6 ignores it."""
    from turnbench.engines.arms import builtin, parse_arm

    base = builtin("hybrid-rrf")
    where = f'"rank_constant": {k}' if misplaced else f'"parameters": {{"rank_constant": {k}}}'
    pipeline = ('{"phase_results_processors": [{"score-ranker-processor": {"combination": {"technique": "rrf", '
                + where + "}}}]}")
    text = (f'name = "rrf-{k}"\ndepth = 100\nbody = \'\'\'{base.body}\'\'\'\n[pipeline]\nbody = \'{pipeline}\'\n'
            '[requires]\nvector_field = "embedding"\nencoder = "minilm-l6-v2-int8"\n')
    return parse_arm(text.encode(), f"rrf-{k}.toml", builtin=False)


@pytest.mark.parametrize("k", [1, 20, 60])
def test_an_rrf_constant_takes_effect_and_equals_client_side_fuse_of_the_two_legs(stack, corpus, k):
    load_corpus(stack, corpus, LoadSpec(index=INDEX, vectors=vector_spec("minilm-l6-v2-int8")))
    server = run_arm(stack, corpus, _rrf_arm(k), index=INDEX)
    check = server.arm_config["pipeline_check"]
    assert check["fusion"] == f"score-ranker-processor: rrf, rank constant {k}" and check["hits"] > 0
    legs = _answered_by_both([run_arm(stack, corpus, a, index=INDEX) for a in ("bm25", "dense-exact")])
    client = fuse(legs, {p.id: p for p in server.passages}, Fusion("rrf", k, (), 100))
    top = {qid: e[0] for qid, e in server.run.items() if e and qid in client}
    # the top fused score is the RRF sum for this constant: 2/(k+1) when both legs rank the passage first
    best = max(e.score for qid in top for e in [next(x for x in server.entries if x.query_id == qid)])
    assert best <= 2 / (k + 1) + 1e-6
    agree = sum([e.passage_id for e in client[qid]][:10] == [e.passage_id for e in server.run[qid]][:10]
                for qid in top)
    assert agree >= 0.9 * len(top), (agree, len(top))


def test_a_misplaced_rank_constant_is_refused_and_a_server_that_ignores_a_setting_is_caught(stack, corpus,
                                                                                           monkeypatch):
    from turnbench.engines import pipelines
    from turnbench.errors import SettingIgnored

    with pytest.raises(BadInput, match="where OpenSearch 2.19.6 ignores it"):
        _rrf_arm(20, misplaced=True)
    # the server fuses with the 60 the request carries; the check is told the arm declared 20, as a server that
    # dropped the setting would leave it: the run is refused, never scored as rank constant 20
    arm = _rrf_arm(60)
    declared = pipelines.parse
    monkeypatch.setattr(pipelines, "parse", lambda body, where: pipelines.Fusion(pipelines.RRF, rank_constant=20)
                        if declared(body, where).rank_constant == 60 else declared(body, where))
    load_corpus(stack, corpus, LoadSpec(index=INDEX, vectors=vector_spec("minilm-l6-v2-int8")))
    with pytest.raises(SettingIgnored, match="rank constant 20 gives"):
        run_arm(stack, corpus, arm, index=INDEX)


def test_a_dense_arm_on_an_index_without_vectors_is_refused_before_any_query(stack, corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", stack.opensearch_url)
    monkeypatch.setenv("TURNBENCH_POSTGRES_DSN", stack.postgres_dsn)
    load_corpus(stack, corpus, LoadSpec(index=INDEX))
    r = CliRunner().invoke(main, ["run", "--corpus", str(SMALL), "--arm", "dense-exact", "--index", INDEX,
                                  "--out", str(tmp_path / "run")])
    assert r.exit_code == 3, r.output
    assert r.output.strip().splitlines() == [
        "turnbench: StackStateError: dense-exact.toml: arm dense-exact needs vector field 'embedding' "
        f"(minilm-l6-v2-int8, no graph); index '{INDEX}' holds no vector field: load with `turnbench load "
        "--encoder minilm-l6-v2-int8` (bench does so)"]
    assert not (tmp_path / "run").exists()
    load_corpus(stack, corpus, LoadSpec(index=INDEX, vectors=vector_spec("minilm-l6-v2-int8", graph=False)))
    r = CliRunner().invoke(main, ["run", "--corpus", str(SMALL), "--arm", "dense-hnsw", "--index", INDEX,
                                  "--out", str(tmp_path / "run")])
    assert r.exit_code == 3 and r.output.strip().splitlines() == [
        "turnbench: StackStateError: dense-hnsw.toml: arm dense-hnsw needs vector field 'embedding' "
        f"(minilm-l6-v2-int8, HNSW graph); index '{INDEX}' holds 'embedding' (minilm-l6-v2-int8, no graph): load "
        "with `turnbench load --encoder minilm-l6-v2-int8 --vector-index hnsw` (bench does so)"], r.output
    assert not (tmp_path / "run").exists()


def test_native_knn_engines_are_refused_on_a_node_without_their_libraries_before_anything_is_written(
        stack, corpus, tmp_path):
    """Neither the embedded node nor the local image has faiss or nmslib (a faiss index took the docker node down
    in CI): the provider refuses them before a stack starts, and the node's own attribute before a load, whether
    the session's stack is reached as itself or as an external one."""
    import dataclasses

    from opensearchpy import OpenSearch

    with pytest.raises(BadInput, match="the k-NN engine faiss needs native libraries the embedded node does not"):
        load_corpus(dataclasses.replace(stack, provider="embedded"), corpus,
                    LoadSpec(index="turnbench-faiss-test", vectors=vector_spec("minilm-l6-v2-int8", engine="faiss")))
    for provider in sorted({"external", stack.provider} - {"embedded"}):
        with pytest.raises(BadInput, match=r"the k-NN engine nmslib needs native libraries node \S+ was built "
                                           r"without \(node.attr.turnbench_knn_native: none\)"):
            load_corpus(dataclasses.replace(stack, provider=provider), corpus,
                        LoadSpec(index="turnbench-faiss-test",
                                 vectors=vector_spec("minilm-l6-v2-int8", engine="nmslib")))
    assert not OpenSearch([stack.opensearch_url]).indices.exists(index="turnbench-faiss-test")
    r = CliRunner().invoke(main, ["bench", "--corpus", str(SMALL), "--arm", "dense-exact", "--knn-engine", "nmslib",
                                  "--provider", "embedded", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "no native k-NN libraries" in r.output and not (tmp_path / "o").exists()


def test_an_external_stack_without_the_plugins_is_refused_naming_them(tmp_path, monkeypatch):
    """A real node without k-NN and neural-search (the embedded node with those two plugin classes left out),
    reached as an external stack."""
    from turnbench.stack import open_stack, pins

    monkeypatch.setattr(pins, "OPENSEARCH_PLUGINS", tuple(p for p in pins.OPENSEARCH_PLUGINS
                                                         if p[0] not in ("opensearch-knn", "neural-search")))
    with open_stack("embedded") as bare:
        monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", bare.opensearch_url)
        monkeypatch.setenv("TURNBENCH_POSTGRES_DSN", bare.postgres_dsn)
        r = CliRunner().invoke(main, ["load", "--corpus", str(SMALL), "--encoder", "minilm-l6-v2-int8"])
        assert r.exit_code == 3, r.output
        assert "lacks the plugin(s) opensearch-knn, opensearch-neural-search" in r.output
        r = CliRunner().invoke(main, ["bench", "--corpus", str(SMALL), "--arm", "hybrid-rrf", "--provider", "external",
                                      "--out", str(tmp_path / "o")])
        assert r.exit_code == 3 and "lacks the plugin(s)" in r.output, r.output
        with urllib.request.urlopen(f"{bare.opensearch_url}/_cat/indices?format=json") as resp:
            assert json.loads(resp.read()) == []  # refused before anything was written
