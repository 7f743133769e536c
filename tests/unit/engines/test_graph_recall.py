"""The HNSW probe's arithmetic: exact top k with ties at the k-th, recall against it, and its refusals."""

from __future__ import annotations

import numpy as np
import pytest

from turnbench.engines.graph_recall import check, exact_found, recall_of
from turnbench.errors import BadInput


def test_exact_top_k_takes_every_tie_at_the_kth() -> None:
    # cosines to the query (1, 0): rows 0 and 1 are 1.0, rows 2 and 3 tie at 0.6, row 4 is 0
    passages = np.array([[1.0, 0.0], [2.0, 0.0], [0.6, 0.8], [0.6, -0.8], [0.0, 1.0]])
    found = exact_found(passages, np.array([[3.0, 0.0]]), k=3)
    assert found == [{0, 1, 2, 3}]


def test_recall_counts_a_tie_as_found_and_never_more_than_k() -> None:
    exact = [{0, 1, 2, 3}, {5, 6, 7}]
    # query 1: the graph returned 0, 1 and the tied 3 (all found); query 2: one of three
    assert recall_of([[0, 1, 3], [5, 9, 8]], exact, k=3) == pytest.approx((3 / 3 + 1 / 3) / 2)
    assert recall_of([[0, 1, 2, 3]], [{0, 1, 2, 3}], k=3) == 1.0


def test_a_corpus_smaller_than_k_is_recalled_whole() -> None:
    assert recall_of([[1, 0]], [{0, 1}], k=10) == 1.0


@pytest.mark.parametrize(("efs", "orders", "says"), [
    ((), 3, "ef_search values"), ((0,), 3, "ef_search values"), ((16, True), 3, "ef_search values"),
    ((16,), 0, "build orders"), ((16,), 21, "build orders"), ((16,), 2.0, "build orders"),
])
def test_bad_settings_are_refused(efs: tuple, orders: object, says: str) -> None:
    with pytest.raises(BadInput, match=says):
        check(efs, orders)  # type: ignore[arg-type]


def test_graph_order_zero_is_the_loads_order_and_another_is_a_salted_one() -> None:
    import hashlib

    from turnbench.loading.vectors import build_order, check_graph_order

    ids = [f"m1:{n:05d}" for n in range(50)]
    assert build_order(ids) == sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())
    assert build_order(ids, 0) == build_order(ids)
    assert build_order(ids, 3) == sorted(ids, key=lambda i: hashlib.sha256(("3" + i).encode()).hexdigest())
    assert build_order(ids, 3) != build_order(ids)
    for bad in (-1, 1_000_001, True, 1.0):
        with pytest.raises(BadInput, match="graph order"):
            check_graph_order(bad)  # type: ignore[arg-type]
