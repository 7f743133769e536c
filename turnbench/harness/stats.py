"""The statistics behind ``compare``: a stratified paired bootstrap, its p-value, Holm's adjustment (docs/design.md §7).

The bootstrap resamples query indices with replacement within each stratum (a seed's corpus; a single results
directory is one stratum), turns each resample into counts per query and takes the resampled means as one
matrix product ``counts @ deltas / n``. The indices come from the same seeded stream as a fancy-indexing
bootstrap would draw, so the resamples (and the intervals) are the ones turnbench has always drawn; only the
arithmetic is cheaper — one gather of ``n × k`` floats per resample became an integer histogram and a BLAS call.

The p-value comes from a paired randomisation test (``randomisation_p``): random sign flips of the per-query
differences, as many as the bootstrap draws, from a stream seeded the same way. It is exact under "the arms
are exchangeable" at any class size, where a p-value read off the bootstrap runs liberal on small classes —
measured on A/A pairs, that is the difference between a gate that keeps its 5% and one that does not.

Holm's step-down method controls the chance of naming any difference falsely across a family of cells: the
i-th smallest of m p-values is multiplied by (m − i + 1), and the adjusted values are made monotone.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from turnbench.errors import BadInput

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# Resamples are drawn in blocks of this many cells over rows × measures. The block size is part of the seeded
# stream (numpy discards an unused half of a 64-bit draw at the end of each call), so it stays what it was.
_BLOCK_CELLS = 4_000_000
_ROW_HISTOGRAMS = 256  # strata at least this large are counted one resample at a time (measured: 3-5x faster)
_FLIP_STREAM = 0x51F7  # the sign flips draw from their own stream, apart from the bootstrap's


def bootstrap_means(deltas: NDArray[np.float64], resamples: int, entropy: Sequence[int],
                    strata: Sequence[int] | None = None) -> NDArray[np.float64]:
    """``resamples`` means of ``deltas`` (n × k, one column per measure) resampled by row, sorted per column.

    ``strata`` gives the sizes of consecutive row blocks that are resampled separately (their sizes kept), so
    a pooled mean over several seeds keeps each seed's share; ``None`` is one stratum of all rows.
    """
    import numpy as np

    rng = np.random.default_rng(np.random.SeedSequence(list(entropy)))
    n, k = deltas.shape
    sizes = [n] if strata is None else [int(s) for s in strata]
    if sum(sizes) != n or any(s <= 0 for s in sizes):
        raise ValueError(f"strata {sizes} do not partition {n} rows")
    out = np.empty((resamples, k), dtype=np.float64)
    block = max(1, _BLOCK_CELLS // max(1, n * k))
    done = 0
    while done < resamples:
        b = min(block, resamples - done)
        counts = np.empty((b, n), dtype=np.float64)
        lo = 0
        for size in sizes:
            idx = rng.integers(0, size, size=(b, size))
            if size >= _ROW_HISTOGRAMS:
                # a histogram per resample: its bins stay in cache, where one block-wide histogram's do not
                for r in range(b):
                    counts[r, lo:lo + size] = np.bincount(idx[r], minlength=size)
            else:
                # many short resamples: one histogram for the block, row r's indices offset into its own bins
                flat = (idx + (np.arange(b, dtype=np.int64) * size)[:, None]).ravel()
                counts[:, lo:lo + size] = np.bincount(flat, minlength=b * size).reshape(b, size)
            lo += size
        out[done:done + b] = (counts @ deltas) / n
        done += b
    out.sort(axis=0)
    return out


def randomisation_p(deltas: NDArray[np.float64], resamples: int, entropy: Sequence[int]) -> list[float]:
    """Two-sided p-values of a paired randomisation (sign-flip) test, one per column of ``deltas`` (n × k).

    Under "the two arms are exchangeable", each query's difference is as likely to have either sign; the
    p-value is the share of random sign assignments whose mean is at least as far from zero as the observed
    one, ``(1 + #{|m*| ≥ |m|}) / (B + 1)``. Exact under that null at any n (a bootstrap p-value is not: it
    runs liberal on small classes), which is what a gate's false-alarm rate rests on.
    """
    import numpy as np

    rng = np.random.default_rng(np.random.SeedSequence([*entropy, _FLIP_STREAM]))
    n, k = deltas.shape
    observed = np.abs(deltas.mean(axis=0))
    # a float sum in another order can differ in the last bits; equal means must still count as "as far"
    bar = observed - 1e-12
    hits = np.zeros(k, dtype=np.int64)
    for _, signs in _sign_blocks(rng, n, k, resamples):
        hits += (np.abs(signs @ deltas) / n >= bar).sum(axis=0)
    return [min(1.0, (1 + int(h)) / (resamples + 1)) for h in hits.tolist()]


def _sign_blocks(rng: np.random.Generator, n: int, k: int, resamples: int
                 ) -> Iterator[tuple[int, NDArray[np.float64]]]:
    """``resamples`` rows of n random signs, in blocks: (rows drawn before the block, the block's signs)."""
    import numpy as np

    block = max(1, _BLOCK_CELLS // max(1, n * k))
    done = 0
    while done < resamples:
        b = min(block, resamples - done)
        # one random bit per sign: a byte stream unpacked is several times cheaper than integer draws
        bits = np.unpackbits(np.frombuffer(rng.bytes((b * n + 7) // 8), dtype=np.uint8), count=b * n)
        yield done, bits.reshape(b, n).astype(np.float64) * 2.0 - 1.0
        done += b


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: (pvalues[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def nearest_rank(sorted_values: Sequence[float], p: float | str) -> float:
    """The nearest-rank p-th percentile: the value at 1-based rank ⌈p/100 · n⌉ (rank 1 when p is 0)."""
    n = len(sorted_values)
    if n == 0:
        raise BadInput("no values to take a percentile of")
    rank = max(1, math.ceil(Fraction(str(p)) * n / 100))
    return sorted_values[min(rank, n) - 1]


_GUARD_STREAM = 0x6A4D  # the lookup guard's sign flips: a stream of their own, so adding the guard moved no p-value


def guard_statistics(deltas: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per column of ``deltas`` (n × k), how far its mean lies below zero in units that sign flips leave alone:
    ``−Σd / √Σd²``. Under "the arms are exchangeable" each is about a standard normal at any n; a column of zeros
    (no query moved) is ``−inf``, never a loss."""
    import numpy as np

    scale = np.sqrt((deltas * deltas).sum(axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(scale > 0, -deltas.sum(axis=0) / np.where(scale > 0, scale, 1.0), -np.inf)
    return t


def guard(deltas: NDArray[np.float64], resamples: int, entropy: Sequence[int]
          ) -> tuple[list[float], NDArray[np.float64]]:
    """A one-sided paired sign-flip max-T test that no column of ``deltas`` (n × k) is worse than zero.

    Each query's row is flipped as a whole, so the k measures keep the correlation they have (nDCG@10 and
    nDCG@20 move together), and the largest standardised loss over the columns is compared with its flipped
    distribution: the single-step max-T adjustment, which holds the chance of naming any column worse at the
    level whatever their correlation. Returns the adjusted one-sided p-value of each column,
    ``(1 + #{max* ≥ t_j}) / (B + 1)``, and the sorted flipped maxima (the critical value of a level is read
    off them)."""
    import numpy as np

    rng = np.random.default_rng(np.random.SeedSequence([*entropy, _GUARD_STREAM]))
    n, k = deltas.shape
    observed = guard_statistics(deltas)
    scale = np.sqrt((deltas * deltas).sum(axis=0))
    live = scale > 0
    maxima = np.full(resamples, -np.inf)
    if live.any():
        for done, signs in _sign_blocks(rng, n, k, resamples):
            maxima[done:done + len(signs)] = (-(signs @ deltas[:, live]) / scale[live]).max(axis=1)
    maxima.sort()
    pvalues = []
    for t in observed.tolist():
        if t == -math.inf:
            pvalues.append(1.0)
            continue
        # a float sum in another order can differ in the last bits: an equal maximum still counts
        hits = resamples - int(np.searchsorted(maxima, t - 1e-12, side="left"))
        pvalues.append(min(1.0, (1 + hits) / (resamples + 1)))
    return pvalues, maxima


def z_quantile(p: float) -> float:
    """The standard normal's p-quantile."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)
