"""The bootstrap as counts × deltas, its p-value, and Holm's adjustment, on values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from turnbench.harness.stats import bootstrap_means, holm, randomisation_p


def _fancy_indexing(deltas, resamples, entropy):
    """The bootstrap as turnbench drew it before counts: the reference the new arithmetic must match."""
    rng = np.random.default_rng(np.random.SeedSequence(list(entropy)))
    n, k = deltas.shape
    out = np.empty((resamples, k))
    block = max(1, 4_000_000 // max(1, n * k))
    done = 0
    while done < resamples:
        b = min(block, resamples - done)
        out[done:done + b] = deltas[rng.integers(0, n, size=(b, n))].mean(axis=1)
        done += b
    out.sort(axis=0)
    return out


@pytest.mark.parametrize("n,k", [(1, 1), (7, 2), (91, 9), (600, 9)])
def test_counts_times_deltas_draws_the_same_resamples_as_fancy_indexing(n, k):
    d = np.random.default_rng(5).normal(size=(n, k)).round(6)
    new, old = bootstrap_means(d, 3_000, [1, 2]), _fancy_indexing(d, 3_000, [1, 2])
    assert np.allclose(new, old, rtol=0, atol=1e-12)


def test_strata_are_resampled_apart_and_keep_their_sizes():
    # stratum A is all 0, stratum B all 1: every pooled resample keeps 3 of A and 1 of B, so its mean is 0.25
    d = np.array([[0.0], [0.0], [0.0], [1.0]])
    assert set(bootstrap_means(d, 500, [3], strata=[3, 1])[:, 0].tolist()) == {0.25}
    # unstratified, the share of B varies
    assert len(set(bootstrap_means(d, 500, [3])[:, 0].tolist())) > 1
    with pytest.raises(ValueError, match="do not partition"):
        bootstrap_means(d, 10, [3], strata=[2, 1])


def test_randomisation_p_on_worked_examples():
    zero = np.zeros((5, 1))
    assert randomisation_p(zero, 1_000, [1]) == [1.0]  # nothing moved: every flip is as far from zero
    # a constant difference over 30 queries: only the all-same-sign flips (2 in 2^30) reach it
    assert randomisation_p(np.full((30, 1), 0.3), 10_000, [1]) == [1 / 10_001]
    # two queries, differences 1 and 1: flips give means -1, 0, 0, 1; |m*| >= 1 in half of them
    p = randomisation_p(np.array([[1.0], [1.0]]), 20_000, [2])[0]
    assert abs(p - 0.5) < 0.02
    # columns are tested apart, from one set of flips
    two = randomisation_p(np.column_stack([np.zeros(30), np.full(30, 0.3)]), 1_000, [3])
    assert two == [1.0, 1 / 1_001]


def test_holm_on_a_worked_example():
    # sorted p 0.01, 0.02, 0.03, 0.5 times 4, 3, 2, 1 -> 0.04, 0.06, 0.06 (monotone), 0.5; order kept
    assert holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])
    assert holm([0.9, 0.9]) == [1.0, 1.0]  # capped at 1, and never below an earlier step
    assert holm([]) == []
