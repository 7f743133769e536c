"""Compare two results directories: paired bootstrap intervals, verdicts and the gate (docs/design.md §7).

Everything is recomputed from the per-query rows of the two metrics.json files, so a comparison needs
nothing but the files. The code is blind to what a block measures: a block is group keys plus
per-query values (``Table``), so the retrieval rows (corpus × class) and the answer rows (corpus × rule)
go through the same pairing checks, bootstrap and verdicts.

The interval: paired by query id; the per-query differences (candidate − baseline) of one row are
resampled with replacement ``resamples`` times with numpy's default generator seeded from the recorded
seed and the row's identity (so adding a row never moves another row's interval); the bounds are the
nearest-rank 2.5th and 97.5th percentiles of the resampled means — the values at 1-based ranks
⌈0.025·B⌉ and ⌈0.975·B⌉ of the sorted means, no interpolation. Each row's two-sided p-value comes from a
paired randomisation (sign-flip) test with as many flips (``stats.randomisation_p``).

What the rows mean — Holm's families, the lookup guard (a one-sided sign-flip max-T test over the lookup measures,
outside the family: a lookup loss within noise is a warning, not a failure), the gate and each row's detectable
effect — is ``turnbench.harness.verdicts``. Beside each Δ: its relative size against the baseline and the per-query
wins, ties and losses.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from turnbench.canonical import q6
from turnbench.corpus.records import AGGREGATION_RULES, RANKED_CLASSES
from turnbench.errors import BadInput, StaleBinding, UnpairedComparison
from turnbench.harness.bindings import Binding, first_difference
from turnbench.harness.stats import bootstrap_means, guard, nearest_rank, randomisation_p
from turnbench.harness.verdicts import (
    ALPHA,
    BETTER,
    GUARD_ALPHA,
    POWER,
    REPORT_ONLY,
    SAME,
    STRICT_CLASS,
    VERDICT_FACTS,
    WORSE,
    Row,
    adjust,
    adjust_by_family,
    adjusted_verdict,
    detectable,
    gate_failures,
    gated,
    guard_fires,
    guard_warnings,
    holm_critical,
    verdict,
)
from turnbench.results.record import Answers, Results, digest_differences
from turnbench.results.tables import Block

# the verdicts' names stay importable from here, where every reader of a comparison has found them
__all__ = ["ALPHA", "BETTER", "GUARD_ALPHA", "POWER", "REPORT_ONLY", "SAME", "STRICT_CLASS", "VERDICT_FACTS", "WORSE",
           "Row", "adjust", "adjust_by_family", "adjusted_verdict", "detectable", "gate_failures", "gated",
           "guard_fires", "guard_warnings", "holm_critical", "verdict", "Comparison", "Table", "compare",
           "compare_table", "check_paired", "paired_tables", "tables_of", "table_groups", "gated_family", "family_of",
           "group_sort_key", "paired_interval", "block_order", "bootstrap_means", "RESAMPLES", "SEED",
           "ALL", "BOOTSTRAP_FACTS", "TABLE_READERS"]

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from turnbench.harness.snapshots import Snapshots

RESAMPLES = 10_000
SEED = 20261130
LOW_PERCENTILE = "2.5"
HIGH_PERCENTILE = "97.5"
ALL = "all"
BOOTSTRAP_FACTS = {"interval": "95%, nearest rank", "generator": "numpy.random.default_rng",
                   "resampling": "query indices with replacement (within each seed when pooled), as counts x deltas",
                   "p": "two-sided paired randomisation (sign-flip) test, (1 + #{|flipped mean| >= |mean|}) / (B + 1), "
                        "B as many flips as resamples"}
_ORDER = {name: i for i, name in enumerate((*RANKED_CLASSES, *AGGREGATION_RULES))}


@dataclass(frozen=True)
class Table:
    """One comparable block: per query, its group values and measure values (a missing measure is absent)."""

    name: str
    group_keys: tuple[str, ...]
    measures: tuple[str, ...]
    records: Mapping[str, tuple[tuple[str, ...], Mapping[str, float]]]
    # record key -> stratum (a seed's corpus) when several are pooled; resampled within each, sizes kept
    strata: Mapping[str, str] = field(default_factory=dict)


def _retrieval_table(block: Block, name: str = "retrieval", comparable: bool = False) -> Table:
    """The passage and meeting measures (``comparable``: instead, those comparable across chunkings)."""
    keys = block.group_by
    across = set(block.comparable)
    measures = tuple(m for m in block.measures if (m in across) == comparable)
    recs = {r.query_id: (tuple(str(r.group(k)) for k in keys), {m: v for m, v in r.values.items() if m in measures})
            for r in block.per_query}
    return Table(name, keys, measures, recs)


def _comparable_table(block: Block) -> Table:
    return _retrieval_table(block, "comparable", comparable=True)


_ANSWER_MEASURES = ("em", "partial", "answered", "set_f1")


def _answers_table(block: Answers) -> Table:
    keys = ("corpus", "rule")
    recs = {}
    for r in block.per_query:
        values = {}
        for m in _ANSWER_MEASURES:
            v = getattr(r, m)
            if v is not None:
                values[m] = float(v)  # `answered` is a bool per query: its mean is the answered share
        recs[r.query_id] = ((r.corpus, r.rule), values)
    return Table("answers", keys, _ANSWER_MEASURES, recs)


# how each known block of a results record becomes Tables: (table name, reader); a new block needs one entry here,
# nothing else
TABLE_READERS: tuple[tuple[str, Callable[[Results], Table | None]], ...] = (
    ("retrieval", lambda r: _retrieval_table(r.retrieval) if r.retrieval else None),
    ("comparable", lambda r: _comparable_table(r.retrieval) if r.retrieval else None),
    ("strict", lambda r: _retrieval_table(r.strict, "strict") if r.strict else None),
    ("answers", lambda r: _answers_table(r.answers) if r.answers else None))


def tables_of(results: Results, measures: Sequence[str] = (), side: str = "results") -> dict[str, Table]:
    """The record's tables; with ``measures`` (extra measures' canonical names, ``metrics.selected``), also the
    ``extra`` table of just those, refused (BadInput) when the record did not record one of them."""
    tables = {name: reader(results) for name, reader in TABLE_READERS}
    if measures:
        tables["extra"] = _extra_table(results, measures, side)
    return {name: t for name, t in tables.items() if t is not None and t.measures}


def _extra_table(results: Results, measures: Sequence[str], side: str) -> Table:
    """The extra measures asked for, as the record holds them: compare reads recorded values, never a run again."""
    missing = [m for m in measures if results.extra is None or m not in results.extra.measures]
    if missing or results.extra is None:
        raise BadInput(f"--measure {missing[0]}: the {side} ({results.label} on {results.corpus_id}) did not record "
                       f"it; score it again with --measure {missing[0]}")
    whole = _retrieval_table(results.extra, "extra")
    recs = {q: (g, {m: v for m, v in values.items() if m in measures}) for q, (g, values) in whole.records.items()}
    return Table("extra", whole.group_keys, tuple(m for m in whole.measures if m in measures), recs)


def paired_tables(base: Results, cand: Results, measures: Sequence[str] = ()
                  ) -> tuple[dict[str, Table], dict[str, Table]]:
    """Both records' tables; one record read on both sides (a side compared with itself, or a copy read once)
    is made into tables once."""
    bt = tables_of(base, measures, "baseline")
    return bt, bt if cand is base else tables_of(cand, measures, "candidate")




@dataclass(frozen=True)
class Comparison:
    baseline: str  # a label for each side (arm name, or "external/unknown")
    candidate: str
    facts: Mapping[str, Any]  # what was paired: corpus, policy, scope, query count, bootstrap settings
    notes: tuple[str, ...]  # differences that do not prevent pairing but a reader should see
    rows: tuple[Row, ...]

    def counts(self) -> dict[str, int]:
        """Verdicts of the gated rows."""
        out = {BETTER: 0, WORSE: 0, SAME: 0}
        for r in self.rows:
            if r.block not in REPORT_ONLY:
                out[r.verdict] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "candidate": self.candidate, "facts": dict(self.facts),
                "notes": list(self.notes), "counts": self.counts(), "gate_failures": self.gate_failures(),
                "rows": [r.to_json() for r in self.rows]}

    def gate_failures(self) -> list[str]:
        return gate_failures(self.rows, self.guard_level())

    def warnings(self) -> list[str]:
        """Lookup losses the guard cannot tell from noise: shown, never failed."""
        return guard_warnings(self.rows, self.guard_level())

    def guard_level(self) -> float:
        return float(self.facts.get("verdicts", {}).get("guard_level", GUARD_ALPHA))










def _diff(what: str, a: Any, b: Any) -> None:
    if a != b:
        raise UnpairedComparison(f"{what} differ: baseline {a!r}, candidate {b!r}")


def check_paired(base: Results, cand: Results,
                 bindings: tuple[Sequence[Binding], Sequence[Binding]] | None = None,
                 tables: tuple[Mapping[str, Table], Mapping[str, Table]] | None = None, across: bool = False) -> None:
    """Refuse (UnpairedComparison) unless the two results measured the same thing on the same queries.

    With both sides' ``bindings``, a corpus whose text changed under a target both were judged on is named as
    the stale binding it is (StaleBinding) rather than as two corpora that merely differ. ``tables``: the two
    records' ``tables_of``, when the caller holds them already; ``across``: two snapshots of one corpus, their
    tables cut to the queries comparable across them (``turnbench.harness.snapshots``), whose texts differ."""
    _diff("schema versions", base.schema_version, cand.schema_version)
    bc, cc = base.provenance.corpus, cand.provenance.corpus
    _diff("corpora (id)", bc.id, cc.id)
    if bindings is not None and bc.sha256 != cc.sha256 and not across:
        stale = first_difference(*bindings)
        if stale is not None:
            raise StaleBinding(
                f"corpus {bc.id} changed between the baseline (sha256 {bc.sha256[:12]}…) "
                f"and the candidate ({cc.sha256[:12]}…): {stale} is bound to different text in the "
                "two; re-score the baseline on the candidate's corpus")
    if not across:
        _diff("corpora (sha256)", bc.sha256, cc.sha256)
    _diff("relevance policies", base.provenance.policy, cand.provenance.policy)
    _diff("scopes", base.scope.label, cand.scope.label)
    if base.answers is not None and cand.answers is not None:  # e.g. a count tolerance of 1 against one of 0
        _diff("answer scoring policies", base.answers.policy, cand.answers.policy)
    bt, ct = tables if tables is not None else paired_tables(base, cand)
    if bt is ct:
        return  # one document on both sides: paired with itself
    _diff("result blocks", sorted(bt), sorted(ct))
    for name in sorted(bt):
        b, c = bt[name], ct[name]
        only_b = sorted(set(b.records) - set(c.records))
        only_c = sorted(set(c.records) - set(b.records))
        if only_b or only_c:
            raise UnpairedComparison(
                f"query sets differ in {name}: {len(only_b)} only in the baseline"
                f"{' (e.g. ' + ', '.join(only_b[:3]) + ')' if only_b else ''}, {len(only_c)} only in the candidate"
                f"{' (e.g. ' + ', '.join(only_c[:3]) + ')' if only_c else ''}")
        _diff(f"{name} measures", b.measures, c.measures)
        for qid in sorted(b.records):
            (bg, bv), (cg, cv) = b.records[qid], c.records[qid]
            if bg != cg:
                raise UnpairedComparison(f"query {qid} is grouped {bg} in the baseline but {cg} in the candidate")
            if sorted(bv) != sorted(cv):
                raise UnpairedComparison(f"query {qid} has measures {sorted(bv)} in the baseline but {sorted(cv)} "
                                         f"in the candidate")


def group_sort_key(groups: tuple[str, ...]) -> tuple:
    return tuple((1, 0, v) if v == ALL else (0, _ORDER.get(v, len(_ORDER)), v) for v in groups)


def _row_seed(seed: int, *parts: str) -> list[int]:
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return [seed, int.from_bytes(digest[:8], "big")]


def paired_interval(deltas: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED,
                    identity: Sequence[str] = ()) -> tuple[float, float]:
    """The nearest-rank 95% interval of the mean of one column of paired differences."""
    import numpy as np

    means = bootstrap_means(np.asarray(deltas, dtype=np.float64).reshape(-1, 1), resamples,
                            _row_seed(seed, *identity))
    col = means[:, 0].tolist()
    return nearest_rank(col, LOW_PERCENTILE), nearest_rank(col, HIGH_PERCENTILE)








def block_order(name: str) -> tuple[bool, bool, str]:
    """The gated blocks first (retrieval, then answers), then the report-only ones."""
    return (name in REPORT_ONLY, name != "retrieval", name)










def _guarded_group(table: Table, g: tuple[str, ...]) -> bool:
    """The lookup class's group of the retrieval block: the rows the lookup guard tests."""
    return table.name == "retrieval" and dict(zip(table.group_keys, g, strict=True)).get("class") == STRICT_CLASS


def table_groups(b: Table) -> dict[tuple[str, ...], list[str]]:
    """A table's rows: each group's query ids, with an ``all`` group rolling up the last key within the others
    (every class of a corpus). Within a group, records sit stratum by stratum, each one consecutive block."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for qid in sorted(b.records, key=lambda q: (b.strata.get(q, ""), q)):
        g = b.records[qid][0]
        groups.setdefault(g, []).append(qid)
        groups.setdefault((*g[:-1], ALL), []).append(qid)
    return groups


def gated_family(results: Results) -> int:
    """How many gated rows a comparison of this record with another of the same queries has: the size of the
    Holm family its verdicts are adjusted over."""
    return family_of(tables_of(results))


def family_of(tables: Mapping[str, Table]) -> int:
    """``gated_family`` of a record's tables, already made (``tables_of``)."""
    return sum(len({m for q in qids for m in t.records[q][1]})
               for name, t in tables.items() if name not in REPORT_ONLY for qids in table_groups(t).values())


def compare_table(b: Table, c: Table, resamples: int, seed: int, guard_level: float = GUARD_ALPHA) -> list[Row]:
    """Every group × measure row of one table. ``guard_level``: the lookup guard's level for this comparison (the
    guard of a comparison over several corpora tests each at its share)."""
    import numpy as np

    keys = b.group_keys
    groups = table_groups(b)
    # the guard's level is shared out (Bonferroni) over the lookup groups of this table (one per corpus)
    guarded = [g for g in groups if _guarded_group(b, g)]
    rows = []
    for g in sorted(groups, key=group_sort_key):
        qids = groups[g]
        # measures present on the same queries share one set of resample indices
        buckets: dict[tuple[str, ...], list[str]] = {}
        for m in b.measures:
            have = tuple(q for q in qids if m in b.records[q][1])
            if have:
                buckets.setdefault(have, []).append(m)
        results: dict[str, Row] = {}
        for have, ms in buckets.items():
            base = np.array([[b.records[q][1][m] for m in ms] for q in have], dtype=np.float64)
            cand = np.array([[c.records[q][1][m] for m in ms] for q in have], dtype=np.float64)
            d = cand - base
            sizes: dict[str, int] = {}
            for q in have:
                sizes[b.strata.get(q, "")] = sizes.get(b.strata.get(q, ""), 0) + 1
            entropy = _row_seed(seed, b.name, *g, *ms)
            means = bootstrap_means(d, resamples, entropy, list(sizes.values()) if len(sizes) > 1 else None)
            pvalues = randomisation_p(d, resamples, entropy)
            col_lists = means.T.tolist()
            share = len(guarded) * len(buckets)
            if g in guarded:
                # one family per bucket of measures with the same queries, each at its share of the level
                guard_p, maxima = guard(d, resamples, entropy)
                critical = nearest_rank(maxima.tolist(), str(100 * (1 - Fraction(str(guard_level)) / share)))
            for j, m in enumerate(ms):
                row = _row(b.name, tuple(zip(keys, g, strict=True)), m, base[:, j], cand[:, j], col_lists[j],
                           pvalues[j])
                if g in guarded:
                    row = replace(row, p_guard=q6(min(1.0, guard_p[j] * share)), guard_critical=critical)
                results[m] = row
        rows += [results[m] for m in b.measures if m in results]
    return rows


def _row(block: str, groups: tuple[tuple[str, str], ...], measure: str, base: NDArray[np.float64],
         cand: NDArray[np.float64], sorted_means: list[float], p_value: float) -> Row:
    n = len(base)
    bm = q6(math.fsum(base.tolist()) / n)
    cm = q6(math.fsum(cand.tolist()) / n)
    diff = cand - base
    delta = q6(math.fsum(diff.tolist()) / n)
    low = q6(nearest_rank(sorted_means, LOW_PERCENTILE))
    high = q6(nearest_rank(sorted_means, HIGH_PERCENTILE))
    wins, losses = _wins_losses(diff)
    p = q6(p_value)
    sd = q6(statistics.stdev(diff.tolist())) if n > 1 else 0.0
    return Row(block, groups, measure, n, bm, cm, delta, low, high, verdict(low, high), p, p,
               verdict(low, high), q6(delta / bm) if bm else None, wins, n - wins - losses, losses, sd)


# |x| beyond this rounds to at least 1e-6 at 6 decimals, and |x| below _NEAR_ZERO rounds to 0; between the two,
# q6 itself decides (a difference exactly at half a unit is rounded as q6 rounds it)
_NOT_ZERO, _NEAR_ZERO = 6e-7, 4e-7


def _wins_losses(d: NDArray[np.float64]) -> tuple[int, int]:
    """How many differences are above and below zero at 6 decimals, as ``q6(x) > 0`` and ``q6(x) < 0`` count
    them: per-query values are written to 6 decimals, so a difference below that is no difference."""
    near = d[(abs(d) > _NEAR_ZERO) & (abs(d) <= _NOT_ZERO)].tolist()
    wins = int((d > _NOT_ZERO).sum()) + sum(1 for x in near if q6(x) > 0.0)
    losses = int((d < -_NOT_ZERO).sum()) + sum(1 for x in near if q6(x) < 0.0)
    return wins, losses


def compare(base: Results, cand: Results, *, resamples: int = RESAMPLES, seed: int = SEED,
            bindings: tuple[Sequence[Binding], Sequence[Binding]] | None = None,
            guard_level: float = GUARD_ALPHA, across: Snapshots | None = None,
            measures: Sequence[str] = ()) -> Comparison:
    """Pair two results records and compare every block, group and measure (``across``: two snapshots of one
    corpus, on the queries comparable across them alone; ``measures``: extra measures both recorded, compared in a
    report-only ``extra`` block)."""
    bt, ct = paired_tables(base, cand, measures)
    if across is not None:
        keep = across.comparable
        bt, ct = ({n: replace(t, records={q: v for q, v in t.records.items() if q in keep}) for n, t in side.items()}
                  for side in (bt, ct))
    check_paired(base, cand, bindings, (bt, ct), across=across is not None)
    rows: list[Row] = []
    for name in sorted(bt, key=block_order):
        rows += compare_table(bt[name], ct[name], resamples, seed, guard_level)
    family = adjust_by_family(rows)
    bp, cp = base.provenance, cand.provenance
    # first: when the vectors differ, every dense metric's difference follows from them
    notes = digest_differences(base, cand)
    if bp.metric_engine != cp.metric_engine:
        notes.append(f"metric engines differ: baseline {bp.metric_engine.get('version')}, "
                     f"candidate {cp.metric_engine.get('version')}")
    notes += [f"library versions differ: {line.replace(' now', ' in the candidate')}"
              for line in bp.library_drift(cp)]
    bd, cd = bp.run_depth, cp.run_depth
    if bd is not None and cd is not None and bd != cd:
        notes.append(f"run depths differ: the baseline ranks up to {bd} passages a question, the candidate {cd}; a "
                     f"measure that reads past rank {min(bd, cd)} counts the shallower run's missing ranks as misses")
    if base.answers is not None and base.answers.answerer != (cand.answers.answerer if cand.answers else None):
        notes.append(f"answerers differ: baseline {base.answers.answerer}, "
                     f"candidate {cand.answers.answerer if cand.answers else None}")
    facts = {
        "corpus": bp.corpus.id,
        "corpus_sha256": bp.corpus.sha256,
        "relevance_policy": bp.policy,
        "scope": base.scope.label,
        "oracle": base.scope.oracle,
        "queries": {name: len(t.records) for name, t in sorted(bt.items())},
        "bootstrap": BOOTSTRAP_FACTS | {"resamples": resamples, "seed": seed},
        "verdicts": VERDICT_FACTS | {"family": gated(family), "guard_level": guard_level},
        **({"snapshots": across.to_json()} if across is not None else {}),
    }
    return Comparison(base.label, cand.label, facts, tuple(notes), family)
