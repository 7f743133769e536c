"""report.html: one self-contained page a person can decide a pull request from (docs/design.md §10).

No script, no stylesheet or font from anywhere, no network: inline CSS and inline SVG (``plots``), so the page
reads the same with scripts off, offline, in any browser. Byte-identical from run to run: everything is drawn
from the results files (sorted, fixed formatting) and the corpus text they bind to; nothing from the clock, the
host or a path.

A comparison page holds the metric table per class for both sides, the forest plot of Δ per class × measure,
the per-query Δ of each class sorted (small multiples), win/tie/loss counts, the ten worst regressions with
the query, its gold turns and the top passages of both runs, and the answer tables. A single results page (what
``bench`` and ``score`` write beside metrics.json) holds the metric table, each class's per-query values, the
ten weakest queries and the answer table.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from turnbench.errors import BadInput
from turnbench.harness.compare import REPORT_ONLY, SAME, Comparison, Row
from turnbench.harness.corpora import CorporaComparison
from turnbench.harness.seeds import SeedsComparison
from turnbench.render import page as model
from turnbench.render import plots
from turnbench.render.comparisons import detectable_cell, per_corpus_cells, relative_text
from turnbench.render.page import Page, Side
from turnbench.results.record import Results
from turnbench.results.tables import Row as ResultRow

SNIPPET = 420
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:24px auto;
max-width:1100px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}
h3{font-size:14px;margin:14px 0 4px}
table{border-collapse:collapse;margin:6px 0 10px;font-size:12.5px}
th,td{border:1px solid #d0d7de;padding:3px 7px;text-align:right;vertical-align:top}
th{background:#f6f8fa}td.l,th.l{text-align:left}
.meta{color:#57606a;font-size:12.5px}.pass{color:#1a7f37;font-weight:700}.fail{color:#cf222e;font-weight:700}
.better{color:#1a7f37}.worse{color:#cf222e;font-weight:600}.note{background:#fff8c5;padding:6px 10px;
border:1px solid #d4a72c;border-radius:4px;font-size:12.5px}
.q{border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;margin:10px 0}
.q .text{font-size:14px;font-weight:600}.cols{display:flex;gap:14px}.cols>div{flex:1;min-width:0}
ol{margin:4px 0;padding-left:22px}li{margin:2px 0;font-size:12.5px}.g{font-weight:700;color:#1a7f37}
.gold{font-size:12.5px;background:#f6f8fa;padding:4px 8px;border-left:3px solid #1a7f37;margin:4px 0}
svg{max-width:100%;height:auto}
"""


def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _f4(x: float | None) -> str:
    return "—" if x is None else f"{x:.4f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """An HTML table; cells are already escaped. The first ``left`` columns are text, the rest numbers."""
    def cell(tag: str, i: int, v: str) -> str:
        return f'<{tag}{" class=l" if i < left else ""}>{v}</{tag}>'

    head = "".join(cell("th", i, esc(h)) for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>\n" for r in rows)
    return f"<table><tr>{head}</tr>\n{body}</table>\n"


def _page(title: str, body: Sequence[str]) -> bytes:
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n"
            f"<meta name=viewport content=\"width=device-width,initial-scale=1\">\n<title>{esc(title)}</title>\n"
            f"<style>{CSS}</style></head><body>\n" + "".join(body) + "</body></html>\n").encode("utf-8")


COMPARABLE = "⇄"
BLOCK_TITLES = {"answers": "answer rows",
                "comparable": "comparable across chunkings ⇄ (span and entry points; report-only, never gated)",
                "strict": "strict rows, only grades ≥ 2 relevant (report-only, never gated)",
                "extra": "extra measures asked for with --measure (report-only, never gated)"}
# the few measures a row per surface shows: one per kind, so a regime's collapse reads at a glance
SURFACE_MEASURES = ("nDCG@10", "R@10", "meeting:nDCG@10", "span:R@10", "entry:mGAP150")


def _rows_table(rows: Sequence[ResultRow], measures: Sequence[str], comparable: set[str],
                lead: Sequence[tuple[str, str]] = ()) -> str:
    """A table of class rows; ``lead``: (header, value) columns before the class."""
    entry = any(r.entry_error is not None for r in rows)
    header = [*(h for h, _ in lead), "class", "n", "unanswered", "dropped",
              *(f"{m} {COMPARABLE}" if m in comparable else m for m in measures),
              *(["entry |Δ| median s"] if entry else [])]
    cells = [[*(esc(v) for _, v in lead), esc(r.cls), str(r.queries), str(r.unanswered),
              str(r.dropped_unjudgeable), *(_f4(r.means.get(m)) for m in measures),
              *([_f4(r.entry_error.median if r.entry_error else None)] if entry else [])] for r in rows]
    return _table(header, cells, len(lead) + 1)


def metric_table(results: Results, latency: Mapping[str, float] | None = None) -> str:
    """The class rows: passage and meeting measures, then those comparable across chunkings (marked), the strict
    rows (grades ≥ 2 relevant) and the rows per surface."""
    block = results.retrieval
    if block is None:
        return "<p class=meta>No retrieval block: these results score answers only.</p>\n"
    measures = block.measures
    comparable = set(block.comparable)
    out = [_rows_table(block.rows, [m for m in measures if m not in comparable], set())]
    if comparable:
        out.append(_rows_table(block.rows, [m for m in measures if m in comparable], comparable))
        out.append(f"<p class=meta>{COMPARABLE} comparable across chunkings: counted in the gold turns' words and "
                   "in seconds from where the gold starts, so a different cut of the same corpus reads on the same "
                   "scale; every other column counts passages and moves with the cut.</p>\n")
    if latency is not None:
        out.append(f"<p class=meta>query latency, measured on this run's host (runinfo.json, not part of the "
                   f"claim): p50 {latency['p50']:.1f} ms · p95 {latency['p95']:.1f} ms</p>\n")
    strict = results.strict
    if strict:
        out.append(f"<details><summary>strict rows: only grades ≥ {strict.threshold} relevant "
                   f"({len(strict.dropped)} queries with no such passage dropped)</summary>"
                   + _rows_table(strict.rows, strict.measures, set()) + "</details>\n")
    surfaces = block.rows_by_surface
    if surfaces:
        shown = [m for m in SURFACE_MEASURES if m in measures]
        table = "".join(_rows_table(rows, shown, comparable, [("surface", name)])
                        for name, rows in sorted(surfaces.items()))
        out.append(f"<details><summary>rows by surface ({len(surfaces)}: how each question was put)</summary>"
                   + table + "</details>\n")
    return "".join(out)


def _answers_table(results: Results) -> str:
    block = results.answers
    if block is None:
        return "<p class=meta>No answers block: the aggregation questions were not answered in this run.</p>\n"
    rows = [[esc(r.rule), esc(r.grammar), str(r.questions), str(r.declined), _f4(r.em),
             _f4(r.partial), _f4(r.answered), _f4(r.set_f1)]
            for r in block.rows if r.surface == "all"]
    return (f"<p class=meta>answerer <b>{esc(block.answerer)}</b> · EM is the measure; declined questions "
            "score 0 and are counted.</p>\n"
            + _table(["rule", "grammar", "questions", "declined", "EM", "partial", "answered", "set F1"], rows, 2))


def _passages(view: Page, qid: str) -> str:
    grades = view.qrels.get(qid, {})
    items = []
    for pid in view.top(qid):
        g = grades.get(pid, 0)
        text = view.texts.passages.get(pid)
        shown = "" if text is None else " — " + esc(text[:SNIPPET] + ("…" if len(text) > SNIPPET else ""))
        mark = f'<span class=g>grade {g}</span>' if g else "grade 0"
        items.append(f"<li><code>{esc(pid)}</code> {mark}{shown}</li>")
    return "<ol>" + "".join(items) + "</ol>" if items else "<p class=meta>(no passage returned)</p>"


def _query_card(qid: str, head: str, sides: Sequence[tuple[str, Page]]) -> str:
    view = sides[0][1]
    t = view.texts
    parts = [f"<div class=q><div class=meta>{head}</div>"]
    if t.available:
        parts.append(f"<div class=text>{esc(t.queries.get(qid, '(query text not bound)'))}</div>")
        gold = t.gold.get(qid, ())
        parts += [f"<div class=gold><b>{esc(w)}</b>: {esc(x[:SNIPPET])}</div>" for w, x in gold[:4]]
        if len(gold) > 4:
            parts.append(f"<div class=meta>… and {len(gold) - 4} more gold turn(s)</div>")
        if not gold:
            parts.append("<div class=meta>gold at meeting level (no gold turns)</div>")
    parts.append("<div class=cols>" + "".join(f"<div><h3>top passages: {esc(name)}</h3>{_passages(v, qid)}</div>"
                                              for name, v in sides) + "</div></div>\n")
    return "".join(parts)


def _forest_rows(rows: Sequence[Row], per_seed: Mapping[int, Comparison] | None) -> list[plots.ForestRow]:
    out = []
    for r in rows:
        if r.block != "retrieval":
            continue
        label = " ".join(v for k, v in r.groups if k != "corpus") + " · " + r.measure
        seeds: tuple[float, ...] = ()
        if per_seed:
            key = (r.block, r.groups, r.measure)
            seeds = tuple(x.delta for c in per_seed.values() for x in c.rows
                          if (x.block, tuple(g for g in x.groups if g[0] != "corpus"), x.measure) == key)
        out.append(plots.ForestRow(label, r.delta, r.low, r.high, r.verdict, seeds))
    return out


def _effects_table(rows: Sequence[Row]) -> str:
    cells = [[esc(" ".join(v for k, v in r.groups if k != "corpus")), esc(r.measure), str(r.n), f"{r.delta:+.4f}",
              relative_text(r.relative), f"[{r.low:+.4f}, {r.high:+.4f}]", f"{r.p:.4f}", f"{r.p_holm:.4f}",
              f"{r.wins} / {r.ties} / {r.losses}", detectable_cell(r),
              r.verdict if r.verdict == SAME else f"<span class={r.verdict}>{r.verdict}</span>"]
             for r in rows]
    return _table(["group", "measure", "n", "Δ", "relative", "95% interval", "p", "Holm p", "wins / ties / losses",
                   "detectable", "verdict"], cells, 2)


def effects_tables(cmp: Comparison) -> str:
    """The report's Δ tables: the retrieval rows, then each other block folded (a notebook shows the same)."""
    out = [_effects_table([r for r in cmp.rows if r.block == "retrieval"])]
    for block in dict.fromkeys(r.block for r in cmp.rows if r.block != "retrieval"):
        others = [r for r in cmp.rows if r.block == block]
        named = sum(1 for r in others if r.verdict != SAME)
        out.append(f"<details><summary>{esc(BLOCK_TITLES.get(block, block))}: {len(others)} rows, {named} with a "
                   "named difference</summary>" + _effects_table(others) + "</details>\n")
    return "".join(out)


def _header(title: str, facts: Sequence[str], notes: Sequence[str]) -> list[str]:
    return ([f"<h1>{esc(title)}</h1>\n"] + [f"<div class=meta>{f}</div>\n" for f in facts]
            + [f"<p class=note>{esc(n)}</p>\n" for n in notes])


def comparison_page(cand: Sequence[tuple[int | None, Page]], base: Sequence[tuple[int | None, Page]],
                    cmp: Comparison, *, per_seed: Mapping[int, Comparison] | None = None,
                    callouts: Sequence[str] = (), gate_failures: Sequence[str] | None = None, top: str = "") -> bytes:
    """The comparison page: ``cand`` and ``base`` are the results (one per seed when pooled)."""
    f = cmp.facts
    title = f"turnbench report: {cmp.candidate} vs baseline {cmp.baseline}"
    # the gate is a verdict someone asked for (compare --gate); a page drawn without it does not pass or fail
    gate = ("" if gate_failures is None else '<span class=pass>gate PASS</span> · ' if not gate_failures else
            f'<span class=fail>gate FAIL</span> ({len(gate_failures)}: {esc(gate_failures[0])}) · ')
    body = _header(title, [
        f"corpus <b>{esc(f['corpus'])}</b> · relevance <code>{esc(f['relevance_policy'])}</code> · scope "
        f"<code>{esc(f['scope'])}</code> · paired queries: "
        + esc(", ".join(f"{n} {k}" for k, n in f["queries"].items())),
        f"{gate}paired bootstrap, {f['bootstrap']['resamples']:,} resamples, seed {f['bootstrap']['seed']}; "
        f"verdicts Holm-adjusted over {f['verdicts']['family']} rows at α = {f['verdicts']['alpha']}",
        esc(cand[0][1].texts.source)],
        [*([f"ORACLE scope {f['scope']}: an upper bound, not a system result"] if f["oracle"] else []),
         *cmp.notes, *callouts, *(f"warning: {w}" for w in cmp.warnings())])
    if top:
        body.append(top)
    body.append("<h2>Metrics per class</h2>\n")
    for seed, v in cand:
        body.append(f"<h3>candidate {esc(v.label)}{'' if seed is None else f' · seed {seed}'}</h3>"
                    + metric_table(v.results, v.latency_ms))
    for seed, v in base:
        body.append(f"<h3>baseline {esc(v.label)}{'' if seed is None else f' · seed {seed}'}</h3>"
                    + metric_table(v.results, v.latency_ms))
    body.append("<h2>What moved: Δ per class and measure</h2>\n")
    body.append(plots.forest(_forest_rows(cmp.rows, per_seed), f"{cmp.candidate} − {cmp.baseline}"
                             + (" (pooled; violet ticks: each seed)" if per_seed else "")))
    body.append(effects_tables(cmp))
    deltas = _deltas(cand, base)
    panels: dict[str, list[float]] = {}
    for (_, _, cls), d in deltas.items():
        panels.setdefault(cls, []).append(d)
    body.append("<h2>Per-query Δ, sorted, per class</h2>\n<p class=meta>Each query's Δ in its class's primary "
                f"measure ({' or '.join(model.PRIMARY)}), lowest left: red bars are queries that got worse.</p>\n")
    body.append(plots.strips(panels, "Δ per query", "strips"))
    body.append(_worst_section(deltas, cand, base))
    body.append("<h2>Answers</h2>\n")
    for who, side in (("candidate", cand), ("baseline", base)):
        for seed, v in side:
            body.append(f"<h3>{who} {esc(v.label)}{'' if seed is None else f' · seed {seed}'}</h3>"
                        + _answers_table(v.results))
    return _page(title, body)


def _deltas(cand: Sequence[tuple[int | None, Page]], base: Sequence[tuple[int | None, Page]]
            ) -> dict[tuple[int | None, str, str], float]:
    """(seed, query, class) → Δ of the query's primary measure."""
    out = {}
    for (seed, cv), (_, bv) in zip(cand, base, strict=True):
        b = model.per_query_values(bv)
        for qid, (cls, values) in sorted(model.per_query_values(cv).items()):
            p = model.primary(values)
            if p is not None and qid in b:
                out[(seed, qid, cls)] = round(p[1] - b[qid][1][p[0]], 6)
    return out


def _worst(deltas: Mapping[tuple[int | None, str, str], float]) -> list[tuple[float, int, str, str]]:
    """The page's worst regressions: (Δ, seed or -1, query, class), worst first."""
    return sorted(((d, seed if seed is not None else -1, qid, cls) for (seed, qid, cls), d in deltas.items()
                   if d < 0))[:model.WORST]


def shown_queries(cand: Sequence[tuple[int | None, Page]], base: Sequence[tuple[int | None, Page]]
                  ) -> dict[int | None, set[str]]:
    """Per seed (None: one results directory), the queries whose cards the comparison page shows: the only ones
    whose texts it reads."""
    out: dict[int | None, set[str]] = {seed: set() for seed, _ in cand}
    for _, s, qid, _ in _worst(_deltas(cand, base)):
        out[None if s == -1 else s].add(qid)
    return out


def _worst_section(deltas: Mapping[tuple[int | None, str, str], float], cand: Sequence[tuple[int | None, Page]],
                   base: Sequence[tuple[int | None, Page]]) -> str:
    worst = _worst(deltas)
    views = {seed: (cv, bv) for (seed, cv), (_, bv) in zip(cand, base, strict=True)}
    parts = [f"<h2>The {model.WORST} worst regressions</h2>\n"]
    if not worst:
        return parts[0] + "<p>No query got worse in its primary measure.</p>\n"
    for d, s, qid, cls in worst:
        seed = None if s == -1 else s
        cv, bv = views[seed]
        p = model.primary(model.per_query_values(cv)[qid][1])
        m = p[0] if p else ""
        head = (f"<b>{esc(qid)}</b>{'' if seed is None else f' · seed {seed}'} · {esc(cls)} · {esc(m)} "
                f"{model.per_query_values(bv)[qid][1][m]:.4f} → {model.per_query_values(cv)[qid][1][m]:.4f} "
                f"(<span class=worse>Δ {d:+.4f}</span>)")
        parts.append(_query_card(qid, head, [(f"candidate {cv.label}", cv), (f"baseline {bv.label}", bv)]))
    return "".join(parts)


def results_page(view: Page) -> bytes:
    """The page of one results directory."""
    results = view.results
    prov = results.provenance
    title = f"turnbench report: {view.label} on {view.corpus_id}"
    block = results.retrieval
    engine = prov.metric_engine
    facts = [f"corpus <b>{esc(view.corpus_id)}</b> sha256 <code>{esc(view.corpus_sha256[:12])}…</code> · relevance "
             f"<code>{esc(prov.policy)}</code> · metric engine {esc(engine['name'])} "
             f"{esc(engine['version'])} (trec_eval -c)", esc(view.texts.source)]
    scope = results.scope
    notes = [f"ORACLE scope {scope.label}: {scope.meaning}"] if scope.oracle else []
    body = _header(title, facts, notes)
    body += ["<h2>Metrics per class</h2>\n", metric_table(results, view.latency_ms)]
    if block is not None and block.ties is not None:
        from turnbench.harness.ties import note

        body.append(f"<p class=meta>{esc(note(block.ties))}</p>\n")
    panels, scores = model.primary_values(view)
    body.append("<h2>Per-query values, sorted, per class</h2>\n<p class=meta>Each query's value in its class's "
                f"primary measure ({' or '.join(model.PRIMARY)}), lowest left.</p>\n")
    body.append(plots.strips(panels, "value per query", "values", signed=False))
    body.append(f"<h2>The {model.WORST} weakest queries</h2>\n")
    per_query = model.per_query_values(view)
    for value, qid, cls in sorted(scores)[:model.WORST]:
        m = model.primary(per_query[qid][1])
        head = f"<b>{esc(qid)}</b> · {esc(cls)} · {esc(m[0] if m else '')} {value:.4f}"
        body.append(_query_card(qid, head, [(view.label, view)]))
    body += ["<h2>Answers</h2>\n", _answers_table(results)]
    return _page(title, body)


def comparison_html(base: Side, cand: Side, result: Comparison | SeedsComparison, *, gate: bool = False,
                    across: CorporaComparison | None = None) -> bytes:
    """The comparison page; ``gate``: the gate was asked for, so the page says whether it passed. ``across``: the
    change over several corpora, this page drawing the first; its gate and verdict table are the page's top."""
    failures = (across or result).gate_failures() if gate else None
    top = "" if across is None else across_section(across)
    if isinstance(result, SeedsComparison):
        return comparison_page(cand, base, result.pooled, per_seed=result.per_seed, callouts=result.callouts,
                               gate_failures=failures, top=top)
    return comparison_page(cand, base, result, gate_failures=failures, top=top)


def across_section(cc: CorporaComparison) -> str:
    """The verdict across corpora: per gated cell, each corpus's Δ, relative Δ and detectable effect."""
    names = [c.name for c in cc.corpora]
    cells = []
    for x in cc.cells():
        if x.block in REPORT_ONLY:
            continue
        verdict = x.verdict if x.verdict == SAME else f"<span class={x.verdict.split()[0]}>{esc(x.verdict)}</span>"
        cells.append([esc(x.block), esc(" ".join(v for _, v in x.groups)), esc(x.measure), *per_corpus_cells(x),
                      verdict])
    tiers = " · ".join(f"{esc(c.name)} (licence tier {esc(c.tier)})" for c in cc.corpora)
    return (f"<h2>Across {len(names)} corpora</h2>\n<p class=meta>{tiers}; Holm over the {cc.family()} gated rows "
            f"of every corpus, lookup guarded on each at {cc.guard_level:g}; worse when worse on any corpus, better "
            "only when better on every one. The rest of this page draws the first corpus.</p>\n"
            + "".join(f"<p class=note>warning: {esc(w)}</p>\n" for w in cc.warnings())
            + _table(["block", "group", "measure", *(h for n in names for h in (f"Δ {n}", "relative",
                                                                               "detectable")), "across corpora"],
                     cells, 3))


def results_html(side: Side) -> bytes:
    if len(side) != 1 or side[0][0] is not None:
        raise BadInput("a report of one side alone takes one results directory; give a baseline to compare a "
                       "set of seeds")
    return results_page(side[0][1])
