"""Verdicts over several seeds: each seed compared alone, and paired queries pooled across seeds (docs/design.md §7).

One corpus draw cannot say whether a verdict holds for the next seed. ``bench --seeds`` writes one results
directory per seed (``OUT/<arm>/seed-<S>/``); ``compare`` of two such sets

* pairs seed with seed — the seed sets must be the same, and each pair must pass every check a single
  comparison makes (same corpus text, policy, scope and queries);
* compares each seed on its own (its own Holm family), and
* pools: every paired query of every seed in one row per class × measure, its interval and p-value from a
  bootstrap stratified by seed (each seed's queries resampled within that seed, so each keeps its share of
  the pooled mean), Holm-adjusted over the pooled rows. The gate reads the pooled rows.

A cell whose verdict is not the same in every seed is called out: a *flip* when one seed says better and
another worse, *unstable* when some seeds name a difference and others do not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from turnbench.errors import BadInput, ResultsIntegrityError, UnpairedComparison
from turnbench.harness.bindings import Binding
from turnbench.harness.compare import (
    BETTER,
    BOOTSTRAP_FACTS,
    GUARD_ALPHA,
    RESAMPLES,
    SEED,
    VERDICT_FACTS,
    WORSE,
    Comparison,
    Table,
    adjust_by_family,
    block_order,
    compare,
    compare_table,
    gated,
    paired_tables,
)
from turnbench.results.record import Results


@dataclass(frozen=True)
class SeedsComparison:
    seeds: tuple[int, ...]
    per_seed: Mapping[int, Comparison]
    pooled: Comparison
    callouts: tuple[str, ...]  # cells whose verdict is not the same in every seed

    def gate_failures(self) -> list[str]:
        return self.pooled.gate_failures()

    def warnings(self) -> list[str]:
        return self.pooled.warnings()

    def to_json(self) -> dict[str, Any]:
        return {"seeds": list(self.seeds), "pooled": self.pooled.to_json(), "callouts": list(self.callouts),
                "gate_failures": self.gate_failures(),
                "per_seed": {str(s): c.to_json() for s, c in self.per_seed.items()}}


def _pooled_table(tables: Mapping[int, Table]) -> Table:
    """One table of every seed's records, keyed ``<seed>/<query>``, grouped without the corpus key."""
    first = next(iter(tables.values()))
    if first.group_keys[0] != "corpus":
        raise BadInput(f"{first.name}: rows are not grouped by corpus first; they cannot be pooled")
    records: dict[str, tuple[tuple[str, ...], Mapping[str, float]]] = {}
    strata: dict[str, str] = {}
    for seed, t in tables.items():
        for qid, (groups, values) in t.records.items():
            key = f"{seed}/{qid}"
            records[key] = (groups[1:], values)
            strata[key] = f"{seed:012d}"
    return Table(first.name, first.group_keys[1:], first.measures, records, strata)


def check_seed_set(side: str, docs: Mapping[int, Results]) -> None:
    """Refuse a set whose directories are not what their names say: ``seed-S/`` must hold results of the corpus of
    seed S, and no two seeds may hold one corpus (the same queries counted twice would shrink every interval)."""
    by_sha: dict[str, int] = {}
    for seed in sorted(docs):
        corpus = docs[seed].provenance.corpus
        if corpus.seed != seed:
            raise ResultsIntegrityError(f"the {side}'s seed-{seed}/ holds results of corpus {corpus.id}, whose "
                                        f"seed is {corpus.seed!r}, not {seed}")
        first = by_sha.setdefault(corpus.sha256, seed)
        if first != seed:
            raise ResultsIntegrityError(f"the {side}'s seed-{first}/ and seed-{seed}/ hold results of one corpus "
                                        f"(sha256 {corpus.sha256[:12]}…): a set needs distinct corpora")


def cell_of(row: Any) -> tuple[str, tuple[tuple[str, str], ...], str]:
    return (row.block, tuple((k, v) for k, v in row.groups if k != "corpus"), row.measure)


def compare_seeds(base: Mapping[int, Results], cand: Mapping[int, Results], *,
                  resamples: int = RESAMPLES, seed: int = SEED,
                  bindings: Mapping[int, tuple[Sequence[Binding], Sequence[Binding]]] | None = None,
                  guard_level: float = GUARD_ALPHA, measures: Sequence[str] = ()) -> SeedsComparison:
    if sorted(base) != sorted(cand):
        raise UnpairedComparison(f"seed sets differ: baseline {sorted(base)}, candidate {sorted(cand)}")
    seeds = tuple(sorted(base))
    for side, docs in (("baseline", base), ("candidate", cand)):
        check_seed_set(side, docs)
    per_seed = {s: compare(base[s], cand[s], resamples=resamples, seed=seed,
                           bindings=(bindings or {}).get(s), guard_level=guard_level, measures=measures)
                for s in seeds}
    paired = {s: paired_tables(base[s], cand[s], measures) for s in seeds}
    bt = {s: paired[s][0] for s in seeds}
    ct = {s: paired[s][1] for s in seeds}
    names = sorted(bt[seeds[0]], key=block_order)
    for s in seeds:
        if sorted(bt[s]) != sorted(bt[seeds[0]]):
            raise UnpairedComparison(f"seed {s}'s results hold the blocks {', '.join(sorted(bt[s]))} and seed "
                                     f"{seeds[0]}'s {', '.join(sorted(bt[seeds[0]]))}: a set pools only seeds that "
                                     "measured the same things")
    rows = []
    for name in names:
        rows += compare_table(_pooled_table({s: bt[s][name] for s in seeds}),
                              _pooled_table({s: ct[s][name] for s in seeds}), resamples, seed, guard_level)
    family = adjust_by_family(rows)
    first = per_seed[seeds[0]].facts
    facts = {
        "corpus": f"{len(seeds)} seeds pooled ({', '.join(str(s) for s in seeds)})",
        "corpus_sha256": " ".join(per_seed[s].facts["corpus_sha256"][:12] for s in seeds),
        "relevance_policy": first["relevance_policy"], "scope": first["scope"], "oracle": first["oracle"],
        "queries": {n: sum(per_seed[s].facts["queries"][n] for s in seeds) for n in first["queries"]},
        "bootstrap": BOOTSTRAP_FACTS | {"resamples": resamples, "seed": seed, "strata": "seed"},
        "verdicts": VERDICT_FACTS | {"family": gated(family), "guard_level": guard_level},
        "seeds": list(seeds),
    }
    notes = tuple(sorted({n for c in per_seed.values() for n in c.notes}))
    pooled = Comparison(base[seeds[0]].label, cand[seeds[0]].label, facts, notes, family)
    return SeedsComparison(seeds, per_seed, pooled, _callouts(seeds, per_seed))


def _callouts(seeds: Sequence[int], per_seed: Mapping[int, Comparison]) -> tuple[str, ...]:
    verdicts: dict[tuple[str, tuple[tuple[str, str], ...], str], dict[int, str]] = {}
    for s in seeds:
        for r in per_seed[s].rows:
            verdicts.setdefault(cell_of(r), {})[s] = r.verdict
    out = []
    for (block, groups, measure), by_seed in verdicts.items():
        kinds = set(by_seed.values())
        if len(kinds) == 1:
            continue
        kind = "FLIPS" if {BETTER, WORSE} <= kinds else "unstable"
        where = " ".join(v for _, v in groups)
        out.append(f"{kind}: {block} {where} {measure}: " + ", ".join(f"seed {s} {v}" for s, v in by_seed.items()))
    return tuple(out)


