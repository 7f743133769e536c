"""Loading into the real stack: counts and settle, tables, isolation refusals, identical reloads, arms × scopes."""

from __future__ import annotations

import pytest

from tests.integration.tinycorpus import EXPECTED, MAX_WORDS
from turnbench.corpus.format import open_corpus
from turnbench.engines.retrieval import run_arm
from turnbench.errors import ForeignIndex, IndexNotSettled, StackStateError
from turnbench.loading.index import DEFAULT_INDEX, observed_counts, settle
from turnbench.loading.load import load_corpus
from turnbench.loading.spec import LoadSpec
from turnbench.loading.tables import SCHEMA
from turnbench.passages import write_passages
from turnbench.runfiles import write_jsonl_run, write_trec_run
from turnbench.stack import pins
from turnbench.stack.clients import opensearch_client, postgres_connect

pytestmark = pytest.mark.integration

RETRIEVAL_QUERIES = ["q01", "q02", "q03", "q04", "q06", "q07"]


def _sql(stack, query, params=()):
    with postgres_connect(stack) as conn, conn.cursor() as cur:
        cur.execute(query, params)
        return cur.fetchall()


def test_load_counts_settle_provenance_and_tables(stack, tiny):
    r = load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS))
    p = r.provenance
    assert (p["docs_count"], p["docs_deleted"], p["indexing_index_total"], p["segments_per_shard"]) == (12, 0, 12, 1)
    assert (p["passages"], p["meetings"], p["segments"]) == (12, 4, 12)
    assert "number_of_shards" not in p and "segments_count" not in p  # the topology is runinfo.json's
    assert r.topology == {"nodes": 1, "shards": 1, "replicas": 0, "segments_per_shard": [1]}
    # the inventory is stored beside the tables, so a run reads it back instead of cutting the corpus again
    from turnbench.loading.tables import read_passages
    assert read_passages(stack) == list(r.passages)
    assert (p["opensearch_version"], p["lucene_version"]) == (stack.opensearch_version, stack.lucene_version)
    assert p["postgres_major"] == stack.postgres_major == pins.POSTGRES_MAJOR
    assert len(p["settings_sha256"]) == len(p["mapping_sha256"]) == 64
    assert r.timings["settle_reads"] >= 2 and r.timings["store_size_bytes"] > 0
    assert {k for k in ("postgres_s", "bulk_s", "force_merge_s", "settle_s")} <= set(r.timings)
    assert len(r.passages) == 12 and [x.id for x in r.passages][:3] == ["mtg-0001:00000", "mtg-0001:00001",
                                                                          "mtg-0001:00002"]

    client = opensearch_client(stack)
    assert observed_counts(client, DEFAULT_INDEX) == (12, EXPECTED["per_meeting"])
    props = client.indices.get_mapping(index=DEFAULT_INDEX)[DEFAULT_INDEX]["mappings"]["properties"]
    assert props["content"]["analyzer"] == "english"
    assert props["content"]["fields"]["exact"]["analyzer"] == "standard"
    assert props["title"]["fields"]["keyword"]["type"] == "keyword"
    # content is an array of segment texts: a phrase across two of Ana's packed turns must not match
    across = client.count(index=DEFAULT_INDEX, body={"query": {"match_phrase": {"content.exact": "start the falcon"}}})
    phrase = {"query": {"match_phrase": {"content.exact": "the falcon migration"}}}
    inside = client.count(index=DEFAULT_INDEX, body=phrase)
    assert (across["count"], inside["count"]) == (0, 1)

    assert _sql(stack, f"SELECT count(*) FROM {SCHEMA}.meetings") == [(4,)]
    assert _sql(stack, f"SELECT count(*) FROM {SCHEMA}.segments") == [(12,)]
    cols = _sql(stack, "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = %s "
                       "ORDER BY table_name, ordinal_position", (SCHEMA,))
    assert cols == [("attendees", "meeting_id"), ("attendees", "name"),
                    ("meetings", "id"), ("meetings", "title"), ("meetings", "recorded_date"), ("meetings", "duration"),
                    ("meetings", "timing"),
                    *[("passages", c) for c in ("id", "meeting_id", "passage_index", "kind", "speaker", "start_s",
                                                "end_s", "words", "text_sha256", "holds")],
                    ("segments", "meeting_id"), ("segments", "turn_index"),
                    ("segments", "speaker"), ("segments", "start_s"), ("segments", "end_s"), ("segments", "text")]
    # the invitee list, one row per (meeting, name); the tiny corpus invites exactly who speaks
    assert _sql(stack, f"SELECT meeting_id, name FROM {SCHEMA}.attendees ORDER BY meeting_id, name") == [
        ("mtg-0001", "Ana"), ("mtg-0001", "Ben"), ("mtg-0002", "Cleo"), ("mtg-0002", "Dev"),
        ("mtg-0003", "Eve"), ("mtg-0003", "Fay"), ("mtg-0004", "Gus"), ("mtg-0004", "Hana")]
    # the total reading order puts Eve's short "right" (3.0–3.5) before Fay's turn (3.0–6.0)
    order = _sql(stack, f"SELECT turn_index FROM {SCHEMA}.segments WHERE meeting_id = 'mtg-0003' "
                        "ORDER BY start_s, end_s, turn_index")
    assert order == [(0,), (2,), (1,)]
    assert _sql(stack, f"SELECT title, recorded_date::text, timing FROM {SCHEMA}.meetings WHERE id = 'mtg-0004'") == \
        [("Payments — planning #1", "2026-04-21", "synthetic")]


def test_arms_in_both_scopes(stack, tiny):
    load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS))
    runs = {(arm, scope): run_arm(stack, tiny, arm, scope=scope)
            for arm in ("bm25", "bm25-title") for scope in ("corpus", "gold-meetings")}
    gold = {q.id: set(q.gold_meetings) for q in tiny.queries()}
    by_id = {p.id: p for p in runs["bm25", "corpus"].passages}
    for (arm, scope), r in runs.items():
        assert r.arm_config["arm"]["name"] == arm and r.arm_config["scope"]["name"] == scope
        assert r.arm_config["queries"]["count"] == 6 and len(r.latencies) == 6
        assert set(r.run) <= set(RETRIEVAL_QUERIES)  # the aggregation query q05 is never run
        assert "q06" not in r.run  # no passage matches it: absent here, counted as unanswered by the harness
        for qid, ranked in r.run.items():
            assert [e.rank for e in ranked] == list(range(1, len(ranked) + 1))
            assert [e.score for e in ranked] == [float(len(ranked) - i) for i in range(len(ranked))]
            if scope == "gold-meetings":
                assert {by_id[e.passage_id].meeting for e in ranked} <= gold[qid]
        assert r.arm_config["scope"]["oracle"] is (scope == "gold-meetings")
    assert runs["bm25", "gold-meetings"].arm_config["scope"]["label"].startswith("ORACLE UPPER BOUND")

    top = {key: {q: r.run[q][0].passage_id for q in r.run} for key, r in runs.items()}
    assert top["bm25", "corpus"]["q01"] == "mtg-0004:00001"  # Hana's renewal turn
    assert top["bm25", "corpus"]["q02"] == "mtg-0001:00000"  # Ana's packed turns 0-1
    # q03's words are only in mtg-0003's title: the text arm cannot find that meeting, the title arm ranks it first
    assert all(by_id[e.passage_id].meeting != "mtg-0003" for e in runs["bm25", "corpus"].run["q03"])
    assert top["bm25-title", "corpus"]["q03"].startswith("mtg-0003:")
    assert "q03" not in runs["bm25", "gold-meetings"].run


def test_two_loads_give_identical_passages_index_statistics_and_runs(stack, tiny, tmp_path):
    def load_and_run(out):
        r = load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS))
        files = {}
        for arm in ("bm25", "bm25-title"):
            for scope in ("corpus", "gold-meetings"):
                rr = run_arm(stack, tiny, arm, scope=scope)
                files[arm, scope, "trec"] = write_trec_run(out / f"{arm}-{scope}.trec", rr.run, arm)
                files[arm, scope, "jsonl"] = write_jsonl_run(out / f"{arm}-{scope}.jsonl", rr.run)
                files[arm, scope, "config"] = rr.arm_config
        files["passages"] = write_passages(out / "passages.jsonl", r.passages)
        return r, files

    r1, f1 = load_and_run(tmp_path / "a")
    r2, f2 = load_and_run(tmp_path / "b")
    assert r1.passages == r2.passages and r1.passages_sha256 == r2.passages_sha256 == f1["passages"]
    assert r1.provenance == r2.provenance
    assert f1 == f2


def test_a_foreign_index_is_refused_and_left_untouched(stack, tiny):
    client = opensearch_client(stack)
    for name, docs in (("someone-elses-index", 1), ("someone-elses-empty-index", 0)):
        client.indices.create(index=name, body={"settings": {"number_of_replicas": 0}})
        for i in range(docs):
            client.index(index=name, id=str(i), body={"note": "not turnbench's"}, refresh=True)
        uuid = client.indices.get_settings(index=name)[name]["settings"]["index"]["uuid"]
        try:
            with pytest.raises(ForeignIndex, match=f"'{name}'.*no turnbench marker"):
                load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS, index=name))
            assert client.count(index=name)["count"] == docs
            assert client.indices.get_settings(index=name)[name]["settings"]["index"]["uuid"] == uuid  # not recreated
        finally:
            client.indices.delete(index=name)


def test_a_foreign_postgres_schema_is_refused_and_left_untouched(stack, tiny):
    with postgres_connect(stack) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        conn.execute(f"CREATE TABLE {SCHEMA}.theirs (x int)")
        conn.execute(f"INSERT INTO {SCHEMA}.theirs VALUES (7)")
    try:
        with pytest.raises(ForeignIndex, match="PostgreSQL schema 'turnbench'.*no turnbench marker"):
            load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS))
        assert _sql(stack, f"SELECT x FROM {SCHEMA}.theirs") == [(7,)]
    finally:
        with postgres_connect(stack) as conn:
            conn.execute(f"DROP SCHEMA {SCHEMA} CASCADE")
    load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS))  # ours again, for whatever runs next


def test_an_index_holding_the_wrong_counts_is_refused(stack, tiny):
    load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS))
    client = opensearch_client(stack)
    expected = (12, dict(EXPECTED["per_meeting"]))
    client.index(index=DEFAULT_INDEX, id="stray", refresh=True,
                 body={"meeting_id": "mtg-0002", "passage_id": "stray", "content": ["stray"]})
    with pytest.raises(IndexNotSettled, match=r"13 passages in 4 meetings.*mtg-0002: 6 not 5"):
        run_arm(stack, tiny, "bm25")
    with pytest.raises(IndexNotSettled, match="did not settle within 0.3 s"):
        settle(client, DEFAULT_INDEX, expected, timeout_s=0.3)
    client.delete(index=DEFAULT_INDEX, id="stray", refresh=True)
    assert settle(client, DEFAULT_INDEX, expected) == 2


def test_a_run_refuses_an_index_of_another_corpus_or_an_unfinished_load(stack, tiny, tiny_other):
    load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS))
    with pytest.raises(StackStateError, match="holds corpus 'tiny-load-0'.*not 'tiny-load-1'"):
        run_arm(stack, tiny_other, "bm25")
    r = load_corpus(stack, tiny_other, LoadSpec(max_words=MAX_WORDS))  # turnbench's own index: replaced
    assert r.provenance["docs_count"] == 12
    assert run_arm(stack, tiny_other, "bm25").arm_config["passages"]["sha256"] == r.passages_sha256
    client = opensearch_client(stack)
    meta = client.indices.get_mapping(index=DEFAULT_INDEX)[DEFAULT_INDEX]["mappings"]["_meta"]
    meta["turnbench"]["state"] = "loading"  # what an interrupted load leaves behind
    client.indices.put_mapping(index=DEFAULT_INDEX, body={"_meta": meta})
    with pytest.raises(IndexNotSettled, match="never settled"):
        run_arm(stack, tiny_other, "bm25")
    load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS))


def test_a_search_error_is_refused_not_skipped(stack, tiny):
    from turnbench.engines.arms import builtin
    from turnbench.engines.retrieval import get_scope, run_queries, search_body
    from turnbench.errors import SearchFailed

    load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS))
    good = search_body(builtin("bm25"), tiny.queries()[0], get_scope("corpus"), 10)
    bad = {**good, "query": {"match": {"content": {"query": "x", "operator": "sometimes"}}}}
    entries, latencies = run_queries(opensearch_client(stack), DEFAULT_INDEX, [("q01", good)])
    assert list(entries)[0].passage_id == "mtg-0004:00001" and len(latencies) == 1
    with pytest.raises(SearchFailed, match="queries q01..q02: OpenSearch refused the _msearch batch"):
        run_queries(opensearch_client(stack), DEFAULT_INDEX, [("q01", good), ("q02", bad)])
    # a query that fails on the shard comes back as an error item inside a successful _msearch
    shard_bad = {**good, "query": {"match": {"start": "not a number"}}}
    with pytest.raises(SearchFailed, match="query q03: OpenSearch answered an error"):
        run_queries(opensearch_client(stack), DEFAULT_INDEX, [("q01", good), ("q03", shard_bad)])


def test_a_run_searches_without_opensearch_py_and_fails_as_it_does(stack, tiny):
    """The client a run searches with (urllib3 alone on an http:// stack) reads the marker and the counts, and
    refuses a failed search, word for word as opensearch-py's client does."""
    from turnbench.engines.arms import builtin
    from turnbench.engines.retrieval import get_scope, run_queries, search_body
    from turnbench.errors import BadInput, SearchFailed
    from turnbench.loading.index import index_marker
    from turnbench.stack.clients import search_client
    from turnbench.stack.lightclient import LightClient

    load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS))
    light, full = search_client(stack), opensearch_client(stack)
    assert isinstance(light, LightClient) == stack.opensearch_url.startswith("http://")
    assert index_marker(light, DEFAULT_INDEX) == index_marker(full, DEFAULT_INDEX)
    assert observed_counts(light, DEFAULT_INDEX) == observed_counts(full, DEFAULT_INDEX)
    assert index_marker(light, "turnbench-no-such-index") is None
    assert light.nodes.info(metric="plugins") == full.nodes.info(metric="plugins")  # what a vector arm checks
    good = search_body(builtin("bm25"), tiny.queries()[0], get_scope("corpus"), 10)
    same = [list(run_queries(c, DEFAULT_INDEX, [("q01", good), ("q02", good)], concurrency=2)[0])
            for c in (light, full)]
    assert same[0] == same[1] and len(same[0]) == 4
    for bad, refusal, where in [
        ({**good, "query": {"match": {"content": {"query": "x", "operator": "sometimes"}}}}, SearchFailed, None),
        ({**good, "query": {"match": {"content": {"query": "x", "operator": "sometimes"}}}}, BadInput, "odd.toml"),
        ({**good, "query": {"match": {"start": "not a number"}}}, SearchFailed, None)]:
        said = []
        for client in (light, full):
            with pytest.raises(refusal) as err:
                run_queries(client, DEFAULT_INDEX, [("q01", good), ("q02", bad)], where=where)
            said.append(str(err.value))
        assert said[0] == said[1]
    with pytest.raises(SearchFailed, match=r"queries q01..q01: OpenSearch refused the _msearch batch: ConnectionError"):
        from turnbench.stack.net import free_port

        run_queries(LightClient(f"http://127.0.0.1:{free_port()}", 5), DEFAULT_INDEX, [("q01", good)])


def test_the_first_query_is_answered_before_any_other_is_sent(stack, tiny):
    """A server may initialise what parses a request on first use without a lock (the k-NN plugin's method
    parameters: a dense-hnsw query rejected now and then when two came at once); the first query goes alone."""
    import threading
    import time

    from turnbench.engines.arms import builtin
    from turnbench.engines.retrieval import get_scope, run_queries, search_body

    load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS))
    client = opensearch_client(stack)
    real, events, lock = client.msearch, [], threading.Lock()

    def msearch(**kw):
        with lock:
            events.append("start")
            slow = len(events) == 1
        if slow:
            time.sleep(0.3)  # the first request held: any other sent meanwhile would start before it ends
        try:
            return real(**kw)
        finally:
            with lock:
                events.append("end")

    client.msearch = msearch
    body = search_body(builtin("bm25"), tiny.queries()[0], get_scope("corpus"), 10)
    bodies = [(f"q{k:02d}", body) for k in range(8)]
    entries, _ = run_queries(client, DEFAULT_INDEX, bodies, batch=2, concurrency=3)
    assert events[:2] == ["start", "end"] and events.count("start") == 5 == events.count("end")  # 1, 2, 2, 2, 1
    assert entries.query_ids == tuple(q for q, _ in bodies)


def test_score_ties_at_the_depth_cut_off_resolve_by_meeting_not_by_load_order(stack, tiny):
    # the corpus file lists mtg-0004 first and mtg-0001 last, so mtg-0002's "yes" is indexed before mtg-0001's
    load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS))
    client = opensearch_client(stack)
    hits = client.search(index=DEFAULT_INDEX, body={"query": {"match": {"content": "yes"}}, "size": 2})["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["mtg-0001:00001", "mtg-0002:00004"] and hits[0]["_score"] == hits[1]["_score"]
    for scope in ("corpus", "gold-meetings"):
        top = run_arm(stack, tiny, "bm25", depth=1, scope=scope).run["q07"]
        assert [e.passage_id for e in top] == (["mtg-0001:00001"] if scope == "corpus" else ["mtg-0002:00004"])


def test_a_load_the_node_cannot_hold_is_refused_before_anything_is_written(stack, monkeypatch):
    """The node's own disk and heap figures (GET _nodes/stats), against a need made larger than any machine's;
    sized from the manifest's word and turn counts (the fixture corpus has them, the tiny one does not)."""
    from pathlib import Path

    from turnbench.loading import capacity

    small = open_corpus(Path(__file__).resolve().parents[3] / "fixtures" / "small")
    client = opensearch_client(stack)
    index = "turnbench-capacity-test"
    before = _sql(stack, "SELECT count(*) FROM pg_tables WHERE schemaname = %s", (SCHEMA,))
    monkeypatch.setattr(capacity, "INDEX_BYTES_PER_WORD", 1 << 40)
    with pytest.raises(StackStateError, match=r"^OpenSearch node \S+ has [\d.]+ [KMG]?B free on its data path; "
                                              r"loading 37,665 words \(816 passages\) needs about .* GB there"):
        load_corpus(stack, small, LoadSpec(index=index))
    monkeypatch.setattr(capacity, "INDEX_BYTES_PER_WORD", 1)
    monkeypatch.setattr(capacity, "HEAP_FLOOR_BYTES", 1 << 50)
    with pytest.raises(StackStateError, match=r"heap; this load needs at least .*start the stack with --heap"):
        load_corpus(stack, small, LoadSpec(index=index))
    assert not client.indices.exists(index=index)
    assert _sql(stack, "SELECT count(*) FROM pg_tables WHERE schemaname = %s", (SCHEMA,)) == before
