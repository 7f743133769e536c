"""turnbench.engines.retrieval: the body each arm sends per query, the oracle scope, and the resolved config."""

import json

import pytest

from turnbench.corpus.records import Query
from turnbench.engines.arms import builtin, parse_arm
from turnbench.engines.retrieval import _resolved_config, get_scope, run_tag, search_body
from turnbench.errors import BadInput, UnknownArm

Q = Query(id="q1", cls="lookup", rule="R1", surface="direct", text="vendor contract renewal",
          scored_on="retrieval", gold_meetings=("m2", "m1"))
MATCH = {"match": {"content": {"query": "vendor contract renewal", "operator": "or"}}}


def test_unknown_scope_is_bad_input():
    with pytest.raises(BadInput, match="corpus, gold-meetings"):
        get_scope("everything")


def test_corpus_scope_body_searches_everything():
    body = search_body(builtin("bm25"), Q, get_scope("corpus"), 100)
    assert body["query"] == {"bool": {"must": [MATCH], "filter": []}}
    # no per-query sort: ties resolve by the index's sort order (see the load tests' tie test)
    assert body == {"query": body["query"], "size": 100, "track_total_hits": False, "_source": False,
                    "stored_fields": "_none_", "docvalue_fields": ["passage_id"]}


def test_gold_meetings_scope_filters_to_the_querys_gold_meetings():
    body = search_body(builtin("bm25"), Q, get_scope("gold-meetings"), 20)
    assert body["query"]["bool"]["filter"] == [{"terms": {"meeting_id": ["m1", "m2"]}}]
    assert body["query"]["bool"]["must"] == [MATCH]
    assert body["size"] == 20


def test_an_arm_without_a_filter_cannot_run_the_oracle_scope():
    arm = parse_arm(b'name = "plain"\nbody = \'{"query": {"match": {"content": {{query_text}}}}}\'\n', "plain.toml",
                    builtin=False)
    assert search_body(arm, Q, get_scope("corpus"), 5)["query"] == {"match": {"content": "vendor contract renewal"}}
    with pytest.raises(UnknownArm, match="cannot be restricted to the gold meetings"):
        search_body(arm, Q, get_scope("gold-meetings"), 5)


HYBRID = ('{"query": {"hybrid": {"queries": [{"match": {"content": {{query_text}}}}, '
          '{"match": {"title": {{query_text}}}}]}}}')
RRF20 = ('{"phase_results_processors": [{"score-ranker-processor": '
         '{"combination": {"parameters": {"rank_constant": 20}}}}]}')


def test_a_pipeline_travels_in_the_request_and_leaves_nothing_on_the_server():
    arm = parse_arm(f"name = \"p\"\nbody = '{HYBRID}'\n[pipeline]\nbody = '{RRF20}'\n".encode(), "p.toml",
                    builtin=False)
    assert search_body(arm, Q, get_scope("corpus"), 5)["search_pipeline"] == json.loads(RRF20)


def test_resolved_config_names_everything_and_labels_the_oracle():
    marker = {"max_words": 200, "passages_sha256": "ab" * 32}
    arm = builtin("bm25-title")
    cfg = _resolved_config(arm, get_scope("gold-meetings"), "idx", 50, 7, marker)
    assert cfg["arm"] == {**arm.config(), "depth": 50}
    assert cfg["arm"]["file"] == {"name": "bm25-title.toml", "sha256": arm.file_sha256, "builtin": True}
    assert "title^2.0" in cfg["arm"]["body"]
    assert cfg["scope"]["oracle"] is True and cfg["scope"]["label"].startswith("ORACLE UPPER BOUND")
    assert cfg["queries"] == {"scored_on": "retrieval", "count": 7}
    assert cfg["similarity"] == {"type": "BM25", "k1": 1.2, "b": 0.75}
    assert run_tag(cfg) == "bm25-title@gold-meetings"
    corpus_cfg = _resolved_config(builtin("bm25"), get_scope("corpus"), "idx", 100, 7, marker)
    assert corpus_cfg["scope"]["oracle"] is False and run_tag(corpus_cfg) == "bm25"


def test_one_shard_is_searched_as_it_is_and_several_with_dfs_and_the_hit_order_as_a_sort():
    from turnbench.engines.retrieval import search_plan

    assert search_plan(builtin("bm25"), 1) == search_plan(builtin("bm25"), 1)
    one = search_plan(builtin("bm25"), 1)
    assert (one.search_type, one.sort) == (None, None)
    three = search_plan(builtin("bm25"), 3)
    assert three.search_type == "dfs_query_then_fetch"
    assert three.sort == ({"_score": "desc"}, {"passage_kind": "asc"}, {"meeting_id": "asc"}, {"passage_index": "asc"})
    assert three.runinfo() == {"shards": 3, "search_type": "dfs_query_then_fetch",
                               "sort": "explicit: score, then the index order"}


@pytest.mark.parametrize(("extra", "why"), [
    ('[requires]\nshards = "one"\n', 'its file says so'),
    (f"[pipeline]\nbody = '{RRF20}'\n", "runs a search pipeline"),
])
def test_an_arm_that_cannot_be_searched_shard_invariantly_refuses_several_shards(extra, why):
    from turnbench.engines.retrieval import search_plan

    body = HYBRID if "pipeline" in extra else '{"query": {"match": {"content": {{query_text}}}}}'
    arm = parse_arm((f"name = \"solo\"\nbody = '{body}'\n" + extra).encode(), "solo.toml", builtin=False)
    assert arm.one_shard and search_plan(arm, 1).shards == 1
    with pytest.raises(BadInput, match=f"arm solo cannot run on an index of 2 shards: .*{why}.*load with --shards 1"):
        search_plan(arm, 2)


def test_requires_shards_takes_only_one():
    with pytest.raises(BadInput, match='shards may only be "one"'):
        parse_arm(b'name = "x"\nbody = \'{"query": {"match": {"content": {{query_text}}}}}\'\n[requires]\n'
                  b'shards = "many"\n', "x.toml", builtin=False)


def test_hits_are_read_with_the_inventorys_strings_and_a_hit_without_its_id_is_named():
    import pytest

    from turnbench.engines.msearch import hits_of as _hits
    from turnbench.errors import SearchFailed

    def answer(*hits):
        return {"took": 7, "_shards": {"failed": 0}, "hits": {"hits": list(hits)}}

    ids = {"m1:00001": "m1:00001"}
    pids, scores, took = _hits("q1", answer({"fields": {"passage_id": ["m1:00001"]}, "_score": 2.5},
                                            {"fields": {"passage_id": ["m2:00003"]}, "_score": 1}), ids)
    assert pids == ["m1:00001", "m2:00003"] and pids[0] is ids["m1:00001"] and scores == [2.5, 1.0]
    assert isinstance(scores[1], float) and took == 0.007
    assert _hits("q1", {"took": 1, "_shards": {}}, None) == ([], [], 0.001)  # no hit: no key at all
    for broken in ({"_score": 1.0}, {"fields": {"passage_id": []}, "_score": 1.0}, {"fields": {}, "_score": 1.0}):
        with pytest.raises(SearchFailed, match=r"^query q1: hit 2 carries no passage_id"):
            _hits("q1", answer({"fields": {"passage_id": ["m1:00001"]}, "_score": 2.5}, broken), ids)
    with pytest.raises(KeyError):  # a hit without a score: as before, not a refusal of the hits' reading
        _hits("q1", answer({"fields": {"passage_id": ["m1:00001"]}}), ids)
