"""The load's disk and heap check, on node figures as GET _nodes/stats/fs,jvm gives them."""

from __future__ import annotations

import pytest

from turnbench.errors import StackStateError
from turnbench.loading import capacity

MB = 1 << 20


def _node(name, free, heap, roles=("data", "ingest", "cluster_manager")):
    return {"name": name, "roles": list(roles), "fs": {"total": {"available_in_bytes": free}},
            "jvm": {"mem": {"heap_max_in_bytes": heap}}}


def test_need_from_the_manifest_counts_by_hand():
    want = capacity.need({"words": 1_000_000, "turns": 20_000})
    assert (want.index_disk, want.postgres_disk, want.heap) == (64_000_000, 24_000_000 + 32 * MB, 256 * MB)
    with_vectors = capacity.need({"words": 1_000_000, "turns": 20_000}, vector_dim=384, graph=True)
    # stored float32 vectors twice (the force-merge copy); the graph's neighbour lists on the heap
    assert with_vectors.index_disk == 64_000_000 + 2 * 20_000 * 4 * 384
    assert with_vectors.heap == 256 * MB + 20_000 * 512


def test_a_manifest_without_counts_is_not_sized():
    assert capacity.need({"meetings": 3}) is None
    assert capacity.need({"words": "many", "turns": 2}) is None


def test_enough_disk_and_heap_passes():
    want = capacity.need({"words": 1_000_000, "turns": 20_000})
    capacity.check({"a": _node("n0", 64_000_000, 256 * MB)}, want, shards=1, postgres_beside=False)


def test_one_byte_short_of_disk_is_refused_in_one_line_naming_what_to_do():
    want = capacity.need({"words": 1_000_000, "turns": 20_000})
    with pytest.raises(StackStateError) as e:
        capacity.check({"a": _node("n0", 64_000_000 - 1, 1 << 30)}, want, shards=1, postgres_beside=False)
    assert str(e.value) == ("OpenSearch node n0 has 61.0 MB free on its data path; loading 1,000,000 words (20,000 "
                            "passages) needs about 61.0 MB there (index, translog and the force-merge copy): free "
                            "some space or use a larger disk")


def test_postgres_beside_the_node_adds_its_tables():
    want = capacity.need({"words": 1_000_000, "turns": 20_000})
    with pytest.raises(StackStateError, match=r"needs about 115\.9 MB there .*and PostgreSQL"):
        capacity.check({"a": _node("n0", 100 * MB, 1 << 30)}, want, shards=1, postgres_beside=True)


def test_shards_spread_the_index_over_data_nodes_only():
    want = capacity.need({"words": 3_000_000, "turns": 60_000})  # 192,000,000 bytes of index
    nodes = {"a": _node("n0", 64_000_000, 1 << 30), "b": _node("n1", 64_000_000, 1 << 30),
             "c": _node("n2", 64_000_000, 1 << 30), "m": _node("manager", 0, 1 << 30, roles=("cluster_manager",))}
    capacity.check(nodes, want, shards=3, postgres_beside=False)  # a third each; the manager holds no shard
    with pytest.raises(StackStateError, match="node n0 has"):
        capacity.check(nodes, want, shards=1, postgres_beside=False)  # one shard lands whole on one node
    with pytest.raises(StackStateError, match="no data node"):
        capacity.check({"m": nodes["m"]}, want, shards=1, postgres_beside=False)


def test_a_small_heap_is_refused_with_the_option_to_raise_it():
    want = capacity.need({"words": 1000, "turns": 1_000_000}, vector_dim=384, graph=True)
    with pytest.raises(StackStateError) as e:
        capacity.check({"a": _node("n0", 1 << 40, 512 * MB)}, want, shards=1, postgres_beside=False)
    assert str(e.value) == ("OpenSearch node n0 has a 512.0 MB heap; this load needs at least 744.3 MB (the HNSW "
                            "graph is built on the heap): start the stack with --heap (or TURNBENCH_OPENSEARCH_HEAP) "
                            "set higher")


def test_a_node_that_does_not_report_a_figure_is_not_refused_for_it():
    want = capacity.need({"words": 1_000_000, "turns": 20_000})
    capacity.check({"a": {"name": "n0"}}, want, shards=1, postgres_beside=False)
