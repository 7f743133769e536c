"""Does one corpus rank engines as another does? Kendall's tau-b between two corpora's orderings of the same arms,
with a bootstrap interval, ties kept as ties, and swaps counted only where both corpora can tell the pair apart.

Given results directories of three or more arms on each of two corpora (say the synthetic default corpus and an
imported QMSum corpus), for every class and measure both corpora report, from the per-query values in each
metrics.json (the class row's mean is recomputed from them and must equal it):

- each corpus's arms ordered by the mean, best first; between neighbours ``=`` when the means are equal (to the 6
  decimals metrics are written with), ``≈`` when the pair's difference is not distinguishable from zero on that
  corpus, ``>`` when it is;
- a pair's difference is *distinguishable from zero* on a corpus when the 95% percentile interval of its paired
  bootstrap (the same resamples for every arm, nearest-rank percentiles, no adjustment across pairs) excludes zero;
- a *swap* is a pair distinguishable on both corpora, in opposite directions; a pair distinguishable on one corpus
  only is *unresolved* (counted, never a swap);
- an arm is *inert* in a cell when its mean is at most ``INERT_MEAN`` on both corpora: it finds (almost) nothing on
  either, so it is last on both and would only add concordant pairs. Inert arms are listed apart and left out of the
  headline tau-b; the tau-b over every arm is given beside it;
- tau-b = (C − D) / sqrt((C + D + T_x)(C + D + T_y)) over pairs of arms: C concordant, D discordant, T_x and T_y
  the pairs tied in only one ordering (a pair tied in both counts in neither); undefined (None) when either
  ordering ties every pair — reported, never replaced by a number;
- its interval: the 2.5th and 97.5th nearest-rank percentiles of tau-b over resamples, each corpus's queries (or,
  with ``unit="meetings"``, its meetings, a query going with its first gold meeting) drawn with replacement
  independently; a resample in which tau-b is undefined is counted and left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

from turnbench.errors import BadInput
from turnbench.results.record import Results

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MIN_ARMS = 3
INERT_MEAN = 0.01
RESAMPLES = 1000
SEED = 20261130
UNITS = ("queries", "meetings")
ALL = "all"
DECIMALS = 6
LEVEL = 0.95


@dataclass(frozen=True)
class Ordering:
    """One corpus's arms in a cell, best first, and how each one relates to the next."""

    arms: tuple[tuple[str, float], ...]  # (arm, mean)
    links: tuple[str, ...]  # between arms[i] and arms[i + 1]: ">", "≈" or "="

    def text(self) -> str:
        """"a 0.5000 = b 0.5000 > c 0.2000": the order as a line."""
        parts = [f"{self.arms[0][0]} {self.arms[0][1]:.4f}"] if self.arms else []
        for (arm, mean), link in zip(self.arms[1:], self.links, strict=True):
            parts.append(f"{link} {arm} {mean:.4f}")
        return " ".join(parts)


@dataclass(frozen=True)
class Cell:
    cls: str
    measure: str
    arms: tuple[str, ...]  # the arms both corpora have, inert ones included
    inert: tuple[str, ...]
    orders: Mapping[str, Ordering]  # corpus id -> its ordering of every arm
    tau_b: float | None  # over the arms that are not inert
    interval: tuple[float, float] | None
    undefined_resamples: int
    tau_b_all: float | None  # over every arm, inert ones included
    swaps: tuple[tuple[str, str], ...]  # distinguishable on both corpora, in opposite directions
    unresolved: int  # pairs distinguishable on one corpus only
    queries: Mapping[str, int]  # corpus id -> queries in the cell

    def to_json(self) -> dict[str, Any]:
        return {"class": self.cls, "measure": self.measure, "arms": list(self.arms), "inert": list(self.inert),
                "orders": {c: {"arms": [[a, m] for a, m in o.arms], "links": list(o.links)}
                           for c, o in sorted(self.orders.items())},
                "tau_b": self.tau_b, "interval": list(self.interval) if self.interval else None,
                "undefined_resamples": self.undefined_resamples, "tau_b_all": self.tau_b_all,
                "swaps": [list(p) for p in self.swaps], "unresolved": self.unresolved,
                "queries": dict(sorted(self.queries.items()))}


def tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b of two paired score lists; None when either list ties every pair."""
    concordant = discordant = tied_x = tied_y = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            tied_x += 1
        elif dy == 0:
            tied_y += 1
        elif (dx > 0) == (dy > 0):
            concordant += 1
        else:
            discordant += 1
    denominator = math.sqrt((concordant + discordant + tied_x) * (concordant + discordant + tied_y))
    if denominator == 0:
        return None
    return round((concordant - discordant) / denominator, 6) + 0.0


@dataclass(frozen=True)
class _Values:
    """One corpus's per-query values of one cell: a row per query (sorted ids), a column per arm."""

    queries: tuple[str, ...]
    clusters: tuple[str, ...]  # what each query is resampled with: its meeting, or itself
    matrix: NDArray[np.float64]  # queries × arms


def _per_query(results: Results, where: str) -> dict[tuple[str, str], dict[str, float]]:
    """(class, measure) -> query id -> value, for the classes and for ``all``."""
    out: dict[tuple[str, str], dict[str, float]] = {}
    if results.retrieval is None:
        raise BadInput(f"{where}: the results hold no per-query retrieval values; agreement recomputes from them")
    for row in results.retrieval.per_query:
        for measure, value in row.values.items():
            if value is None:
                continue
            for cls in (row.cls, ALL):
                out.setdefault((cls, measure), {})[row.query_id] = float(value)
    return out


def _check_means(results: Results, values: Mapping[tuple[str, str], Mapping[str, float]], where: str) -> None:
    """Every class row's mean must be the mean of its per-query values: the file is read, not trusted."""
    for row in results.retrieval.rows if results.retrieval else ():
        for measure, mean in row.means.items():
            if mean is None:
                continue
            got = values.get((row.cls, measure), {})
            recomputed = math.fsum(v for _, v in sorted(got.items())) / len(got) if got else None
            if recomputed is None or abs(recomputed - float(mean)) > 1.5 * 10 ** -DECIMALS:
                raise BadInput(f"{where}: the {row.cls} {measure} mean {mean} is not the mean of its per-query "
                               f"values ({recomputed}); agreement refuses a results file that disagrees with itself")


PerQuery = dict[tuple[str, str], dict[str, float]]  # (class, measure) -> query id -> value


def _collect(documents: Sequence[Results]) -> dict[str, dict[str, PerQuery]]:
    """corpus id -> arm -> its per-query values."""
    by_corpus: dict[str, dict[str, PerQuery]] = {}
    for doc in documents:
        corpus = doc.corpus_id
        arm = doc.label
        arms = by_corpus.setdefault(corpus, {})
        if arm in arms:
            raise BadInput(f"arm {arm} is given twice for corpus {corpus}")
        if doc.scope.oracle:
            raise BadInput(f"arm {arm} on {corpus} was run in an ORACLE scope: only product results agree or not")
        where = f"{arm} on {corpus}"
        values = _per_query(doc, where)
        _check_means(doc, values, where)
        arms[arm] = values
    return by_corpus


def _matrix(arms: Mapping[str, PerQuery], names: Sequence[str], key: tuple[str, str], corpus: str,
            clusters: Mapping[str, str] | None) -> _Values:
    import numpy as np

    first = arms[names[0]][key]
    ids = tuple(sorted(first))
    for name in names[1:]:
        if set(arms[name][key]) != set(ids):
            raise BadInput(f"{corpus}: arms {names[0]} and {name} scored different queries for {key[0]} {key[1]}; "
                           "agreement pairs arms on the same queries")
    matrix = np.array([[arms[n][key][q] for n in names] for q in ids], dtype=np.float64)
    if clusters is not None:
        missing = [q for q in ids if q not in clusters]
        if missing:
            raise BadInput(f"{corpus}: no gold meeting known for query {missing[0]}; cannot resample by meeting")
    return _Values(ids, tuple(clusters[q] for q in ids) if clusters is not None else ids, matrix)


def _resampled_means(values: _Values, unit: str, resamples: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """resamples × arms: the arms' means over each resample of the corpus's queries (or meetings)."""
    import numpy as np

    n = len(values.queries)
    if unit == "queries":
        counts = np.stack([np.bincount(rng.integers(0, n, size=n), minlength=n) for _ in range(resamples)])
        weights = counts.astype(np.float64)
    else:
        names = sorted(set(values.clusters))
        of = np.array([names.index(c) for c in values.clusters], dtype=np.int64)
        k = len(names)
        drawn = np.stack([np.bincount(rng.integers(0, k, size=k), minlength=k) for _ in range(resamples)])
        weights = drawn[:, of].astype(np.float64)
    totals = weights.sum(axis=1, keepdims=True)
    means: NDArray[np.float64] = np.round((weights @ values.matrix) / totals, DECIMALS)
    return means


def _nearest_rank(sorted_values: Sequence[float] | NDArray[np.float64], pct: float) -> float:
    return float(sorted_values[max(0, math.ceil(pct / 100 * len(sorted_values)) - 1)])


def _settled(boot: NDArray[np.float64]) -> dict[tuple[int, int], int]:
    """(i, j) -> +1 when arm i is distinguishably above arm j, -1 below, 0 when the interval holds zero."""
    import numpy as np

    lo_pct, hi_pct = 100 * (1 - LEVEL) / 2, 100 * (1 + LEVEL) / 2
    out = {}
    for i, j in combinations(range(boot.shape[1]), 2):
        diffs = np.sort(boot[:, i] - boot[:, j])
        lo, hi = _nearest_rank(diffs, lo_pct), _nearest_rank(diffs, hi_pct)
        out[(i, j)] = 1 if lo > 0 else -1 if hi < 0 else 0
    return out


def _ordering(names: Sequence[str], means: Sequence[float], settled: Mapping[tuple[int, int], int]) -> Ordering:
    order = sorted(range(len(names)), key=lambda i: (-means[i], names[i]))
    links = []
    for a, b in zip(order, order[1:], strict=False):
        if means[a] == means[b]:
            links.append("=")
        else:
            sign = settled[(a, b)] if a < b else -settled[(b, a)]
            links.append(">" if sign > 0 else "≈")
    return Ordering(tuple((names[i], means[i]) for i in order), tuple(links))


def agreement(documents: Sequence[Results], *, resamples: int = RESAMPLES, unit: str = "queries",
              seed: int = SEED, clusters: Mapping[str, Mapping[str, str]] | None = None) -> list[Cell]:
    """Every (class, measure) both corpora report, from metrics.json documents of arms on exactly two corpora.

    ``clusters`` (corpus id -> query id -> meeting) is what ``unit="meetings"`` resamples by: each query goes with
    the meeting it names there (its first gold meeting, say)."""
    import numpy as np

    if unit not in UNITS:
        raise BadInput(f"agreement resamples {' or '.join(UNITS)}, not {unit!r}")
    if not isinstance(resamples, int) or resamples < 100:
        raise BadInput(f"agreement needs at least 100 resamples for its intervals, not {resamples!r}")
    if unit == "meetings" and clusters is None:
        raise BadInput("resampling meetings needs each query's meeting (the results' qrels.meetings.txt)")
    by_corpus = _collect(documents)
    if len(by_corpus) != 2:
        raise BadInput(f"agreement compares two corpora; the results name {len(by_corpus)}: "
                       f"{', '.join(sorted(by_corpus))}")
    (a, arms_a), (b, arms_b) = sorted(by_corpus.items())
    common = sorted(set(arms_a) & set(arms_b))
    if len(common) < MIN_ARMS:
        raise BadInput(f"agreement needs at least {MIN_ARMS} arms on both corpora; both have {len(common)}: "
                       f"{', '.join(common) or 'none'}")
    keys = sorted(set.intersection(*(set(arms_a[x]) & set(arms_b[x]) for x in common)))
    cells = []
    for n_key, key in enumerate(keys):
        va = _matrix(arms_a, common, key, a, clusters.get(a, {}) if clusters is not None else None)
        vb = _matrix(arms_b, common, key, b, clusters.get(b, {}) if clusters is not None else None)
        mean_a = [round(float(x), DECIMALS) for x in va.matrix.mean(axis=0)]
        mean_b = [round(float(x), DECIMALS) for x in vb.matrix.mean(axis=0)]
        # one stream per cell, so a cell's interval does not depend on which other cells were asked for
        rng = np.random.default_rng(np.random.SeedSequence([seed, n_key]))
        boot_a, boot_b = _resampled_means(va, unit, resamples, rng), _resampled_means(vb, unit, resamples, rng)
        settled_a, settled_b = _settled(boot_a), _settled(boot_b)
        inert = [i for i in range(len(common)) if mean_a[i] <= INERT_MEAN and mean_b[i] <= INERT_MEAN]
        live = [i for i in range(len(common)) if i not in inert]
        taus = [tau_b([boot_a[r, i] for i in live], [boot_b[r, i] for i in live]) for r in range(resamples)]
        defined = sorted(t for t in taus if t is not None)
        interval = ((_nearest_rank(defined, 100 * (1 - LEVEL) / 2), _nearest_rank(defined, 100 * (1 + LEVEL) / 2))
                    if defined else None)
        pairs = list(combinations(range(len(common)), 2))
        swaps = tuple((common[i], common[j]) for i, j in pairs if settled_a[(i, j)] * settled_b[(i, j)] < 0)
        unresolved = sum(1 for i, j in pairs if (settled_a[(i, j)] == 0) != (settled_b[(i, j)] == 0))
        cells.append(Cell(
            cls=key[0], measure=key[1], arms=tuple(common), inert=tuple(common[i] for i in inert),
            orders={a: _ordering(common, mean_a, settled_a), b: _ordering(common, mean_b, settled_b)},
            tau_b=tau_b([mean_a[i] for i in live], [mean_b[i] for i in live]), interval=interval,
            undefined_resamples=resamples - len(defined), tau_b_all=tau_b(mean_a, mean_b), swaps=swaps,
            unresolved=unresolved, queries={a: len(va.queries), b: len(vb.queries)}))
    return cells
