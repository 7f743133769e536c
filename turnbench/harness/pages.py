"""From results directories on disk to a comparison and its pages: what ``compare``, ``report`` and ``bench`` share.

A *side* is one results directory, or a set of ``seed-<S>/`` results directories (``bench --seeds``); two sides
compare only when they are the same kind and, for seed sets, hold the same seeds. Every directory is read
through ``view.read`` (digest and numbers checked), and each side's bindings travel with it so that a corpus
whose text changed under a shared target is refused as a stale binding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from turnbench.corpus.format import Corpus
from turnbench.errors import BadInput
from turnbench.harness import html as H
from turnbench.harness import view as V
from turnbench.harness.compare import RESAMPLES, SEED, Comparison, compare, render_compare_md
from turnbench.harness.score import Results
from turnbench.harness.seeds import SeedsComparison, compare_seeds, render_seeds_md, seed_dirs

REPORT_HTML = "report.html"
Side = list[tuple[int | None, V.View]]


def load_side(path: Path) -> Side:
    seeds = seed_dirs(Path(path))
    if seeds is None:
        return [(None, V.read(Path(path)))]
    return [(s, V.read(d)) for s, d in seeds.items()]


def with_texts(sides: Sequence[Side], corpora: Sequence[Corpus]) -> list[Side]:
    """``sides`` with the texts each results directory binds to. Every named corpus must be the corpus of some
    results here, and each results directory of that corpus is checked against its text (StaleBinding names the
    first stale target)."""
    ids = {v.corpus_id for side in sides for _, v in side}
    for c in corpora:
        if c.id not in ids:
            raise BadInput(f"corpus {c.id} is not the corpus of any results given ({', '.join(sorted(ids))})")
    cache = V.Meetings()
    return [[(s, V.attach_texts(v, corpora, cache)) for s, v in side] for side in sides]


def compare_sides(base: Side, cand: Side, *, resamples: int = RESAMPLES, seed: int = SEED
                  ) -> Comparison | SeedsComparison:
    if (base[0][0] is None) != (cand[0][0] is None):
        raise BadInput("one side is a single results directory and the other a set of seed-<S>/ directories")
    if base[0][0] is None:
        b, c = base[0][1], cand[0][1]
        return compare(b.document, c.document, resamples=resamples, seed=seed, bindings=_bindings_if_needed(b, c))
    bmap = {s: v for s, v in base if s is not None}
    cmap = {s: v for s, v in cand if s is not None}
    return compare_seeds({s: v.document for s, v in bmap.items()}, {s: v.document for s, v in cmap.items()},
                         resamples=resamples, seed=seed,
                         bindings={s: pair for s in bmap if s in cmap
                                   and (pair := _bindings_if_needed(bmap[s], cmap[s])) is not None})


def with_stack_notes(result: Comparison | SeedsComparison, baseline: Path, candidate: Path
                     ) -> Comparison | SeedsComparison:
    """``result`` noting where the two sides' stacks differ outside the claim (runinfo.json: provider, exact
    versions, JVM, images); for seed sets, every seed's differences once each, on the pooled comparison."""
    from turnbench.harness.report import runinfo_notes

    base, cand = seed_dirs(Path(baseline)), seed_dirs(Path(candidate))
    if base is None or cand is None:
        pairs = [(Path(baseline), Path(candidate))]
    else:
        pairs = [(base[s], cand[s]) for s in sorted(base) if s in cand]
    extra = tuple(dict.fromkeys(n for b, c in pairs for n in runinfo_notes(b, c)))
    if not extra:
        return result
    if isinstance(result, SeedsComparison):
        return replace(result, pooled=replace(result.pooled, notes=result.pooled.notes + extra))
    return replace(result, notes=result.notes + extra)


def _bindings_if_needed(b: V.View, c: V.View) -> tuple[Sequence[Any], Sequence[Any]] | None:
    """Both sides' bindings, read only when their corpora differ (the one case compare consults them)."""
    if b.corpus_sha256 == c.corpus_sha256 or not (b.exported and c.exported):
        return None
    return b.bindings, c.bindings


def markdown(result: Comparison | SeedsComparison, *, gate: bool | None = None) -> str:
    if isinstance(result, SeedsComparison):
        return render_seeds_md(result, gate=gate)
    return render_compare_md(result, gate=gate)


def comparison_html(base: Side, cand: Side, result: Comparison | SeedsComparison) -> bytes:
    if isinstance(result, SeedsComparison):
        return H.comparison_page(cand, base, result.pooled, per_seed=result.per_seed, callouts=result.callouts,
                                 gate_failures=result.gate_failures())
    return H.comparison_page(cand, base, result, gate_failures=result.gate_failures())


def results_html(side: Side) -> bytes:
    if len(side) != 1 or side[0][0] is not None:
        raise BadInput("a report of one side alone takes one results directory; give a baseline to compare a "
                       "set of seeds")
    return H.results_page(side[0][1])


def attach_report(results: Results, corpus: Corpus) -> Results:
    """``results`` with report.html beside its files, drawn with the texts of the corpus it was just scored on."""
    view = V.from_results(results)
    view = view.with_texts(V.texts_from(view, corpus, "the corpus these results were scored on"))
    return Results(results.document, {**results.extra_files, REPORT_HTML: H.results_page(view)})
