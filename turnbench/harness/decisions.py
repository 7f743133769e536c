"""Decisions as the generator's check: does the synthetic corpus give a team's decision the verdict real meetings give?

A *decision* is a pair of arms, the control (what runs today) and the treatment (the change a team asks about),
declared by name in a decisions file (``arms/decisions/decisions.toml``). On each corpus its *verdict* is read off
the paired bootstrap of the per-query nDCG@10 differences (treatment − control) over every scored question — the
project's own (``turnbench.harness.stats.bootstrap_means``), 1,000 resamples, a stream per decision seeded by its
name, the 95% nearest-rank percentile interval:

- **better** when the interval lies above zero, **worse** when below, **no measurable difference** when it holds
  zero (an interval of zero width at zero — no question moved — holds it);
- Δ = treatment mean − control mean, and relative Δ = Δ / control mean (none when the control's mean is 0).

Against a real corpus, each decision is

- **agree**: the same verdict on both (both better, both worse, or neither measurable);
- **opposite**: measurable on both, in opposite directions;
- **synthetic-only**: measurable on the synthetic corpus only;
- **real-only**: measurable on the real corpus only — the case that matters, since a team tuning on the synthetic
  corpus would never see it; those with |Δ| ≥ ``MATERIAL`` on the real corpus are counted apart.

The two arms of a decision must have scored the same questions on a corpus (a pair on different questions is no
pair), and the per-query values are the ones metrics.json records, their class means checked as agreement checks
them.
"""

from __future__ import annotations

import hashlib
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench.errors import BadInput
from turnbench.harness.agreement import ALL, DECIMALS, LEVEL, RESAMPLES, SEED, PerQuery, _collect
from turnbench.harness.stats import bootstrap_means, nearest_rank
from turnbench.results.record import Results

MEASURE = "nDCG@10"
MATERIAL = 0.01  # a real-only verdict of at least this |Δ| is one the synthetic corpus hides from a team
BETTER, WORSE, NONE = "better", "worse", "no measurable difference"
AGREE, OPPOSITE, SYNTHETIC_ONLY, REAL_ONLY = "agree", "opposite", "synthetic-only", "real-only"
CLASSES = (AGREE, OPPOSITE, SYNTHETIC_ONLY, REAL_ONLY)
SYNTHETIC_PRODUCER = "turnbench.generator"
_KEYS = {"name", "asks", "control", "treatment"}


@dataclass(frozen=True)
class TeamDecision:
    """A change a team asks about: from the control arm to the treatment arm."""

    name: str
    asks: str
    control: str
    treatment: str


@dataclass(frozen=True)
class Verdict:
    """One decision on one corpus."""

    queries: int
    control_mean: float
    treatment_mean: float
    delta: float
    interval: tuple[float, float]
    verdict: str  # BETTER, WORSE or NONE

    @property
    def relative(self) -> float | None:
        return None if self.control_mean == 0 else round(self.delta / self.control_mean, DECIMALS) + 0.0

    def to_json(self) -> dict[str, Any]:
        return {"queries": self.queries, "control_mean": self.control_mean, "treatment_mean": self.treatment_mean,
                "delta": self.delta, "interval": list(self.interval), "relative": self.relative,
                "verdict": self.verdict}


@dataclass(frozen=True)
class DecisionRow:
    decision: TeamDecision
    synthetic: Verdict
    real: Verdict
    agreement: str  # one of CLASSES

    @property
    def material(self) -> bool:
        """A real-only verdict whose difference on the real corpus is at least MATERIAL."""
        return self.agreement == REAL_ONLY and abs(self.real.delta) >= MATERIAL


@dataclass(frozen=True)
class DecisionTable:
    """Every decision on the synthetic corpus against one real corpus."""

    synthetic: str  # corpus ids
    real: str
    rows: tuple[DecisionRow, ...]

    def counts(self) -> dict[str, int]:
        out = {c: sum(1 for r in self.rows if r.agreement == c) for c in CLASSES}
        out["real-only material"] = sum(1 for r in self.rows if r.material)
        return out

    def to_json(self) -> dict[str, Any]:
        return {"measure": MEASURE, "level": LEVEL, "material": MATERIAL, "synthetic": self.synthetic,
                "real": self.real, "counts": self.counts(),
                "decisions": [{"name": r.decision.name, "asks": r.decision.asks, "control": r.decision.control,
                               "treatment": r.decision.treatment, "synthetic": r.synthetic.to_json(),
                               "real": r.real.to_json(), "agreement": r.agreement, "material": r.material}
                              for r in self.rows]}


def parse_decisions(data: bytes, where: str) -> tuple[TeamDecision, ...]:
    """The decisions of a decisions file: ``[[decision]]`` tables of name, asks, control and treatment."""
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(f"{where}: not a UTF-8 TOML decisions file ({exc})") from None
    except RecursionError:
        raise BadInput(f"{where}: not TOML this reader can take (nested too deeply)") from None
    extra = sorted(set(doc) - {"decision"})
    if extra:
        raise BadInput(f"{where}: unknown key {extra[0]!r}; a decisions file holds [[decision]] tables only")
    tables = doc.get("decision")
    if not isinstance(tables, list) or not tables:
        raise BadInput(f"{where}: no [[decision]] tables")
    out: list[TeamDecision] = []
    for n, t in enumerate(tables, 1):
        what = f"{where}: decision {n}"
        if not isinstance(t, dict):
            raise BadInput(f"{what}: not a table of name, asks, control and treatment")
        keys = set(t)
        if keys != _KEYS:
            missing, unknown = sorted(_KEYS - keys), sorted(keys - _KEYS)
            raise BadInput(f"{what}: " + (f"missing {missing[0]!r}" if missing else f"unknown key {unknown[0]!r}")
                           + " (a decision has name, asks, control and treatment)")
        bad = next((k for k in sorted(_KEYS) if not isinstance(t[k], str) or not t[k].strip()), None)
        if bad is not None:
            raise BadInput(f"{what}: {bad!r} must be a non-empty string")
        if t["control"] == t["treatment"]:
            raise BadInput(f"{what} ({t['name']}): control and treatment are the same arm, {t['control']}")
        if any(d.name == t["name"] for d in out):
            raise BadInput(f"{what}: the name {t['name']!r} is given twice")
        out.append(TeamDecision(t["name"], t["asks"], t["control"], t["treatment"]))
    return tuple(out)


def read_decisions(path: Path) -> tuple[TeamDecision, ...]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadInput(f"{path}: cannot read the decisions file ({exc.strerror or exc})") from None
    return parse_decisions(data, str(path))


def arms_of(decisions: Sequence[TeamDecision]) -> list[str]:
    """Every arm the decisions name, once, sorted."""
    return sorted({a for d in decisions for a in (d.control, d.treatment)})


def _entropy(name: str) -> list[int]:
    """A decision's bootstrap stream: the agreement seed and its name, so its interval is its own whatever else is
    asked."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return [SEED, *(int.from_bytes(digest[i:i + 4], "big") for i in range(0, 16, 4))]


def verdict(control: Mapping[str, float], treatment: Mapping[str, float], name: str, *,
            resamples: int = RESAMPLES) -> Verdict:
    """The verdict of one decision from the two arms' per-query values (query id -> value, the same ids)."""
    import numpy as np

    ids = sorted(control)
    if not ids:
        raise BadInput(f"decision {name}: no scored questions")
    c = np.array([control[q] for q in ids], dtype=np.float64)
    t = np.array([treatment[q] for q in ids], dtype=np.float64)
    boot = bootstrap_means((t - c)[:, None], resamples, _entropy(name))[:, 0].tolist()
    lo = round(nearest_rank(boot, 100 * (1 - LEVEL) / 2), DECIMALS) + 0.0
    hi = round(nearest_rank(boot, 100 * (1 + LEVEL) / 2), DECIMALS) + 0.0
    cm = round(math.fsum(c.tolist()) / len(ids), DECIMALS) + 0.0
    tm = round(math.fsum(t.tolist()) / len(ids), DECIMALS) + 0.0
    delta = round(math.fsum((t - c).tolist()) / len(ids), DECIMALS) + 0.0
    return Verdict(len(ids), cm, tm, delta, (lo, hi), BETTER if lo > 0 else WORSE if hi < 0 else NONE)


def classify(synthetic: str, real: str) -> str:
    """agree, opposite, synthetic-only or real-only, from the two verdicts."""
    if synthetic == real:
        return AGREE
    if synthetic == NONE:
        return REAL_ONLY
    if real == NONE:
        return SYNTHETIC_ONLY
    return OPPOSITE


def _values(arms: Mapping[str, PerQuery], corpus: str, d: TeamDecision) -> tuple[dict[str, float], dict[str, float]]:
    sides = []
    for arm in (d.control, d.treatment):
        if arm not in arms:
            raise BadInput(f"decision {d.name}: no results of arm {arm} on corpus {corpus}")
        sides.append(arms[arm].get((ALL, MEASURE), {}))
    control, treatment = sides
    if set(control) != set(treatment):
        only = sorted(set(control) ^ set(treatment))
        raise BadInput(f"decision {d.name}: on corpus {corpus}, {d.control} scored {len(control)} questions and "
                       f"{d.treatment} {len(treatment)}, not the same ones (first apart: {only[0]}); a decision pairs "
                       "its arms on the same questions")
    return control, treatment


def synthetic_of(documents: Sequence[Results]) -> str | None:
    """The id of the one corpus turnbench's generator made, among the documents' corpora (None unless exactly one)."""
    ids = {d.corpus_id for d in documents if d.provenance.corpus.facts.get("producer") == SYNTHETIC_PRODUCER}
    return next(iter(ids)) if len(ids) == 1 else None


def decision_tables(documents: Sequence[Results], decisions: Sequence[TeamDecision], *,
                    synthetic: str | None = None, resamples: int = RESAMPLES) -> list[DecisionTable]:
    """Every decision's verdict on the synthetic corpus and on each other corpus of the documents (metrics.json of
    arms), one table per real corpus, sorted by its id."""
    if not isinstance(resamples, int) or resamples < 100:
        raise BadInput(f"decisions need at least 100 resamples for their intervals, not {resamples!r}")
    by_corpus = _collect(documents)
    synthetic = synthetic if synthetic is not None else synthetic_of(documents)
    if synthetic is None:
        raise BadInput("decisions: no single generated corpus among the results; name the synthetic one "
                       f"(--synthetic ID) among {', '.join(sorted(by_corpus))}")
    if synthetic not in by_corpus:
        raise BadInput(f"decisions: no results on the synthetic corpus {synthetic}; the results name "
                       f"{', '.join(sorted(by_corpus))}")
    reals = sorted(c for c in by_corpus if c != synthetic)
    if not reals:
        raise BadInput(f"decisions: results of {synthetic} only; a verdict is checked against a real corpus")
    verdicts: dict[str, dict[str, Verdict]] = {}
    for corpus in (synthetic, *reals):
        verdicts[corpus] = {d.name: verdict(*_values(by_corpus[corpus], corpus, d), d.name, resamples=resamples)
                            for d in decisions}
    tables = []
    for real in reals:
        rows = []
        for d in decisions:
            s, r = verdicts[synthetic][d.name], verdicts[real][d.name]
            rows.append(DecisionRow(d, s, r, classify(s.verdict, r.verdict)))
        tables.append(DecisionTable(synthetic, real, tuple(rows)))
    return tables
