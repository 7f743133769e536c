"""What a corpus can detect before any candidate runs: the smallest planted loss, derived by hand."""

from __future__ import annotations

from statistics import NormalDist

from tests.unit.harness.helpers import rec
from tests.unit.harness.test_compare import compare, doc
from turnbench.harness.power import detection, planted_share
from turnbench.render.markdown import _detectable_section

K2 = 2.0 - NormalDist().inv_cdf(0.8)  # a critical value that makes K = c + z(0.8) exactly 2


def test_planted_share_by_hand():
    # half the queries score 1, half 0: mean 0.5, mean square 0.5; f = K² μ₂ / (μ² (n + K²)) = 2 / (0.25 (n + 4))
    assert abs(planted_share([1.0, 0.0] * 50, K2) - 2 / 26) < 1e-12
    assert abs(planted_share([1.0, 1.0, 0.0, 0.0], K2) - 1.0) < 1e-12
    # fewer queries than that: even all of them losing everything would be missed 20% of the time or more
    assert planted_share([1.0, 0.0, 0.0], K2) is None
    assert planted_share([0.0] * 10, K2) is None  # nothing to lose
    assert planted_share([0.5], K2) is None


def test_a_planted_loss_of_the_stated_share_is_what_compare_finds():
    values = {f"q{i:03d}": ("lookup", 0.25 + 0.5 * (i % 2)) for i in range(400)}
    base = doc(values)
    (lookup,) = [d for d in detection(rec(base)).rows if d.group[-1] == "lookup" and d.measure == "nDCG@10"]
    assert lookup.n == 400 and lookup.mean == 0.5 and 0 < lookup.share < 0.1
    # lose the whole score of twice the stated share: the guard fails it; of a quarter of it: it does not
    for factor, fails in ((2.0, True), (0.25, False)):
        k = round(400 * lookup.share * factor)
        cand = {q: (c, 0.0 if i < k else v) for i, (q, (c, v)) in enumerate(sorted(values.items()))}
        assert bool(compare(base, doc(cand, arm="cand")).gate_failures()) is fails


def test_metrics_md_states_it():
    lines = _detectable_section(rec(doc({f"q{i:02d}": ("lookup", 0.2 + 0.01 * i) for i in range(60)})))
    assert "## What a comparison on this corpus can detect" in lines
    assert any(line.startswith("| c | lookup | nDCG@10 | 60 | 0.4950 |") for line in lines)
    assert any(line.startswith("| c | all | nDCG@10 | 60 |") for line in lines)
