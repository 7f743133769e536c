"""Markdown for the results people read: metrics.md and answers.md (comparisons: ``turnbench.render.comparisons``).

One way to draw a pipe table (``table``), fixed formatting (4 decimals, "—" for a value no query has), and one
renderer per document; each draws only what the harness computed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from turnbench.errors import BadInput
from turnbench.harness import power, ties
from turnbench.harness.answers import GRAMMAR_LABELS, NAME_MATCH, AnswerResults, check_same, mechanisms_used
from turnbench.harness.compare import GUARD_ALPHA
from turnbench.harness.rows import ALL
from turnbench.results.record import AnswerRow, Results
from turnbench.results.tables import Block
from turnbench.results.tables import Row as RowRecord


def table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str = "") -> list[str]:
    """The lines of a pipe table. ``align`` holds one letter per column, ``l`` or ``r`` (missing: ``l``)."""
    rule = ["---:" if align[i:i + 1] == "r" else "---" for i in range(len(header))]
    return ["| " + " | ".join(header) + " |", "|" + "|".join(rule) + "|",
            *("| " + " | ".join(cells) + " |" for cells in rows)]


DASH = "—"
_HEADERS = {"meeting:nDCG@10": "mtg nDCG@10", "meeting:R@10": "mtg R@10"}
COMPARABLE = "⇄"
_COMPARABLE_PREFIXES = ("span:", "entry:")


def fmt4(x: float | None) -> str:
    return DASH if x is None else f"{x:.4f}"


def _describe(value: Any) -> str:
    """A one-line rendering of a provenance entry: a string as is, a dict as its scalar fields."""
    if isinstance(value, Mapping):
        if "name" in value and isinstance(value["name"], str):
            return f"`{value['name']}`"
        scalars = [f"{k}={value[k]}" for k in sorted(value) if isinstance(value[k], (str, int, float, bool))]
        return ", ".join(scalars) if scalars else "(see metrics.json)"
    return str(value)


def render_metrics_md(results: Results) -> str:
    prov = results.provenance
    corpus = prov.corpus
    scope = results.scope
    block = results.retrieval
    if block is None:
        raise BadInput("metrics.md draws a retrieval block, and these results have none")
    engine = prov.metric_engine
    lines = [f"# Retrieval metrics: {corpus.id}", ""]
    if scope.oracle:
        lines += [f"**ORACLE scope `{scope.label}`: {scope.meaning}.**", ""]
    lines += [
        f"- corpus: `{corpus.id}` sha256 `{corpus.sha256}` seed `{corpus.facts.get('seed')}` "
        f"licence tier `{prov.licence_tier}`",
        f"- scope: `{scope.label}` · arm: `{prov.label}` · stack: {_describe(prov.stack)}",
        f"- relevance policy: `{prov.policy}` · metric engine: {engine['name']} "
        f"{engine['version']} ({engine['semantics']}, {engine['ndcg']})",
        "",
    ]
    measures = block.measures
    comparable = [m for m in measures if m in set(block.comparable)]
    lines += _table(block.rows, [m for m in measures if m not in comparable])
    counts: Mapping[str, Any] = block.counts
    passage_n = {r.corpus: r.passage_level_queries for r in block.rows if r.cls == ALL}
    lines += [
        "",
        f"n counts judged queries; an unanswered query scores 0 and is in n (trec_eval -c); dropped queries "
        f"(gold reaches no passage) are not. {_levels_note(block.rows)}in the `all` row passage columns "
        f"average the {', '.join(str(v) for _, v in sorted(passage_n.items()))} passage-level queries. "
        f"`mtg` columns: the run collapsed to meetings by first occurrence, gold meetings relevant.",
        "",
        f"queries: {counts['queries_ranked']} ranked, {counts['queries_judged']} judged, "
        f"{counts['queries_unanswered']} unanswered, {counts['queries_dropped_unjudgeable']} dropped unjudgeable · "
        f"judged passages: {counts['judged_passages']} (by grade "
        f"{', '.join(f'{g}: {n}' for g, n in counts['judged_passages_by_grade'].items()) or 'none'})",
    ]
    if block.ties is not None:
        lines += ["", ties.note(block.ties)]
    if comparable:
        lines += ["", f"## Comparable across chunkings {COMPARABLE}", "",
                  *_table(block.rows, comparable, marked=True), "",
                  f"{COMPARABLE}: counted in the gold turns' words and in seconds from where the gold starts "
                  "(docs/harness.md), so another cut of the same corpus reads on the same scale; the table above "
                  "counts passages and moves with the cut. " + _comparable_note(block)]
    strict = results.strict
    if strict:
        lines += ["", f"## Strict: only grades ≥ {strict.threshold} relevant", "",
                  *_table(strict.rows, strict.measures), "",
                  f"{len(strict.dropped)} turn-level queries have no passage of grade "
                  f"{strict.threshold} or more and are dropped here; qrels in qrels.passages.strict.txt."]
    if results.extra:
        lines += ["", "## Extra measures (asked for with --measure; report-only)", "",
                  *_table(results.extra.rows, results.extra.measures), "",
                  "Computed as the first table (pytrec_eval, trec_eval -c, grade ≥ 1 relevant); MAP@100 is trec_eval's "
                  "map_cut.100 (ir_measures AP@100); trec.json names each in both tools."]
    for name, rows in sorted(block.rows_by_surface.items()):
        lines += ["", f"## Surface: {name}", "", *_table(rows, measures, marked=bool(comparable))]
    for domain, rows in sorted(block.rows_by_domain.items()):
        lines += ["", f"## Domain: {domain}", "", *_table(rows, measures, marked=bool(comparable))]
    lines += _detectable_section(results)
    return "\n".join(lines) + "\n"


def _detectable_section(results: Results) -> list[str]:
    """What a comparison against these results could find (``turnbench.harness.power``)."""
    detection = power.detection(results)
    found = detection.rows
    if not found:
        return []
    rows = [[*d.group, _HEADERS.get(d.measure, d.measure), str(d.n), fmt4(d.mean),
             DASH if d.share is None else f"{100 * d.share:.1f}%", DASH if d.loss is None else f"−{d.loss:.4f}"]
            for d in found]
    return ["", "## What a comparison on this corpus can detect", "",
            "The smallest loss `compare --gate` against these results finds 80% of the time, for a change that "
            "takes the whole score of a share of a class's queries (what `make perf-power` plants): lookup by its "
            f"guard (one-sided, {GUARD_ALPHA:g}), the other classes by Holm's first step over the "
            f"{detection.family} rows a comparison gates. A comparison states its own figure per row, "
            "from the paired spread (`detectable`); a smaller effect reads \"no measurable difference\". "
            f"{DASH}: no share of the class would do.", "",
            *table(["corpus", "class", "measure", "n", "mean", "share of queries", "loss"], rows, "lllrrrr")]


def _comparable_note(block: Block) -> str:
    if not any(m.startswith("entry:") for m in block.measures):
        return ("Entry points are not computed: this corpus's times are not part of its truth (neither generated "
                "nor measured).")
    return ("`entry |Δ| s`: the median distance between the first retrieved passage holding gold and the gold "
            "start, over the queries where one was retrieved.")


def _table(rows: Sequence[RowRecord], measures: Sequence[str], *, marked: bool = False) -> list[str]:
    """Class rows; ``marked``: label the measures comparable across chunkings, and give the entry-point median."""
    entry = marked and any(r.entry_error is not None for r in rows)
    header = ["corpus", "class", "n", "unanswered", "dropped",
              *(f"{_HEADERS.get(m, m)} {COMPARABLE}" if marked and m.startswith(_COMPARABLE_PREFIXES)
                else _HEADERS.get(m, m.replace("meeting:", "mtg ", 1)) for m in measures),
              *(["entry |Δ| s"] if entry else [])]
    cells = ([row.corpus, f"**{ALL}**" if row.cls == ALL else row.cls, str(row.queries),
              str(row.unanswered), str(row.dropped_unjudgeable), *(fmt4(row.means.get(m)) for m in measures),
              *([fmt4(row.entry_error.median if row.entry_error else None)] if entry else [])]
             for row in rows)
    return table(header, cells, "ll" + "r" * (len(header) - 2))


def _levels_note(rows: Sequence[RowRecord]) -> str:
    """Say, from the rows themselves, which classes have no passage-level queries and which mix levels."""
    notes = []
    for row in rows:
        if row.cls == ALL or not row.queries:
            continue
        turn, n = row.passage_level_queries, row.queries
        if turn == 0:
            notes.append(f"`{row.cls}` is judged at meeting level only, so its passage columns read {DASH}; ")
        elif turn < n:
            notes.append(f"`{row.cls}` mixes {turn} passage-level and {n - turn} meeting-level queries: its "
                         f"passage columns average the {turn}, its `mtg` columns all {n}; ")
    return "".join(notes)


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.4f}"


def _measures(row: AnswerRow) -> list[str]:
    return [str(row.questions), str(row.declined), _fmt(row.em), _fmt(row.partial), _fmt(row.answered),
            _fmt(row.set_f1)]


def render_answers_md(results: Sequence[AnswerResults]) -> str:
    """answers.md: per corpus × rule, × grammar side and × surface, each with an ``all`` row."""
    answerer, policy = check_same(results)
    results = sorted(results, key=lambda r: r.corpus)
    measures = ["questions", "declined", "EM", "partial", "answered", "set F1"]
    out = [
        "# Answers (aggregation questions, scored on the answer)",
        "",
        f"answerer: `{answerer}` · count tolerance: {policy.count_tolerance} · set partial credit: "
        f"{policy.set_credit} · names: {NAME_MATCH}",
        "",
        "EM is the measure. `declined` questions were not answered: they score 0 and are counted. `answered` is "
        "the share attempted. `partial` and `set F1` are diagnostics, never a substitute for EM. Surfaces marked "
        "OUT of grammar are phrasings the reference answerer is not built to understand; it should decline them.",
        "",
        "## By rule",
        "",
    ]
    out += table(["corpus", "rule", *measures],
                  ([r.corpus, row.rule, *_measures(row)] for r in results for row in r.rule_rows()))
    out += ["", "## By grammar", ""]
    out += table(["corpus", "grammar", *measures],
                  ([r.corpus, GRAMMAR_LABELS[row.grammar], *_measures(row)]
                   for r in results for row in r.grammar_rows()))
    out += ["", "## By surface", ""]
    out += table(["corpus", "rule", "surface", "grammar", *measures],
                  ([r.corpus, row.rule, row.surface, GRAMMAR_LABELS[row.grammar], *_measures(row)]
                   for r in results for row in r.surface_rows()))
    out += ["", "## Mechanisms", ""]
    out += table(["mechanism", "answers"], ([m, str(n)] for m, n in mechanisms_used(results).items()))
    return "\n".join(out) + "\n"

