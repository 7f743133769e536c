"""Markdown for what compares results: compare.md (one pair, pooled over seeds, across corpora), a decision and the
decision table, and the agreement table. Drawn with ``turnbench.render.markdown``'s table and formatting; each
renderer draws only what the harness computed."""

from __future__ import annotations

from collections.abc import Sequence

from turnbench.harness import decisions
from turnbench.harness.agreement import INERT_MEAN, LEVEL, RESAMPLES, Cell
from turnbench.harness.compare import ALPHA, BETTER, GUARD_ALPHA, REPORT_ONLY, SAME, WORSE, Comparison, Row
from turnbench.harness.corpora import Cell as AcrossCell
from turnbench.harness.corpora import CorporaComparison
from turnbench.harness.rules import Decision
from turnbench.harness.seeds import SeedsComparison, cell_of
from turnbench.harness.snapshots import denominator, markdown_lines
from turnbench.render.markdown import DASH, fmt4, table


def _gate_lines(failures: Sequence[str] | None, warnings: Sequence[str], on: str = "") -> list[str]:
    """The gate's verdict and failures (``failures`` None: the gate was not asked for), then the lookup warnings;
    ``on``: the paired denominator the verdict is on, when it is a subset (across snapshots)."""
    lines = []
    if failures is not None:
        lines += [f"**Gate: {'FAIL' if failures else 'PASS'}**" + (f" ({len(failures)} failure(s))" if failures
                                                                    else "") + on, ""]
        lines += [f"- {x}" for x in failures] + ([""] if failures else [])
    return lines + [f"> warning: {w}" for w in warnings] + ([""] if warnings else [])


def render_compare_md(cmp: Comparison, *, gate: bool | None = None) -> str:
    """A markdown report fit for a pull-request description."""
    counts = cmp.counts()
    f = cmp.facts
    lines = [f"## turnbench compare: `{cmp.candidate}` vs baseline `{cmp.baseline}`", ""]
    snap = f.get("snapshots")
    lines += _gate_lines(cmp.gate_failures() if gate is not None else None, cmp.warnings(),
                         f" on {denominator(snap)} (the comparable subset across snapshots)" if snap else "")
    lines += markdown_lines(snap) if snap else []
    if f["oracle"]:
        lines += [f"**ORACLE scope `{f['scope']}`: an upper bound, not a system result.**", ""]
    queries = ", ".join(f"{n} {name}" for name, n in f["queries"].items())
    lines += [
        f"corpus `{f['corpus']}` (sha256 `{f['corpus_sha256'][:12]}`) · relevance `{f['relevance_policy']}` · "
        f"scope `{f['scope']}` · paired queries: {queries}",
        f"paired bootstrap: {f['bootstrap']['resamples']:,} resamples, seed {f['bootstrap']['seed']}, "
        f"95% nearest-rank interval, two-sided paired randomisation p · verdicts Holm-adjusted over "
        f"{f['verdicts']['family']} gated rows at α = {ALPHA} · lookup guarded within noise (one-sided sign-flip "
        f"max-T at {f['verdicts'].get('guard_level', GUARD_ALPHA):g}, outside Holm) · {counts[BETTER]} better, "
        f"{counts[WORSE]} worse, {counts[SAME]} no measurable difference" + _report_only_counts(cmp),
        "`detectable`: the |Δ| the row's rule finds with 80% power on these queries (from the paired per-query "
        "spread); a row with no measurable difference could have seen a change that large.",
        "",
    ]
    unadjusted = [r for r in cmp.rows if r.verdict_unadjusted != r.verdict]
    if unadjusted:
        lines += [f"> {len(unadjusted)} row(s) whose 95% interval excludes zero are not named after Holm's "
                  "adjustment (column `95%`).", ""]
    lines += [f"> note: {n}" for n in cmp.notes] + ([""] if cmp.notes else [])
    blocks = []
    for r in cmp.rows:
        if r.block not in blocks:
            blocks.append(r.block)
    named = [r for r in cmp.rows if r.verdict != SAME]
    if named:
        lines += ["### Named differences", ""]
        lines += _rows_table(named, with_block=len(blocks) > 1) + [""]
    else:
        lines += ["No row's interval excludes zero: no measurable difference anywhere.", ""]
    for name in blocks:
        rows = [r for r in cmp.rows if r.block == name]
        title = f"{name} (report-only: never gated)" if name in REPORT_ONLY else name
        lines += [f"<details><summary>{title}: all {len(rows)} rows</summary>", ""]
        lines += _rows_table(rows, with_block=False)
        lines += ["", "</details>", ""]
    return "\n".join(lines)


def _report_only_counts(cmp: Comparison) -> str:
    rows = [r for r in cmp.rows if r.block in REPORT_ONLY]
    if not rows:
        return ""
    n = {v: sum(1 for r in rows if r.verdict == v) for v in (BETTER, WORSE)}
    return (f" · report-only rows ({len(rows)}, each block its own Holm family, never gated): {n[BETTER]} better, "
            f"{n[WORSE]} worse")


def _rows_table(rows: Sequence[Row], *, with_block: bool) -> list[str]:
    keys = [k for k, _ in rows[0].groups]
    header = [*(["block"] if with_block else []), *keys, "measure", "n", "baseline", "candidate", "Δ", "rel.",
              "95% interval", "p", "Holm p", "W/T/L", "detectable", "verdict", "95%"]
    cells = ([*([r.block] if with_block else []), *(val for _, val in r.groups), r.measure, str(r.n),
              f"{r.baseline:.4f}", f"{r.candidate:.4f}", f"{r.delta:+.4f}" if r.delta else "0.0000",
              relative_text(r.relative), f"[{r.low:+.4f}, {r.high:+.4f}]", f"{r.p:.4f}", f"{r.p_holm:.4f}",
              f"{r.wins}/{r.ties}/{r.losses}", detectable_cell(r),
              r.verdict if r.verdict == SAME else f"**{r.verdict}**",
              "" if r.verdict_unadjusted == SAME else r.verdict_unadjusted]
             for r in rows)
    return table(header, cells, "l" * (len(header) - 13) + "r" * 11 + "ll")


def detectable_cell(r: Row) -> str:
    """``±x`` (a lookup row: ``−x``, the loss its guard finds), or — when no query moved."""
    if r.detectable is None:
        return DASH
    return f"{'−' if r.guarded else '±'}{r.detectable:.4f}"


def relative_text(relative: float | None) -> str:
    return "—" if relative is None else ("0.0%" if relative == 0 else f"{100 * relative:+.1f}%")


_SHORT = {BETTER: "better", WORSE: "**worse**", SAME: "·"}


def render_seeds_md(cmp: SeedsComparison, *, gate: bool | None = None) -> str:
    lines = render_compare_md(cmp.pooled, gate=gate).splitlines()
    lines[0] = f"{lines[0]} — pooled over seeds {', '.join(str(s) for s in cmp.seeds)}"
    lines += ["", "### Verdicts per seed", ""]
    if cmp.callouts:
        lines += [f"**{len(cmp.callouts)} cell(s) do not get the same verdict in every seed:**", ""]
        lines += [f"- {c}" for c in cmp.callouts] + [""]
    else:
        lines += ["Every cell gets the same verdict in every seed.", ""]
    header = ["block", "group", "measure", "pooled Δ", *(f"seed {s}" for s in cmp.seeds)]
    by_cell = {s: {cell_of(r): r for r in cmp.per_seed[s].rows} for s in cmp.seeds}
    cells = []
    for r in cmp.pooled.rows:
        key = (r.block, r.groups, r.measure)
        per = [by_cell[s].get(key) for s in cmp.seeds]
        cells.append([r.block, " ".join(v for _, v in r.groups), r.measure, f"{r.delta:+.4f}",
                      *("—" if p is None else f"{p.delta:+.4f} {_SHORT[p.verdict]}" for p in per)])
    lines += table(header, cells, "lll" + "r" * (len(header) - 3))
    return "\n".join(lines) + "\n"


def render_agreement_md(cells: Sequence[Cell], *, unit: str = "queries", resamples: int = RESAMPLES) -> str:
    corpora = sorted(cells[0].orders) if cells else []
    lines = ["# Agreement: do the corpora rank the arms alike?", "",
             f"corpora: {' and '.join(f'`{c}`' for c in corpora)} · arms on both: "
             f"{', '.join(cells[0].arms) if cells else 'none'}", "",
             f"tau-b: Kendall's tau-b over the arms that are not inert (mean ≤ {INERT_MEAN} on both corpora, listed "
             f"apart; `all arms`: with them), undefined (—) when a corpus ties every pair; interval: {LEVEL:.0%} "
             f"percentile bootstrap, {resamples} resamples of each corpus's {unit}. In an order, `=` is an exact tie, "
             "`≈` a difference the corpus cannot tell from zero (its paired bootstrap interval holds zero), `>` one it "
             "can. A swap is a pair told apart on both corpora, in opposite directions; unresolved: told apart on one "
             "only.", ""]
    rows = []
    for c in cells:
        interval = DASH if c.interval is None else f"[{c.interval[0]:.2f}, {c.interval[1]:.2f}]"
        swaps = "; ".join(f"{x} ↔ {y}" for x, y in c.swaps) or "none"
        rows.append([c.cls, c.measure, fmt4(c.tau_b), interval, fmt4(c.tau_b_all), str(len(c.swaps)),
                     str(c.unresolved), ", ".join(c.inert) or "none", *(c.orders[k].text() for k in corpora), swaps])
    lines += table(["class", "measure", "tau-b", "interval", "all arms", "swaps", "unresolved", "inert",
                    *(f"order on {k}" for k in corpora), "pairs that swap"], rows, "llrlrrrl")
    return "\n".join(lines) + "\n"


def render_corpora_md(cc: CorporaComparison, *, gate: bool | None = None) -> str:
    """compare.md of one change over several corpora: the verdict across them, then each corpus's rows."""
    names = [c.name for c in cc.corpora]
    lines = [f"## turnbench compare over {len(names)} corpora: `{cc.candidate}` vs baseline `{cc.baseline}`", ""]
    lines += _gate_lines(cc.gate_failures() if gate is not None else None, cc.warnings())
    lines += [
        "corpora: " + " · ".join(f"`{c.name}` (licence tier {c.tier})" for c in cc.corpora),
        f"verdicts Holm-adjusted over the {cc.family()} gated rows of every corpus together at α = {ALPHA}; lookup "
        f"guarded on each corpus at {cc.guard_level:g}. Across corpora a row is worse when it is worse on any "
        f"corpus, better only when it is better on every one. `rel.` (Δ over the baseline's mean) is the figure "
        "that carries between corpora; absolute Δ differ in size from corpus to corpus.",
        "",
    ]
    header = ["block", "group", "measure", *(h for n in names for h in (f"Δ {n}", "rel.", "detectable")),
              "across corpora"]
    cells = []
    for x in cc.cells():
        if x.block in REPORT_ONLY:
            continue
        cells.append([x.block, " ".join(v for _, v in x.groups), x.measure, *per_corpus_cells(x),
                      x.verdict if x.verdict == SAME else f"**{x.verdict}**"])
    lines += ["### Across corpora (gated rows)", ""]
    lines += table(header, cells, "lll" + "r" * (len(header) - 4) + "l")
    for c in cc.corpora:
        body = render_compare_md(c.comparison).splitlines()
        lines += ["", f"### {c.name} (licence tier {c.tier})", "", *body[2:]]
    return "\n".join(lines) + "\n"


def render_decision_md(decision: Decision, source: str, undetermined_passes: bool) -> str:
    """The pre-registered rule's verdict (compare --rule), appended to compare.md."""
    lines = ["", f"### Pre-registered rule `{source}`: **{decision.verdict}** "
                 f"({'passes' if decision.passes else 'fails'}; undetermined "
                 f"{'passes' if undetermined_passes else 'fails'})", "", f"decided by: {decision.deciding}", ""]
    lines += table(["clause", "verdict", "deciding row (95% interval)"], [list(c) for c in decision.clauses], "lll")
    return "\n".join(lines) + "\n"


def per_corpus_cells(x: AcrossCell) -> list[str]:
    """One cell's Δ, relative Δ and detectable effect on each corpus (— where a corpus has no such row)."""
    per = []
    for r in x.rows:
        per += ([DASH] * 3 if r is None else
                [f"{r.delta:+.4f}" if r.delta else "0.0000", relative_text(r.relative), detectable_cell(r)])
    return per


def render_comparison_md(result: Comparison | SeedsComparison, *, gate: bool | None = None) -> str:
    if isinstance(result, SeedsComparison):
        return render_seeds_md(result, gate=gate)
    return render_compare_md(result, gate=gate)


def _verdict_cell(v: decisions.Verdict) -> str:
    rel = DASH if v.relative is None else f"{v.relative:+.1%}"
    word = {decisions.BETTER: "**better**", decisions.WORSE: "**worse**", decisions.NONE: "none"}[v.verdict]
    return f"{word} {v.delta:+.4f} [{v.interval[0]:+.4f}, {v.interval[1]:+.4f}] ({rel})"


def render_decisions_md(t: decisions.DecisionTable, *, resamples: int = RESAMPLES) -> str:
    """A decision table: each decision's verdict on the synthetic corpus and on one real corpus, and the counts."""
    counts = t.counts()
    lines = [f"# Decisions: `{t.synthetic}` against `{t.real}`", "",
             f"Per decision (control → treatment), {decisions.MEASURE} over every scored question: "
             "Δ = treatment − control "
             f"[{LEVEL:.0%} paired bootstrap interval, {resamples} resamples of the questions] (Δ relative to the "
             "control's mean); **better** / **worse** when the interval excludes zero, none (no measurable "
             "difference) when it holds it.", "",
             f"agree {counts[decisions.AGREE]} · opposite {counts[decisions.OPPOSITE]} · synthetic-only "
             f"{counts[decisions.SYNTHETIC_ONLY]} · real-only {counts[decisions.REAL_ONLY]} "
             f"(|Δ| ≥ {decisions.MATERIAL} on the real "
             f"corpus: {counts['real-only material']})", ""]
    rows = [[r.decision.name, f"{r.decision.control} → {r.decision.treatment}", _verdict_cell(r.synthetic),
             _verdict_cell(r.real), r.agreement + (" (|Δ| ≥ 0.01)" if r.material else "")] for r in t.rows]
    lines += table(["decision", "control → treatment", f"synthetic ({t.synthetic})", f"real ({t.real})",
                    "agreement"], rows)
    lines += ["", "What each decision asks:", ""]
    lines += [f"- `{r.decision.name}`: {r.decision.asks}" for r in t.rows]
    return "\n".join(lines) + "\n"
