"""Search pipelines turnbench accepts, and the proof that the server did what one declares (docs/design.md §12 rule 4).

A pipeline setting the server silently ignores is worse than one it rejects: OpenSearch 2.19.6's
``score-ranker-processor`` reads the RRF rank constant from ``combination.parameters.rank_constant`` and ignores a
``rank_constant`` written directly under ``combination`` (where its documentation shows it), fusing with 60 while
the arm says 20. The only way to know what a server did is to read back what it returned. So:

* ``parse`` accepts only the phase-results processors whose arithmetic is known here — ``score-ranker-processor``
  (RRF) and ``normalization-processor`` (min_max or l2 normalisation; arithmetic, geometric or harmonic mean with
  optional weights) — every key of their configuration checked, and refuses a key the server would ignore;
* ``expected`` recomputes, from each sub-query's own ranked list, what the server must return for a document under
  the declared settings, in the server's float32 arithmetic (neural-search 2.19.6: min-max floors a zero at 0.001
  and gives a lone top score 1.0; a document a sub-query did not return counts 0 there with its weight in the
  arithmetic mean and is skipped in the geometric and harmonic ones; RRF scores 1/(k + position), rounded to 10
  decimals, summed over the lists);
* ``check`` compares the server's top hits of a sample of queries with that recomputation and refuses the arm
  (``SettingIgnored``, exit 3) when a score lies outside what the declared settings allow — an RRF score is allowed
  the range its ties could give it, since tied documents may be collected in either order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from turnbench.errors import BadInput, SettingIgnored

RRF = "score-ranker-processor"
NORMALIZATION = "normalization-processor"
PROCESSORS = (RRF, NORMALIZATION)
NORMALIZATIONS = ("min_max", "l2")
COMBINATIONS = ("arithmetic_mean", "geometric_mean", "harmonic_mean")
DEFAULT_RANK_CONSTANT = 60
SAMPLE_QUERIES = 20  # queries whose top hits are re-derived from their sub-queries' own lists
CHECKED_DEPTH = 10
TOLERANCE = 1e-5  # float32 arithmetic on the server, float64 here: far below any setting's effect


@dataclass(frozen=True)
class Fusion:
    """What a pipeline declares, as the server must apply it."""

    processor: str
    rank_constant: int = DEFAULT_RANK_CONSTANT  # RRF
    normalization: str = "min_max"
    combination: str = "arithmetic_mean"
    weights: tuple[float, ...] = ()  # empty: 1.0 for every sub-query

    def describe(self) -> str:
        if self.processor == RRF:
            return f"{RRF}: rrf, rank constant {self.rank_constant}"
        weights = f", weights {list(self.weights)}" if self.weights else ""
        return f"{NORMALIZATION}: {self.normalization} normalisation, {self.combination}{weights}"

    def weight(self, i: int) -> float:
        return self.weights[i] if i < len(self.weights) else 1.0


def _only(config: Any, keys: Sequence[str], where: str, what: str) -> Mapping[str, Any]:
    if not isinstance(config, Mapping):
        raise BadInput(f"{where}: [pipeline] {what} must be an object")
    extra = sorted(set(config) - set(keys))
    if extra:
        raise BadInput(f"{where}: [pipeline] {what} may hold {', '.join(keys) or 'nothing'}, not {', '.join(extra)}: "
                       "a key the server does not read would be silently ignored")
    return config


def parse(pipeline: Mapping[str, Any], where: str) -> Fusion:
    """The fusion a pipeline body declares (already confined to one phase-results processor)."""
    ((name, config),) = pipeline["phase_results_processors"][0].items()
    config = _only(config, ("combination", "normalization", "tag", "description", "ignore_failure")
                   if name == NORMALIZATION else ("combination", "tag", "description"), where, name)
    if config.get("ignore_failure"):
        raise BadInput(f"{where}: [pipeline] {name} with ignore_failure would return unfused scores on an error")
    combination = config.get("combination", {})
    if name == RRF:
        if isinstance(combination, Mapping) and "rank_constant" in combination:
            raise BadInput(f"{where}: [pipeline] puts rank_constant directly under combination, where OpenSearch "
                           "2.19.6 ignores it (it fuses with 60); write combination.parameters.rank_constant")
        combination = _only(combination, ("technique", "parameters"), where, f"{name} combination")
        if combination.get("technique", "rrf") != "rrf":
            raise BadInput(f"{where}: [pipeline] {name} combines by rrf only")
        params = _only(combination.get("parameters", {}), ("rank_constant",), where, f"{name} parameters")
        k = params.get("rank_constant", DEFAULT_RANK_CONSTANT)
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 10_000:
            raise BadInput(f"{where}: [pipeline] rank_constant must be a whole number from 1 to 10000, not {k!r}")
        return Fusion(RRF, rank_constant=k)
    normalization = _only(config.get("normalization", {}), ("technique",), where, f"{name} normalization")
    combination = _only(combination, ("technique", "parameters"), where, f"{name} combination")
    technique = normalization.get("technique", "min_max")
    how = combination.get("technique", "arithmetic_mean")
    if technique not in NORMALIZATIONS or how not in COMBINATIONS:
        raise BadInput(f"{where}: [pipeline] {name}: normalization {technique!r} / combination {how!r}: turnbench "
                       f"verifies {', '.join(NORMALIZATIONS)} with {', '.join(COMBINATIONS)}")
    params = _only(combination.get("parameters", {}), ("weights",), where, f"{name} parameters")
    weights = params.get("weights", [])
    if not isinstance(weights, list) or not all(isinstance(w, (int, float)) and not isinstance(w, bool)
                                                and 0.0 <= w <= 1.0 for w in weights):
        raise BadInput(f"{where}: [pipeline] weights must be a list of numbers from 0 to 1")
    if weights and not math.isclose(sum(weights), 1.0, abs_tol=1e-6):
        raise BadInput(f"{where}: [pipeline] weights must add up to 1, not {sum(weights)}")
    return Fusion(NORMALIZATION, normalization=technique, combination=how,
                  weights=tuple(float(w) for w in weights))


def sub_queries(body: Mapping[str, Any], where: str) -> list[Mapping[str, Any]]:
    """The sub-queries of a body whose query is ``hybrid`` (what a phase-results processor fuses)."""
    query = body.get("query")
    hybrid = query.get("hybrid") if isinstance(query, Mapping) else None
    queries = hybrid.get("queries") if isinstance(hybrid, Mapping) else None
    if not isinstance(queries, list) or len(queries) < 2:
        raise BadInput(f"{where}: a [pipeline] fuses the sub-queries of a hybrid query: the body's query must be "
                       "{\"hybrid\": {\"queries\": [two or more queries]}}")
    return queries


def _f32(x: float) -> float:
    import numpy as np

    return float(np.float32(x))


def _rrf_term(k: int, position: int) -> float:
    """neural-search's 1 / (k + position + 1), rounded to 10 decimals half up, as a float32."""
    return _f32(float((Decimal(1) / Decimal(k + position + 1)).quantize(Decimal("1e-10"), rounding=ROUND_HALF_UP)))


def _normalised(fusion: Fusion, hits: Sequence[tuple[str, float]]) -> dict[str, float]:
    scores = [_f32(s) for _, s in hits]
    if not scores:
        return {}
    if fusion.normalization == "l2":
        norm = _f32(math.sqrt(sum(s * s for s in scores)))
        return {pid: (_f32(s / norm) if norm else 0.0) for (pid, _), s in zip(hits, scores, strict=True)}
    lo, hi = min(scores), max(scores)
    out = {}
    for (pid, _), s in zip(hits, scores, strict=True):
        if hi == lo and s == hi:
            out[pid] = 1.0
        else:
            v = _f32((s - lo) / (hi - lo)) if hi > lo else 0.0
            out[pid] = v if v != 0.0 else _f32(0.001)
    return out


def expected(fusion: Fusion, lists: Sequence[Sequence[tuple[str, float]]]) -> dict[str, tuple[float, float]]:
    """For every document some sub-query returned, the (lowest, highest) fused score the declared settings allow."""
    docs = sorted({pid for hits in lists for pid, _ in hits})
    if fusion.processor == RRF:
        lo: dict[str, float] = dict.fromkeys(docs, 0.0)
        hi: dict[str, float] = dict.fromkeys(docs, 0.0)
        for hits in lists:
            first: dict[float, int] = {}
            last: dict[float, int] = {}
            for i, (_, s) in enumerate(hits):
                first.setdefault(s, i)
                last[s] = i
            for pid, s in hits:
                lo[pid] += _rrf_term(fusion.rank_constant, last[s])
                hi[pid] += _rrf_term(fusion.rank_constant, first[s])
        return {pid: (lo[pid], hi[pid]) for pid in docs}
    norms = [_normalised(fusion, hits) for hits in lists]
    out = {}
    for pid in docs:
        values = [(fusion.weight(i), n.get(pid, 0.0)) for i, n in enumerate(norms)]
        if fusion.combination == "arithmetic_mean":
            total_w = sum(w for w, v in values if v >= 0.0)
            score = sum(w * v for w, v in values if v >= 0.0) / total_w if total_w else 0.0
        elif fusion.combination == "geometric_mean":
            kept = [(w, v) for w, v in values if v > 0.0]
            total_w = sum(w for w, _ in kept)
            score = math.exp(sum(w * math.log(v) for w, v in kept) / total_w) if total_w else 0.0
        else:
            kept = [(w, v) for w, v in values if v > 0.0]
            harmonics = sum(w / v for w, v in kept)
            score = sum(w for w, _ in kept) / harmonics if harmonics > 0 else 0.0
        out[pid] = (score, score)
    return out


def check(fusion: Fusion, arm: str, where: str, server: Mapping[str, Sequence[tuple[str, float]]],
          lists: Mapping[str, Sequence[Sequence[tuple[str, float]]]]) -> dict[str, Any]:
    """Refuse (SettingIgnored) unless every one of the server's top ``CHECKED_DEPTH`` hits of each sampled query
    scores what the declared fusion of its sub-queries' own lists allows; returns what the check covered."""
    checked = 0
    for qid in sorted(server):
        allowed = expected(fusion, lists[qid])
        for rank, (pid, score) in enumerate(server[qid][:CHECKED_DEPTH], 1):
            bounds = allowed.get(pid)
            if bounds is None:
                raise SettingIgnored(f"{where}: arm {arm}: query {qid}: the server ranks {pid} at {rank}, but no "
                                     "sub-query returns it: the server did not fuse what the arm declares")
            if not bounds[0] - TOLERANCE <= score <= bounds[1] + TOLERANCE:
                want = f"{bounds[0]:.6g}" if bounds[0] == bounds[1] else f"{bounds[0]:.6g} to {bounds[1]:.6g}"
                raise SettingIgnored(
                    f"{where}: arm {arm}: query {qid}: the server scores {pid} (rank {rank}) {score:.6g}, where "
                    f"{fusion.describe()} gives {want}: the server did not apply the declared settings")
            checked += 1
    return {"rule": f"the top {CHECKED_DEPTH} hits of the first {SAMPLE_QUERIES} queries re-derived from each "
                    "sub-query's own ranked list under the declared settings",
            "fusion": fusion.describe(), "queries": len(server), "hits": checked}
