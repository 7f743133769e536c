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

Verdicts are Holm-adjusted across the family of rows one comparison gates (the retrieval and answer blocks): a
difference is named only when its adjusted p-value is below ``ALPHA`` — "better" or "worse" by the sign of
Δ, otherwise "no measurable difference". Testing some thirty cells at 95% each, an unadjusted gate would
fail a change that does nothing most of the time; the interval's own verdict is kept beside it
(``verdict_unadjusted``) for a reader who wants it. Beside each Δ: its relative size against the baseline
and the per-query wins, ties and losses.

The gate fails when any gated row's adjusted verdict is "worse", or when any ``lookup`` measure's delta in the
retrieval block is negative at all: lookup is the class a product cannot afford to lose, so it must not regress
even within noise. The report-only blocks — ``comparable`` (span and entry-point measures, comparable across
chunkings) and ``strict`` (only grades ≥ 2 relevant) — are compared the same way, each Holm-adjusted over its own
rows, and shown; they never gate.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from turnbench.canonical import q6
from turnbench.corpus.records import AGGREGATION_RULES, RANKED_CLASSES
from turnbench.errors import StaleBinding, UnpairedComparison
from turnbench.harness.bindings import first_difference
from turnbench.harness.integrity import digest_differences
from turnbench.harness.score import arm_label
from turnbench.harness.stats import bootstrap_means, guard, holm, nearest_rank, randomisation_p, z_quantile

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

RESAMPLES = 10_000
SEED = 20261130
LOW_PERCENTILE = "2.5"
HIGH_PERCENTILE = "97.5"
ALPHA = 0.05
# the lookup guard's one-sided level, outside the Holm family: the gate's chance of failing a change that changes
# nothing is at most the worse half of Holm's two-sided 0.05 plus this (docs/gate.md has it measured)
GUARD_ALPHA = 0.025
POWER = 0.8  # the power a stated detectable effect is stated at
BETTER, WORSE, SAME = "better", "worse", "no measurable difference"
ALL = "all"
STRICT_CLASS = "lookup"
BOOTSTRAP_FACTS = {"interval": "95%, nearest rank", "generator": "numpy.random.default_rng",
                   "resampling": "query indices with replacement (within each seed when pooled), as counts x deltas",
                   "p": "two-sided paired randomisation (sign-flip) test, (1 + #{|flipped mean| >= |mean|}) / (B + 1), "
                        "B as many flips as resamples"}
VERDICT_FACTS = {"adjustment": "Holm over the gated rows (retrieval and answers); each report-only block (comparable, "
                               "strict) Holm over its own rows", "alpha": ALPHA,
                 "gate": "fails on any gated row worse after adjustment, or on any lookup retrieval measure worse "
                         "beyond noise by the lookup guard (one-sided paired sign-flip max-T over the lookup measures, "
                         "outside the Holm family); a lookup delta below 0 within noise is a warning; report-only "
                         "rows never gate",
                 "guard_alpha": GUARD_ALPHA,
                 "detectable": "the delta a row's rule finds with 80% power: (c + z(0.8)) * sd / sqrt(n), c the "
                               "rule's critical value (Holm's first step, z(1 - alpha / 2m), or the guard's max-T "
                               "quantile), sd the per-query differences' standard deviation"}
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


def _retrieval_table(block: Mapping[str, Any], name: str = "retrieval", comparable: bool = False) -> Table:
    """The passage and meeting measures (``comparable``: instead, those comparable across chunkings)."""
    keys = tuple(block["group_by"])
    across = set(block.get("comparable_across_chunkings", ()))
    measures = tuple(m for m in block["measures"] if (m in across) == comparable)
    recs = {r["query_id"]: (tuple(str(r[k]) for k in keys), {m: v for m, v in r["values"].items() if m in measures})
            for r in block["per_query"]}
    return Table(name, keys, measures, recs)


def _comparable_table(block: Mapping[str, Any]) -> Table:
    return _retrieval_table(block, "comparable", comparable=True)


_ANSWER_MEASURES = ("em", "partial", "answered", "set_f1")


def _answers_table(block: Mapping[str, Any]) -> Table:
    keys = ("corpus", "rule")
    recs = {}
    for r in block["per_query"]:
        values = {}
        for m in _ANSWER_MEASURES:
            v = r.get(m)
            if v is not None:
                values[m] = float(v)  # `answered` is a bool per query: its mean is the answered share
        recs[r["query_id"]] = (tuple(str(r[k]) for k in keys), values)
    return Table("answers", keys, _ANSWER_MEASURES, recs)


# how each known block of metrics.json becomes Tables: (table name, block read, reader); a new block needs one
# entry here, nothing else
TABLE_READERS = (("retrieval", "retrieval", _retrieval_table), ("comparable", "retrieval", _comparable_table),
                 ("strict", "strict", lambda b: _retrieval_table(b, "strict")), ("answers", "answers", _answers_table))
# compared and shown, each its own Holm family, never gated: the sensitivity checks and the measures comparable
# across chunkings were added beside the gate's rows, and a gate that grew with every report would mean another thing
REPORT_ONLY = frozenset({"comparable", "strict"})


def tables_of(document: Mapping[str, Any]) -> dict[str, Table]:
    tables = {name: reader(document[block]) for name, block, reader in TABLE_READERS if block in document}
    return {name: t for name, t in tables.items() if t.measures}


def paired_tables(base: Mapping[str, Any], cand: Mapping[str, Any]) -> tuple[dict[str, Table], dict[str, Table]]:
    """Both documents' tables; one document read on both sides (a side compared with itself, or a copy read once)
    is made into tables once."""
    bt = tables_of(base)
    return bt, bt if cand is base else tables_of(cand)


@dataclass(frozen=True)
class Row:
    block: str
    groups: tuple[tuple[str, str], ...]  # (key, value) pairs, e.g. (("corpus", "c"), ("class", "lookup"))
    measure: str
    n: int
    baseline: float
    candidate: float
    delta: float
    low: float
    high: float
    verdict: str  # Holm-adjusted across the comparison's rows: what the gate reads
    p: float = 1.0  # two-sided, from the bootstrap
    p_holm: float = 1.0
    verdict_unadjusted: str = SAME  # the 95% interval's own verdict
    relative: float | None = None  # delta / baseline; None when the baseline is 0
    wins: int = 0  # queries where the candidate scores higher
    ties: int = 0
    losses: int = 0
    sd: float = 0.0  # of the per-query differences
    p_guard: float | None = None  # lookup retrieval rows: the guard's one-sided max-T p-value
    guard_critical: float | None = None  # the guard's critical value at its level, in standard units
    detectable: float | None = None  # |delta| its rule finds with 80% power; None when it cannot be said

    def group(self, key: str) -> str:
        return dict(self.groups)[key]

    def to_json(self) -> dict[str, Any]:
        return {"block": self.block, **dict(self.groups), "measure": self.measure, "n": self.n,
                "baseline": self.baseline, "candidate": self.candidate, "delta": self.delta,
                "relative": self.relative, "interval": [self.low, self.high], "p": self.p, "p_holm": self.p_holm,
                "verdict": self.verdict, "verdict_unadjusted": self.verdict_unadjusted,
                "wins": self.wins, "ties": self.ties, "losses": self.losses, "sd": self.sd,
                "detectable": self.detectable, "p_guard": self.p_guard}

    @property
    def guarded(self) -> bool:
        return self.p_guard is not None


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


def guard_fires(r: Row, level: float) -> bool:
    return r.p_guard is not None and r.delta < 0 and r.p_guard < level


def gate_failures(rows: Sequence[Row], level: float) -> list[str]:
    """What the gate fails on: a gated row worse after Holm, or a lookup measure the guard finds worse."""
    failures = []
    for r in rows:
        where = " ".join(v for _, v in r.groups)
        if r.block in REPORT_ONLY:
            continue
        if r.verdict == WORSE:
            failures.append(f"{r.block} {where} {r.measure} is worse: Δ {r.delta:+.4f} "
                            f"[{r.low:+.4f}, {r.high:+.4f}], Holm p {r.p_holm:.4f}")
        elif guard_fires(r, level):
            failures.append(f"{r.block} {where} {r.measure} is worse beyond noise: Δ {r.delta:+.4f} "
                            f"[{r.low:+.4f}, {r.high:+.4f}], lookup guard p {r.p_guard:.4f} < {level:g}")
    return failures


def guard_warnings(rows: Sequence[Row], level: float) -> list[str]:
    out = []
    for r in rows:
        if r.guarded and r.delta < 0 and r.verdict != WORSE and not guard_fires(r, level):
            where = " ".join(v for _, v in r.groups)
            out.append(f"{where} {r.measure} Δ {r.delta:+.4f} is below zero but within noise (lookup guard p "
                       f"{r.p_guard:.4f}; a loss of {detectable_text(r.detectable)} would be found 80% of the time)")
    return out


def detectable_text(x: float | None) -> str:
    return "—" if x is None else f"{x:.4f}"


def label_of(document: Mapping[str, Any]) -> str:
    return arm_label(document["provenance"].get("arm"))


def _diff(what: str, a: Any, b: Any) -> None:
    if a != b:
        raise UnpairedComparison(f"{what} differ: baseline {a!r}, candidate {b!r}")


def check_paired(base: Mapping[str, Any], cand: Mapping[str, Any],
                 bindings: tuple[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]] | None = None,
                 tables: tuple[Mapping[str, Table], Mapping[str, Table]] | None = None) -> None:
    """Refuse (UnpairedComparison) unless the two results measured the same thing on the same queries.

    With both sides' ``bindings``, a corpus whose text changed under a target both were judged on is named as
    the stale binding it is (StaleBinding) rather than as two corpora that merely differ. ``tables``: the two
    documents' ``tables_of``, when the caller holds them already."""
    _diff("schema versions", base.get("schema_version"), cand.get("schema_version"))
    bp, cp = base["provenance"], cand["provenance"]
    _diff("corpora (id)", bp["corpus"]["id"], cp["corpus"]["id"])
    if bindings is not None and bp["corpus"]["sha256"] != cp["corpus"]["sha256"]:
        stale = first_difference(*bindings)
        if stale is not None:
            raise StaleBinding(
                f"corpus {bp['corpus']['id']} changed between the baseline (sha256 {bp['corpus']['sha256'][:12]}…) "
                f"and the candidate ({cp['corpus']['sha256'][:12]}…): {stale} is bound to different text in the "
                "two; re-score the baseline on the candidate's corpus")
    _diff("corpora (sha256)", bp["corpus"]["sha256"], cp["corpus"]["sha256"])
    _diff("relevance policies", bp["relevance_policy"]["name"], cp["relevance_policy"]["name"])
    _diff("scopes", base["scope"]["label"], cand["scope"]["label"])
    if "answers" in base and "answers" in cand:  # e.g. a count tolerance of 1 against one of 0
        _diff("answer scoring policies", base["answers"].get("policy"), cand["answers"].get("policy"))
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


def verdict(low: float, high: float) -> str:
    """The 95% interval's verdict, before any adjustment for the number of rows."""
    if low > 0.0:
        return BETTER
    if high < 0.0:
        return WORSE
    return SAME


def adjusted_verdict(delta: float, p_adjusted: float) -> str:
    if p_adjusted < ALPHA and delta > 0.0:
        return BETTER
    if p_adjusted < ALPHA and delta < 0.0:
        return WORSE
    return SAME


def adjust(rows: Sequence[Row]) -> tuple[Row, ...]:
    """``rows`` with Holm-adjusted p-values and verdicts over the family they form."""
    adjusted = holm([r.p for r in rows])
    return tuple(replace(r, p_holm=q6(a), verdict=adjusted_verdict(r.delta, a)) for r, a in zip(rows, adjusted,
                                                                                                 strict=True))


def block_order(name: str) -> tuple[bool, bool, str]:
    """The gated blocks first (retrieval, then answers), then the report-only ones."""
    return (name in REPORT_ONLY, name != "retrieval", name)


def adjust_by_family(rows: Sequence[Row]) -> tuple[Row, ...]:
    """Holm over the gated rows together, and over each report-only block's rows on its own; each row then says
    what its rule could have found (``detectable``)."""
    families = [[i for i, r in enumerate(rows) if r.block not in REPORT_ONLY]]
    families += [[i for i, r in enumerate(rows) if r.block == name] for name in sorted({r.block for r in rows}
                                                                                        & REPORT_ONLY)]
    out = list(rows)
    for family in families:
        for i, a in zip(family, adjust([rows[i] for i in family]), strict=True):
            out[i] = replace(a, detectable=detectable(a.sd, a.n, holm_critical(len(family))))
    return tuple(replace(r, detectable=detectable(r.sd, r.n, r.guard_critical)) if r.guarded else r for r in out)


def holm_critical(m: int) -> float:
    """Holm's strictest step over m rows as a two-sided normal critical value: what the first row must pass."""
    return z_quantile(1.0 - ALPHA / (2 * max(1, m)))


def detectable(sd: float, n: int, critical: float | None) -> float | None:
    """The |Δ| a rule with this critical value finds with 80% power on n paired queries of this spread (normal
    approximation; the power benchmark holds it to planted losses). None when no query moved (sd 0): the corpus
    then says nothing about what it could have seen."""
    if critical is None or n < 2 or sd <= 0.0 or not math.isfinite(critical):
        return None
    return q6((critical + z_quantile(POWER)) * sd / math.sqrt(n))


def gated(rows: Sequence[Row]) -> int:
    return sum(1 for r in rows if r.block not in REPORT_ONLY)


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


def gated_family(document: Mapping[str, Any]) -> int:
    """How many gated rows a comparison of this document with another of the same queries has: the size of the
    Holm family its verdicts are adjusted over."""
    n = 0
    for name, t in tables_of(document).items():
        if name in REPORT_ONLY:
            continue
        for qids in table_groups(t).values():
            n += len({m for q in qids for m in t.records[q][1]})
    return n


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


def compare(base: Mapping[str, Any], cand: Mapping[str, Any], *, resamples: int = RESAMPLES,
            seed: int = SEED,
            bindings: tuple[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]] | None = None,
            guard_level: float = GUARD_ALPHA) -> Comparison:
    """Pair two metrics.json documents and compare every block, group and measure."""
    bt, ct = paired_tables(base, cand)
    check_paired(base, cand, bindings, (bt, ct))
    rows: list[Row] = []
    for name in sorted(bt, key=block_order):
        rows += compare_table(bt[name], ct[name], resamples, seed, guard_level)
    family = adjust_by_family(rows)
    bp, cp = base["provenance"], cand["provenance"]
    # first: when the vectors differ, every dense metric's difference follows from them
    notes = digest_differences(base, cand)
    if bp["metric_engine"] != cp["metric_engine"]:
        notes.append(f"metric engines differ: baseline {bp['metric_engine'].get('version')}, "
                     f"candidate {cp['metric_engine'].get('version')}")
    if "answers" in base and base["answers"].get("answerer") != cand["answers"].get("answerer"):
        notes.append(f"answerers differ: baseline {base['answers'].get('answerer')}, "
                     f"candidate {cand['answers'].get('answerer')}")
    facts = {
        "corpus": bp["corpus"]["id"],
        "corpus_sha256": bp["corpus"]["sha256"],
        "relevance_policy": bp["relevance_policy"]["name"],
        "scope": base["scope"]["label"],
        "oracle": bool(base["scope"].get("oracle")),
        "queries": {name: len(t.records) for name, t in sorted(bt.items())},
        "bootstrap": BOOTSTRAP_FACTS | {"resamples": resamples, "seed": seed},
        "verdicts": VERDICT_FACTS | {"family": gated(family), "guard_level": guard_level},
    }
    return Comparison(label_of(base), label_of(cand), facts, tuple(notes), family)


