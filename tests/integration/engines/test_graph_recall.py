"""The HNSW probe on a real stack: the same graph twice gives the same figures, and it leaves no index behind."""

from __future__ import annotations

from pathlib import Path

from opensearchpy import OpenSearch

from turnbench import api

SMALL = Path(__file__).resolve().parents[3] / "fixtures" / "small"


def test_the_load_order_graph_is_measured_the_same_twice_and_cleaned_up(stack) -> None:
    first, = api.graph_recall([SMALL], orders=2, efs=(16, 100), stack=stack)
    again, = api.graph_recall([SMALL], orders=1, efs=(16, 100), stack=stack)
    assert first.graphs[0] == again.graphs[0]
    assert [g.order for g in first.graphs] == [0, 1]
    assert first.passages == 773 and first.queries > 0
    for g in first.graphs:
        assert 0.9 <= g.at(16) <= g.at(100) <= 1.0
    left = OpenSearch(stack.opensearch_url).indices.get(index="turnbench-graph-probe-*")
    assert left == {}
