"""Arms are configuration: the registry, the query bodies they build, the oracle label, the refusals."""

import pytest

from turnbench.corpus.records import Query
from turnbench.engines.retrieval import ARMS, BUILDERS, Arm, _resolved_config, get_arm, get_scope, run_tag, search_body
from turnbench.errors import BadInput, UnknownArm

Q = Query(id="q1", cls="lookup", rule="R1", surface="direct", text="vendor contract renewal",
          scored_on="retrieval", gold_meetings=("m2", "m1"))


def test_the_shipped_arms_and_their_builders():
    assert sorted(ARMS) == ["bm25", "bm25-title"]
    assert all(a.builder in BUILDERS and a.depth == 100 for a in ARMS.values())
    assert get_arm("bm25").query("a b") == {"match": {"content": {"query": "a b", "operator": "or"}}}
    assert get_arm("bm25-title").query("a b") == {"multi_match": {
        "query": "a b", "fields": ["content", "title^2.0"], "type": "most_fields", "operator": "or"}}


def test_unknown_arm_is_refused_naming_the_known_ones():
    with pytest.raises(UnknownArm, match=r"'bm25-nope'.*known arms: bm25, bm25-title"):
        get_arm("bm25-nope")


def test_unknown_scope_is_bad_input():
    with pytest.raises(BadInput, match="corpus, gold-meetings"):
        get_scope("everything")


def test_corpus_scope_body_searches_everything():
    body = search_body(get_arm("bm25"), Q, get_scope("corpus"), 100)
    assert body["query"] == {"match": {"content": {"query": "vendor contract renewal", "operator": "or"}}}
    # no per-query sort: ties resolve by the index's sort order (see test_load_stack's tie test)
    assert body == {"query": body["query"], "size": 100, "track_total_hits": False, "_source": False,
                    "stored_fields": "_none_", "docvalue_fields": ["passage_id"]}


def test_gold_meetings_scope_filters_to_the_querys_gold_meetings():
    body = search_body(get_arm("bm25"), Q, get_scope("gold-meetings"), 20)
    assert body["query"]["bool"]["filter"] == [{"terms": {"meeting_id": ["m1", "m2"]}}]
    assert body["query"]["bool"]["must"] == [get_arm("bm25").query(Q.text)]
    assert body["size"] == 20


def test_resolved_config_names_everything_and_labels_the_oracle():
    marker = {"max_words": 200, "passages_sha256": "ab" * 32}
    cfg = _resolved_config(get_arm("bm25-title"), get_scope("gold-meetings"), "idx", 50, 7, marker)
    assert cfg["arm"] == {"name": "bm25-title", "builder": "multi_match", "depth": 50,
                          "params": {"fields": ["content", "title^2.0"], "operator": "or", "type": "most_fields"},
                          "description": get_arm("bm25-title").description}
    assert cfg["scope"]["oracle"] is True and cfg["scope"]["label"].startswith("ORACLE UPPER BOUND")
    assert cfg["queries"] == {"scored_on": "retrieval", "count": 7}
    assert cfg["similarity"] == {"type": "BM25", "k1": 1.2, "b": 0.75}
    assert run_tag(cfg) == "bm25-title@gold-meetings"
    corpus_cfg = _resolved_config(get_arm("bm25"), get_scope("corpus"), "idx", 100, 7, marker)
    assert corpus_cfg["scope"]["oracle"] is False and run_tag(corpus_cfg) == "bm25"


def test_an_arm_is_a_value_a_new_one_needs_no_code():
    arm = Arm("bm25-and", "match", {"field": "content.exact", "operator": "and"}, depth=10)
    assert arm.query("x y") == {"match": {"content.exact": {"query": "x y", "operator": "and"}}}
    assert search_body(arm, Q, get_scope("corpus"), arm.depth)["size"] == 10
