"""How large a corpus must be to detect a given Δ: ``turnbench plan`` (docs/gate.md, "What it can see").

From a pilot bench (one results directory) and, better, a pilot comparison (the baseline and a candidate of the
kind of change to be judged), the spread of the paired per-query differences of one class × measure gives the
number of questions a comparison needs to find Δ = X with the asked power by the rule that gates that class:

    n = ⌈((c + z(power)) · sd / X)²⌉

``c`` the rule's critical value (the lookup guard's, or Holm's first step over the family the comparison has).
Without a candidate, sd is the planted-loss model of ``turnbench.harness.power``: a change that takes the whole
score of a share X / mean of the class's questions. The questions a corpus asks grow with its meetings, so the
answer is given in meetings (the pilot's questions per meeting) and in seeds of the pilot's size (``bench
--seeds`` pools them); ``--check CORPUS`` counts what a generated corpus really asks and says whether it is enough.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from turnbench.corpus.records import RANKED_CLASSES
from turnbench.errors import BadInput
from turnbench.harness.compare import (
    GUARD_ALPHA,
    STRICT_CLASS,
    compare,
    gated_family,
    holm_critical,
    table_groups,
    tables_of,
)
from turnbench.harness.stats import z_quantile
from turnbench.results.directory import read_metrics
from turnbench.results.record import Results

MAX_MEETINGS = 20_000  # what the generator makes in one corpus


@dataclass(frozen=True)
class Plan:
    cls: str
    measure: str
    delta: float
    power: float
    rule: str  # the rule that gates the class
    critical: float
    sd: float  # of the per-query differences the plan assumes
    source: str  # where sd came from
    pilot_queries: int
    pilot_meetings: int
    queries: int  # needed
    meetings: int | None  # needed in one corpus, or None beyond what the generator makes
    seeds: int  # corpora of the pilot's size, pooled

    def lines(self) -> list[str]:
        out = [f"to find Δ {self.measure} = −{self.delta:g} on {self.cls} with {self.power:.0%} power "
               f"({self.rule}, critical value {self.critical:.2f}; sd {self.sd:.4f} from {self.source}):",
               f"  {self.queries:,} {self.cls} questions (the pilot has {self.pilot_queries:,} in "
               f"{self.pilot_meetings:,} meetings)"]
        if self.meetings is not None:
            out.append(f"  one corpus of about {self.meetings:,} meetings: turnbench generate --meetings "
                       f"{self.meetings} --out corpora/planned (then: turnbench plan ... --check corpora/planned)")
        else:
            out.append(f"  more than one corpus holds ({MAX_MEETINGS:,} meetings at most)")
        out.append(f"  or {self.seeds} seed(s) of the pilot's size: turnbench bench --seeds "
                   f"{','.join(str(s) for s in range(11, 11 + min(self.seeds, 5)))}{',...' if self.seeds > 5 else ''}")
        return out


def _values(doc: Results, cls: str, measure: str) -> list[float]:
    table = tables_of(doc).get("retrieval")
    if table is None:
        raise BadInput("the pilot holds no retrieval results")
    keys = table.group_keys
    values = [v[measure] for qids in [table_groups(table)] for g, qs in qids.items()
              if dict(zip(keys, g, strict=True)).get("class") == cls for q in qs
              for v in [table.records[q][1]] if measure in v]
    if not values:
        measures = sorted({m for _, v in table.records.values() for m in v})
        raise BadInput(f"the pilot has no {measure} on {cls} (classes {', '.join(RANKED_CLASSES)}; measures "
                       f"{', '.join(measures)})")
    return values


def plan(pilot: Path, candidate: Path | None, *, delta: float, cls: str = STRICT_CLASS, measure: str = "nDCG@10",
         power: float = 0.8) -> Plan:
    if not (0.0 < delta < 1.0):
        raise BadInput(f"--delta {delta}: a loss to detect lies between 0 and 1")
    if not (0.5 <= power < 1.0):
        raise BadInput(f"--power {power}: between 0.5 and 1")
    if cls not in RANKED_CLASSES:
        raise BadInput(f"--class {cls}: not a ranked class ({', '.join(RANKED_CLASSES)})")
    base = read_metrics(Path(pilot))
    values = _values(base, cls, measure)
    n = len(values)
    lookup = cls == STRICT_CLASS
    if candidate is not None:
        cmp = compare(base, read_metrics(Path(candidate)))
        row = next((r for r in cmp.rows if r.block == "retrieval" and r.group("class") == cls
                    and r.measure == measure), None)
        if row is None or row.sd <= 0.0:
            raise BadInput(f"the pilot comparison moved no {cls} question's {measure}: its spread says nothing; "
                           "plan from the pilot alone")
        sd = row.sd
        critical = row.guard_critical if lookup and row.guard_critical is not None else holm_critical(
            gated_family(base))
        source = f"the paired pilot comparison ({n} questions)"
    else:
        mean = math.fsum(values) / n
        share = delta / mean if mean > 0 else math.inf
        if share > 1.0:
            raise BadInput(f"a loss of {delta:g} is more than {cls}'s whole {measure} ({mean:.4f}) on this arm")
        square = math.fsum(v * v for v in values) / n
        sd = math.sqrt(share * square - share * share * mean * mean)
        measures = len(tables_of(base)["retrieval"].measures)
        critical = z_quantile(1 - GUARD_ALPHA / measures) if lookup else holm_critical(gated_family(base))
        source = f"the planted-loss model ({share:.1%} of {cls} questions losing their whole score)"
    needed = max(2, math.ceil(((critical + z_quantile(power)) * sd / delta) ** 2))
    meetings_pilot = base.provenance.corpus.meetings
    meetings = math.ceil(meetings_pilot * needed / n) if meetings_pilot else None
    if meetings is not None and meetings > MAX_MEETINGS:
        meetings = None
    return Plan(cls, measure, delta, power, "the lookup guard" if lookup else "Holm's first step", critical, sd,
                source, n, meetings_pilot, needed, meetings, math.ceil(needed / n))


def check(plan_: Plan, corpus: Path) -> tuple[bool, str]:
    """Whether a corpus (generated at the planned size) asks enough questions of the class."""
    from turnbench.corpus.format import open_corpus

    c = open_corpus(Path(corpus))
    asked = sum(1 for q in c.queries() if q.cls == plan_.cls)
    ok = asked >= plan_.queries
    return ok, (f"{corpus}: {asked:,} {plan_.cls} questions; {plan_.queries:,} needed: "
                f"{'enough' if ok else 'NOT enough'}")
