"""turnbench.harness.agreement: Kendall's tau-b by hand, and the orderings and swaps between two corpora."""

from __future__ import annotations

import pytest

from turnbench.errors import BadInput
from turnbench.harness.agreement import agreement, tau_b
from turnbench.render.markdown import render_agreement_md as render_md


def test_tau_b_by_hand() -> None:
    assert tau_b([1, 2, 3], [1, 2, 3]) == 1.0
    assert tau_b([1, 2, 3], [3, 2, 1]) == -1.0
    # one swap among three pairs: C=2, D=1, no ties -> (2-1)/3
    assert tau_b([1, 2, 3], [2, 1, 3]) == 0.333333
    # x ties one pair (T_x=1), C=2, D=0: 2 / sqrt(3 * 2) = 0.816497
    assert tau_b([1, 1, 3], [1, 2, 3]) == 0.816497
    assert tau_b([1, 1, 1], [1, 2, 3]) is None


def _doc(corpus: str, arm: str, lookup: float, summarize: float) -> dict[str, object]:
    return {"provenance": {"corpus": {"id": corpus}, "arm": {"name": arm}}, "scope": {"oracle": False},
            "retrieval": {"rows": [{"class": "lookup", "means": {"MRR": lookup}},
                                   {"class": "summarize", "means": {"MRR": summarize}}]}}


def test_orderings_tau_and_swaps_per_class() -> None:
    docs = [_doc("synthetic", "bm25", 0.6, 0.5), _doc("synthetic", "dense", 0.4, 0.6),
            _doc("synthetic", "hybrid", 0.7, 0.7), _doc("qmsum", "bm25", 0.2, 0.5),
            _doc("qmsum", "dense", 0.3, 0.4), _doc("qmsum", "hybrid", 0.35, 0.6)]
    cells = {c.cls: c for c in agreement(docs)}
    assert cells["lookup"].orders["synthetic"] == (("hybrid", 0.7), ("bm25", 0.6), ("dense", 0.4))
    assert cells["lookup"].swaps == (("bm25", "dense"),) and cells["lookup"].tau_b == 0.333333
    assert cells["summarize"].swaps == (("bm25", "dense"),)
    md = render_md(list(cells.values()))
    assert "| lookup | MRR | 0.3333 |" in md and "bm25 ↔ dense" in md


def test_refusals() -> None:
    with pytest.raises(BadInput, match="two corpora"):
        agreement([_doc("a", "x", 1, 1), _doc("a", "y", 1, 1), _doc("a", "z", 1, 1)])
    with pytest.raises(BadInput, match="at least 3 arms"):
        agreement([_doc("a", "x", 1, 1), _doc("b", "x", 1, 1), _doc("a", "y", 1, 1), _doc("b", "y", 1, 1)])
    twice = [_doc("a", "x", 1, 1), _doc("a", "x", 1, 1)]
    with pytest.raises(BadInput, match="given twice"):
        agreement(twice)
