"""``turnbench sweep``: a grid of chunkings (``--max-words`` × ``--overlap``) loaded one after another on one
stack, every arm run and scored on each against the same turn gold; one table and one page over all of them, and
the decision rule, fixed before the numbers, evaluated in every cell (``turnbench.harness.sweep_rules``).

Layout: ``OUT/w<W>-o<O>/<arm>/`` is each cell's results directory (complete, as ``bench`` writes it, so any two
can be compared); ``OUT/sweep.json``, ``OUT/sweep.md`` and ``OUT/sweep.html`` are the summary. OUT is written
staged, as a results directory is: it appears whole, summary included, or not at all. Retrieval only:
the answer engine reads the index the same way whatever the cut, so a sweep would measure it once per cell for
nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.corpus.format import Corpus
from turnbench.engines.arms import Arm
from turnbench.errors import BadInput, ResultsIntegrityError
from turnbench.harness import sweep_rules
from turnbench.pipeline.progress import QUIET, Progress, Stages
from turnbench.results.record import Results
from turnbench.results.sweep import ArmCell, CellResults, CellVerdict, Means, Rule, RuleComparison, Sweep
from turnbench.stack.info import StackInfo
from turnbench.vocab import Answerer

MAX_CELLS = 36
SWEEP_JSON, SWEEP_MD, SWEEP_HTML = "sweep.json", "sweep.md", "sweep.html"


def grid(max_words: Sequence[int], overlaps: Sequence[int]) -> list[sweep_rules.Cell]:
    """The cells in order (sizes as given, each with every overlap), refused when a value repeats, an overlap is not
    below every size, or the grid is larger than ``MAX_CELLS``."""
    if not max_words or not overlaps:
        raise BadInput("a sweep needs at least one --max-words and one --overlap value")
    for name, values in (("--max-words", max_words), ("--overlap", overlaps)):
        if len(set(values)) != len(values):
            raise BadInput(f"{name} names a value twice: {', '.join(map(str, values))}")
    if any(w < 1 for w in max_words) or any(o < 0 for o in overlaps):
        raise BadInput("--max-words values are positive and --overlap values are 0 or more")
    if max(overlaps) >= min(max_words):
        raise BadInput(f"--overlap {max(overlaps)} is not below --max-words {min(max_words)}: a passage would repeat "
                       "its predecessor whole")
    cells = [sweep_rules.Cell(w, o) for w in max_words for o in overlaps]
    if len(cells) > MAX_CELLS:
        raise BadInput(f"a grid of {len(cells)} chunkings is more than {MAX_CELLS}: each is a load of the corpus")
    return cells


def parse_ints(text: str, option: str) -> list[int]:
    """``50,100,200`` → [50, 100, 200]; refused in one line otherwise."""
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        raise BadInput(f"{option} {text!r}: give whole numbers separated by commas, e.g. 100,200") from None
    if any(v > 100_000 for v in values):
        raise BadInput(f"{option} {text!r}: a value is at most 100000")
    return values


def sweep(corpus_dir: Path, arms: Sequence[Arm | str], out: Path, cells: Sequence[sweep_rules.Cell], options: Any, *,
          rule: str | None = None, progress: Progress | None = None, echo: Callable[[str], None] | None = None,
          stack: StackInfo | None = None) -> Sweep:
    """Run the sweep and write its summary; returns sweep.json's record. ``options``: a ``BenchOptions`` (its
    answerer is ignored: a sweep is retrieval only); ``progress``: told of each stage as it goes."""
    from turnbench.corpus.format import open_corpus
    from turnbench.pipeline import bench

    resolved = bench._check(arms)
    out = Path(out)
    canonical.refuse_non_empty(out, "sweep directory", "choose a new --out")
    across_cells = len(resolved) == 1
    clauses = sweep_rules.parse_rule(rule, measures(), across_cells=across_cells) if rule else ()
    corpus = open_corpus(Path(corpus_dir))
    opts = dataclasses.replace(options, answerer=Answerer.SKIP)
    docs: dict[tuple[str, str], Results] = {}
    # the whole sweep is written into a staged sibling of OUT, renamed into place with its summary: a sweep ended
    # short (a refusal, SIGTERM, SIGINT) leaves neither OUT nor its staging, so nothing is there for a rerun to trip
    # over; a SIGKILLed sweep's staging is swept by the next run writing to OUT
    with canonical.staged_directory(out) as staged:
        jobs = [(c, [(a.name, staged / c.name / a.name) for a in resolved]) for c in cells]
        (progress or QUIET).expect(1 + 5 * len(resolved) * len(cells))
        st = Stages(progress or QUIET)
        say = echo or st.log
        with bench._stack_stage(stack, opts, st, say) as open_:
            for cell, dirs in jobs:
                say(f"sweep: {cell.name} (max {cell.max_words} words, overlap {cell.overlap})")
                cell_opts = dataclasses.replace(opts, max_words=cell.max_words, overlap=cell.overlap)
                for o in bench._bench_corpus(open_, (Path(corpus_dir), corpus, dirs), resolved, cell_opts, st,
                                         tag=f" {cell.name}", say=say):
                    docs[(cell.name, o.arm)] = o.results.results
        swept = summary(corpus, cells, [a.name for a in resolved], docs, rule, clauses)
        write_summary(staged, swept)
    return swept


def measures() -> list[str]:
    from turnbench.harness import metrics
    from turnbench.harness.spans import COMPARABLE

    return [str(m) for m in metrics.ALL_MEASURES] + list(COMPARABLE)


def _cell(cell: sweep_rules.Cell, arms: Sequence[str], docs: Mapping[tuple[str, str], Results]) -> CellResults:
    per_arm = {}
    for arm in arms:
        doc = docs[(cell.name, arm)]
        rows = doc.retrieval.rows if doc.retrieval else ()
        judged = doc.retrieval.counts["judged_passages"] if doc.retrieval else 0
        if not isinstance(judged, int):
            raise ResultsIntegrityError(f"{cell.name}/{arm}: metrics.json's judged_passages is not a count")
        per_arm[arm] = ArmCell(f"{cell.name}/{arm}", judged,
                               sweep_rules.class_means(doc),
                               {r.cls: r.entry_error.median if r.entry_error else None for r in rows})
    passages = docs[(cell.name, arms[0])].provenance.passage_count
    return CellResults(cell.name, cell.max_words, cell.overlap, passages, per_arm)


def summary(corpus: Corpus, cells: Sequence[sweep_rules.Cell], arms: Sequence[str],
            docs: Mapping[tuple[str, str], Results], rule: str | None,
            clauses: Sequence[sweep_rules.Clause]) -> Sweep:
    """sweep.json's record: every cell's class means per arm, and the rule's verdict per comparison and cell."""
    blocks = tuple(_cell(c, arms, docs) for c in cells)
    first = docs[(cells[0].name, arms[0])].retrieval
    measures = first.measures if first else ()
    return Sweep(corpus.id, corpus.sha256, tuple(sorted({c.max_words for c in cells})),
                 tuple(sorted({c.overlap for c in cells})), tuple(arms),
                 tuple(m for m in measures if m in sweep_rules.SHOWN_COMPARABLE),
                 tuple(m for m in sweep_rules.SHOWN_PASSAGE if m in measures), blocks,
                 verdicts(blocks, arms, rule, clauses) if rule else None)


def _pairs(blocks: Sequence[CellResults], arms: Sequence[str]) -> list[tuple[str, str, list[tuple[str, Means, Means]]]]:
    """(baseline label, candidate label, [(cell, baseline means, candidate means)]) per comparison the rule reads."""
    if len(arms) > 1:
        return [(arms[0], a, [(b.name, b.arms[arms[0]].means, b.arms[a].means) for b in blocks]) for a in arms[1:]]
    ref = blocks[0]
    return [(f"{arms[0]} @ {ref.name}", f"{arms[0]} @ each cell",
             [(b.name, ref.arms[arms[0]].means, b.arms[arms[0]].means) for b in blocks[1:]])]


def verdicts(blocks: Sequence[CellResults], arms: Sequence[str], rule: str,
             clauses: Sequence[sweep_rules.Clause]) -> Rule:
    from turnbench.harness.spans import COMPARABLE

    across_cells = len(arms) == 1  # then only what is comparable across chunkings may be set side by side
    out = []
    for base, cand, cells in _pairs(blocks, arms):
        per_cell = []
        signs: dict[str, dict[str, list[float]]] = {}
        for cell, b, c in cells:
            delta = sweep_rules.deltas(b, c)
            ok, failed = sweep_rules.holds(clauses, delta)
            per_cell.append(CellVerdict(cell, ok, tuple(failed)))
            for cls, values in delta.items():
                for m, v in values.items():
                    if across_cells and m not in COMPARABLE:
                        continue
                    signs.setdefault(cls, {}).setdefault(m, []).append(v)
        out.append(RuleComparison(base, cand, tuple(per_cell),
                                  {cls: {m: sweep_rules.sign_pattern(v) for m, v in sorted(ms.items())}
                                   for cls, ms in sorted(signs.items())}))
    return Rule(rule, tuple(str(c) for c in clauses),
                "sign of Δ of class means at 6 decimals; not a significance test (compare two cells' results for "
                "intervals)", tuple(out))


def write_summary(out: Path, swept: Sweep) -> None:
    from turnbench.render.sweep_tables import sweep_html, sweep_md

    canonical.write_json(out / SWEEP_JSON, swept.to_tree())
    canonical.write_bytes_atomic(out / SWEEP_MD, sweep_md(swept).encode("utf-8"))
    canonical.write_bytes_atomic(out / SWEEP_HTML, sweep_html(swept))
