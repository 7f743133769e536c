"""What ``bench`` and ``compare`` print on a terminal by default: a summary that fits 100 columns.

The headline measures per class (``HEADLINE``, the ones the power table and the report lead with), the answers'
exact match, the verdict, and where the full tables and the report are; ``--full`` prints the tables themselves
(metrics.md, compare.md). Drawn by rich at a fixed width with no colour, so the text is the same whatever the
terminal (its size, ``COLUMNS``, ``NO_COLOR``) or a pipe; no line ends in spaces. The claim files never hold it.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Console, RenderableType
from rich.table import Table

from turnbench.harness.compare import REPORT_ONLY, Comparison, Row
from turnbench.harness.corpora import CorporaComparison
from turnbench.harness.power import HEADLINE
from turnbench.harness.rows import ALL
from turnbench.harness.seeds import SeedsComparison
from turnbench.harness.verdicts import ALPHA, BETTER, SAME, WORSE
from turnbench.results.record import Results

WIDTH = 100
WARNINGS = 3  # the lookup losses within noise named; the rest counted
_NAMES = {"meeting:nDCG@10": "mtg nDCG@10", "meeting:R@10": "mtg R@10"}  # as metrics.md heads them


def _f4(x: float | None) -> str:
    return "—" if x is None else f"{x:.4f}"


def _f6(x: float | None) -> str:
    """A mean as metrics.json holds it (six decimals)."""
    return "—" if x is None else f"{x:.6f}"


def draw(items: Sequence[RenderableType]) -> str:
    """``items`` as plain text WIDTH columns wide, whatever the terminal; trailing spaces dropped."""
    out = io.StringIO()
    console = Console(file=out, width=WIDTH, color_system=None, force_terminal=False, force_jupyter=False,
                      force_interactive=False, legacy_windows=False, markup=False, emoji=False, highlight=False,
                      soft_wrap=False, no_color=True, tab_size=4)
    for item in items:
        console.print(item)
    return "".join(line.rstrip() + "\n" for line in out.getvalue().splitlines())


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> Table:
    """Columns two spaces apart, a rule under the header, the first ``left`` columns text and the rest numbers."""
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True)
    for i, h in enumerate(header):
        t.add_column(h, justify="left" if i < left else "right", no_wrap=i >= left)
    for r in rows:
        t.add_row(*r)
    return t


def results_summary(record: Results, where: str | None) -> str:
    """One results directory (or one scored run): what was scored, the headline per class, the answers, the files."""
    scope = record.scope
    items: list[RenderableType] = []
    block = record.retrieval
    head = f"{record.label} on {record.corpus_id} (licence tier {record.provenance.licence_tier or 'unrecorded'})"
    if scope.oracle:
        items.append(f"ORACLE scope {scope.label}: an upper bound, not a system result")
    if block is not None:
        total = next((r for r in block.rows if r.cls == ALL), None)
        if total is not None:
            head += (f": scored {total.queries} queries, {total.unanswered} unanswered, "
                     f"{total.dropped_unjudgeable} dropped")
        items.append(head)
        measures = [m for m in HEADLINE if m in block.measures]
        rows = [[r.cls if r.cls != ALL else "all", str(r.queries), str(r.unanswered),
                 *(_f6(r.means.get(m)) for m in measures)] for r in block.rows]
        items.append(_table(["class", "n", "unanswered", *(_NAMES.get(m, m) for m in measures)], rows))
    else:
        items.append(head + ": answers only")
    answers = record.answers
    row = answers.overall if answers is not None else None
    if answers is not None and row is not None:
        items.append(f"answers ({answers.answerer}): {row.questions} questions, {row.declined} declined, "
                     f"EM {_f6(row.em)}")
    if where is not None:
        items.append(f"wrote {where}/: metrics.md (the full tables), report.html (the report)")
    return draw(items)


@dataclass(frozen=True)
class Said:
    """What a compare command adds to its summary: the gate asked for, the rule's verdict, the files written."""

    gate: bool = False
    rule: tuple[str, str, str] | None = None  # (file, verdict, the deciding clause)
    markdown: str | None = None
    page: str | None = None


def _pooled(result: Comparison | SeedsComparison) -> Comparison:
    return result.pooled if isinstance(result, SeedsComparison) else result


def _headline_rows(rows: Sequence[Row]) -> list[list[str]]:
    """The headline measures' rows per class and the answers' EM over every question: the two sides, the Δ with
    its interval, the verdict."""
    out = []
    for r in rows:
        headline = r.block == "retrieval" and r.measure in HEADLINE
        em = r.block == "answers" and r.measure == "em" and dict(r.groups).get("rule") == ALL
        if not (headline or em):
            continue
        groups = dict(r.groups)
        what = groups.get("class", "answers") if headline else "answers"
        out.append([what, _NAMES.get(r.measure, r.measure) if headline else "EM", _f4(r.baseline),
                    _f4(r.candidate), f"{r.delta:+.4f} [{r.low:+.4f}, {r.high:+.4f}]", r.verdict])
    return out


def comparison_summary(result: Comparison | SeedsComparison | CorporaComparison, said: Said) -> str:
    """A comparison: the two arms, the counts of verdicts, the headline rows, the gate and the rule, the files."""
    if isinstance(result, CorporaComparison):
        parts = [(f"{c.name} (licence tier {c.tier})", c.comparison) for c in result.corpora]
        where = f"{len(parts)} corpora, judged together"
    else:
        parts = [("", _pooled(result))]
        where = str(parts[0][1].facts.get("corpus", "?"))
        if isinstance(result, SeedsComparison):
            where += f", pooled over seeds {', '.join(map(str, result.seeds))}"
    first = parts[0][1]
    rows = [r for _, p in parts for r in p.rows]
    gated = [r for r in rows if r.block not in REPORT_ONLY]
    count = {v: sum(r.verdict == v for r in gated) for v in (BETTER, WORSE, SAME)}
    items: list[RenderableType] = [
        f"compare: {first.candidate} against baseline {first.baseline} on {where}",
        f"gated rows (Holm over {len(gated)} at α = {ALPHA}): {count[BETTER]} better, {count[WORSE]} worse, "
        f"{count[SAME]} no measurable difference"]
    for name, part in parts:
        table = _headline_rows(part.rows)
        if name:
            items.append(name)
        if table:
            items.append(_table(["class", "measure", "baseline", "candidate", "Δ [95% interval]", "verdict"], table,
                                2))
    failures, warnings = result.gate_failures(), result.warnings()
    items += [f"warning: {w}" for w in warnings[:WARNINGS]]
    if len(warnings) > WARNINGS:
        items.append(f"({len(warnings) - WARNINGS} more warnings: --full)")
    if said.gate:
        items.append("Gate: PASS" if not failures else
                     f"Gate: FAIL, {len(failures)} regression(s); first: {failures[0]}")
    if said.rule is not None:
        file, verdict, deciding = said.rule
        items.append(f"rule {file}: {verdict}: {deciding}")
    items.append(f"full tables: {said.markdown}" if said.markdown else "full tables: --full, or --out FILE.md")
    items.append(f"report: {said.page}" if said.page else "report: --html FILE.html")
    return draw(items)
