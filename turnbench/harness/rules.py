"""A decision rule written down before the candidate runs, and its verdict: ``compare --rule FILE`` (docs/gate.md).

The file holds the clauses of ``sweep --rule`` (``turnbench.harness.sweep_rules``), one per line or comma-separated,
``#`` starting a comment, each optionally with a margin, and one line saying what an undetermined verdict means:

    # pre-registered 2026-12-06, before the candidate ran
    nDCG@10 up on multi_file by 0.01     # a win: the interval lies above +0.01
    lookup never down within 0.005       # non-inferiority: no lookup measure's interval lies below -0.005
    undetermined fails

Clauses are judged by each matching row's 95% paired interval (on every corpus the comparison holds):

* ``<measure> up on <class|every class> [by X]`` holds when the interval lies above X, fails when it lies at or
  below X, and is undetermined while it straddles X;
* ``<measure> never down on <class> [within X]`` and ``<class> never down [within X]`` hold when the interval lies
  above −X, fail when it lies below −X, undetermined otherwise.

The rule fails when any clause fails, holds when every clause holds, and is otherwise undetermined, which passes
or fails as the file says (it must say). The verdict names the clause that decided it. The interval is each row's
own 95% interval, not Holm-adjusted: a pre-registered rule names its few clauses before the numbers, so it is not
the fishing that Holm guards the gate's fifty rows against.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from turnbench.corpus.records import RANKED_CLASSES
from turnbench.errors import BadInput
from turnbench.harness.compare import Row
from turnbench.harness.sweep_rules import Clause, parse_rule

HELD, FAILED, UNDETERMINED = "held", "failed", "undetermined"
_MARGIN = re.compile(r"(?P<clause>.+?)\s+(?P<word>by|within)\s+(?P<x>\S+)")
_UNDETERMINED = re.compile(r"undetermined\s+(?P<what>passes|fails)")


@dataclass(frozen=True)
class Margined:
    clause: Clause
    margin: float  # up: the interval must lie above +margin; never down: above -margin

    def __str__(self) -> str:
        if not self.margin:
            return str(self.clause)
        return f"{self.clause} {'by' if self.clause.up else 'within'} {self.margin:g}"


@dataclass(frozen=True)
class Rule:
    source: str  # the file, as named
    clauses: tuple[Margined, ...]
    undetermined_passes: bool


@dataclass(frozen=True)
class Decision:
    verdict: str  # held, failed or undetermined
    passes: bool
    deciding: str  # the clause that decided, with the row that decided it
    clauses: tuple[tuple[str, str, str], ...]  # (clause, its verdict, why)

    def to_json(self) -> dict[str, object]:
        return {"verdict": self.verdict, "passes": self.passes, "deciding": self.deciding,
                "clauses": [{"clause": c, "verdict": v, "why": w} for c, v, w in self.clauses]}


def read_rule(path: Path, measures: Sequence[str]) -> Rule:
    """Parse a decision file; refused (BadInput) on any line that is not a clause, a margin that is not a
    non-negative number, a clause naming what the results do not hold, or no ``undetermined`` line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"--rule {path}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    clauses: list[Margined] = []
    undetermined: bool | None = None
    for number, line in enumerate(text.splitlines(), 1):
        for part in (p.strip() for p in line.split("#", 1)[0].split(",")):
            if not part:
                continue
            found = _UNDETERMINED.fullmatch(part)
            if found:
                if undetermined is not None:
                    raise BadInput(f"--rule {path} line {number}: a second 'undetermined' line")
                undetermined = found["what"] == "passes"
                continue
            margin = 0.0
            m = _MARGIN.fullmatch(part)
            if m:
                try:
                    margin = float(m["x"])
                except ValueError:
                    margin = -1.0
                if not margin >= 0.0 or margin == float("inf"):
                    raise BadInput(f"--rule {path} line {number}: margin {m['x']!r} is not a non-negative number")
                part = m["clause"]
            try:
                (clause,) = parse_rule(part, measures, across_cells=False)
            except BadInput as exc:
                raise BadInput(f"--rule {path} line {number}: {exc}") from None
            word = m["word"] if m else None
            if word is not None and (word == "by") != clause.up:
                raise BadInput(f"--rule {path} line {number}: 'up' takes 'by X', 'never down' takes 'within X'")
            clauses.append(Margined(clause, margin))
    if not clauses:
        raise BadInput(f"--rule {path}: holds no clause")
    if undetermined is None:
        raise BadInput(f"--rule {path}: say what an undetermined verdict means ('undetermined passes' or "
                       "'undetermined fails')")
    return Rule(str(path), tuple(clauses), undetermined)


def _judge(m: Margined, row: Row) -> str:
    bar = m.margin if m.clause.up else -m.margin
    if row.low > bar:
        return HELD
    if (row.high <= bar) if m.clause.up else (row.high < bar):
        return FAILED
    return UNDETERMINED


def decide(rule: Rule, rows: Sequence[Row]) -> Decision:
    """The rule's verdict over the retrieval rows of one comparison (of every corpus it holds)."""
    retrieval = [r for r in rows if r.block == "retrieval"]
    judged = []
    first: dict[str, str] = {}
    for m in rule.clauses:
        c = m.clause
        classes = [k for k in RANKED_CLASSES if any(r.group("class") == k for r in retrieval)] if c.cls is None \
            else [c.cls]
        mine = [r for r in retrieval if r.group("class") in classes and (c.measure is None or r.measure == c.measure)]
        if not mine:
            raise BadInput(f"--rule {rule.source}: clause '{m}' matches no row of these results")
        verdicts = [(_judge(m, r), r) for r in mine]
        worst = next((x for x in verdicts if x[0] == FAILED), None) or next(
            (x for x in verdicts if x[0] == UNDETERMINED), None) or verdicts[0]
        where = " ".join(v for _, v in worst[1].groups)
        why = (f"{where} {worst[1].measure} Δ {worst[1].delta:+.4f} [{worst[1].low:+.4f}, {worst[1].high:+.4f}]"
               + (f" ({len(mine)} rows)" if len(mine) > 1 else ""))
        judged.append((str(m), worst[0], why))
        first.setdefault(worst[0], f"{m}: {why}")
    if FAILED in first:
        verdict = FAILED
    elif UNDETERMINED in first:
        verdict = UNDETERMINED
    else:
        verdict = HELD
    deciding = first[verdict] if verdict != HELD else f"every clause held ({len(judged)})"
    passes = verdict == HELD or (verdict == UNDETERMINED and rule.undetermined_passes)
    return Decision(verdict, passes, deciding, tuple(judged))
