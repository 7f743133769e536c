"""Two sides compared: a single pair of results directories, or two sets of seeds pooled; either side may also be
results scored in memory and never written (``InMemory``), checked as its files would be.

What ``compare`` and ``report`` share: pairing the sides, the statistics (``turnbench.harness.compare`` and
``.seeds``), and the notes on what differs between the two stacks outside the claim (runinfo.json).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from turnbench.corpus.format import Corpus
from turnbench.errors import BadInput, ResultsIntegrityError
from turnbench.harness import corpora as across_corpora
from turnbench.harness.compare import GUARD_ALPHA, RESAMPLES, SEED, Comparison, Row, compare
from turnbench.harness.gold import Paired, check_sides
from turnbench.harness.score import ResultsFiles
from turnbench.harness.seeds import SeedsComparison, compare_seeds
from turnbench.processes import Background
from turnbench.render import page
from turnbench.render.comparisons import render_comparison_md, render_corpora_md
from turnbench.render.html import comparison_html, results_html, shown_queries
from turnbench.render.summary import Said, comparison_summary
from turnbench.results.directory import (
    ReadOnce,
    Side,
    corpus_ids,
    load_side,
    rederive_dirs,
    runinfo_notes,
    seed_dirs,
    side_dirs,
    with_texts,
)


def compare_sides(base: Side, cand: Side, *, resamples: int = RESAMPLES, seed: int = SEED,
                  guard_level: float = GUARD_ALPHA, measures: Sequence[str] = ()) -> Comparison | SeedsComparison:
    if (base[0][0] is None) != (cand[0][0] is None):
        raise BadInput("one side is a single results directory and the other a set of seed-<S>/ directories")
    if base[0][0] is None:
        b, c = base[0][1], cand[0][1]
        return compare(b.results, c.results, resamples=resamples, seed=seed, bindings=_bindings_if_needed(b, c),
                       guard_level=guard_level, measures=measures)
    bmap = {s: v for s, v in base if s is not None}
    cmap = {s: v for s, v in cand if s is not None}
    return compare_seeds({s: v.results for s, v in bmap.items()}, {s: v.results for s, v in cmap.items()},
                         resamples=resamples, seed=seed,
                         bindings={s: pair for s in bmap if s in cmap
                                   and (pair := _bindings_if_needed(bmap[s], cmap[s])) is not None},
                         guard_level=guard_level, measures=measures)


def with_stack_notes(result: Comparison | SeedsComparison, baseline: Path, candidate: Path
                     ) -> Comparison | SeedsComparison:
    """``result`` noting where the two sides' stacks differ outside the claim (runinfo.json: provider, exact
    versions, JVM, images); for seed sets, every seed's differences once each, on the pooled comparison."""
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


def _bindings_if_needed(b: page.Page, c: page.Page) -> tuple[Sequence[Any], Sequence[Any]] | None:
    """Both sides' bindings, read only when their corpora differ (the one case compare consults them)."""
    if b.corpus_sha256 == c.corpus_sha256 or not (b.exported and c.exported):
        return None
    return b.bindings, c.bindings


@dataclass(frozen=True)
class Compared:
    """Two sides read from disk and compared: what ``compare`` prints and writes, and ``report`` draws."""

    baseline: Side
    candidate: Side
    result: Comparison | SeedsComparison

    def to_markdown(self, *, gate: bool | None = None) -> str:
        """compare.md: the rows and their verdicts (``gate``: say whether the gate passed)."""
        return render_comparison_md(self.result, gate=gate)

    def to_summary(self, *, gate: bool = False, rule: tuple[str, str, str] | None = None,
                   markdown: str | None = None, page: str | None = None) -> str:
        """What ``compare`` prints by default: the verdict counts, the headline rows, the gate (``gate``: say whether
        it passed) and the rule (its file, verdict and deciding clause), where the full tables (``markdown``) and
        the report (``page``) were written, in at most 100 columns (``to_markdown`` is ``--full``)."""
        return comparison_summary(self.result, Said(gate, rule, markdown, page))

    def to_html(self, *, gate: bool = False) -> bytes:
        """The comparison's report.html (``gate``: say whether the gate passed); none across snapshots, whose
        denominator only compare.md and the JSON say."""
        if self.denominator() is not None:
            raise BadInput("no page is drawn across snapshots: to_markdown() and to_json() say what was paired")
        return comparison_html(self.baseline, self.candidate, self.result, gate=gate)

    def to_json(self) -> dict[str, Any]:
        """Every row (delta, interval, p-values, verdicts) and the gate's failures."""
        return self.result.to_json()

    def _repr_html_(self) -> str:
        """Jupyter's view: the report's Δ tables (pooled over seeds), every row with its interval and verdict."""
        from turnbench.render.html import effects_tables

        result = self.result.pooled if isinstance(self.result, SeedsComparison) else self.result
        return effects_tables(result)

    def gate_failures(self) -> list[str]:
        """Why ``compare --gate`` would fail; empty when it passes."""
        return self.result.gate_failures()

    def warnings(self) -> list[str]:
        """Lookup losses the guard cannot tell from noise: shown, never failed."""
        return self.result.warnings()

    def denominator(self) -> str | None:
        """``n of N queries`` when the comparison is across snapshots (on their comparable subset), else None."""
        from turnbench.harness.snapshots import denominator

        snap = self.result.facts.get("snapshots") if isinstance(self.result, Comparison) else None
        return None if snap is None else denominator(snap)

    def rows(self) -> tuple[Row, ...]:
        """The rows a verdict reads: the pooled ones for seed sets."""
        return self.result.pooled.rows if isinstance(self.result, SeedsComparison) else self.result.rows


@dataclass(frozen=True)
class InMemory:
    """Results scored in memory and never written (``turnbench.score`` in a notebook): compared as their files would
    be, every check a results directory gets that does not read a disk — the pairing, the one gold (from the files
    they would write), a named corpus's judgements — made the same way. ``name`` is how a refusal names them."""

    scored: ResultsFiles
    name: str


SideGiven = Path | InMemory  # a results directory (or set of seeds), or results in memory


def compare_dirs(baseline: SideGiven, candidate: SideGiven, *, corpora: Sequence[Corpus] = (), texts: bool = False,
                 resamples: int = RESAMPLES, seed: int = SEED, guard_level: float = GUARD_ALPHA,
                 measures: Sequence[str] = ()) -> Compared:
    """Read two results directories (or two sets of seeds; or take results in memory) and compare them. Texts are
    read — and every binding checked against the named corpora — only when ``texts`` or a corpus is named (a page
    needs them, a verdict does not)."""
    # Each document is checked, and its values re-derived from their evidence, in a child process while the
    # statistics are drawn from it here: each takes seconds, they are independent until the end, and nothing is
    # returned unless the child agrees. One child: a second would take a share of the core the statistics need.
    # Results in memory have no digest to verify: each is checked and re-derived here as it is taken (``_load``);
    # with no directory to read, there is no child.
    dirs = [d for side in (baseline, candidate) if not isinstance(side, InMemory) for d in side_dirs(Path(side))]
    with (Background(rederive_dirs, dirs) if dirs else _Nothing()) as job, _one_blas_thread():
        try:
            known = ReadOnce()  # a side whose bytes are the other's is parsed once
            base, cand = _load(baseline, known), _load(candidate, known)
            result = compare_sides(base, cand, resamples=resamples, seed=seed, guard_level=guard_level,
                                   measures=measures)
            if corpora or texts:
                # texts are for the page's cards: a corpus named is checked whole, one recorded for the cards alone
                base, cand = with_texts([base, cand], corpora, None if corpora else shown_queries(cand, base))
            # both sides judged against one gold (and, with a corpus named, the gold it gives)
            check_sides(_paired_dirs(baseline, candidate, base, cand), corpora)
        except Exception:
            job.result()  # a document the child refuses is what went wrong here too: its refusal is the one said
            raise
        checked = set(job.result())
        if any(v.claim not in checked for given, side in ((baseline, base), (candidate, cand))
               if not isinstance(given, InMemory) for _, v in side):
            raise ResultsIntegrityError("a results directory changed while compare read it; run it again")
    if isinstance(baseline, InMemory) or isinstance(candidate, InMemory):
        return Compared(base, cand, result)  # no runinfo.json in memory: no stacks to tell apart
    return Compared(base, cand, with_stack_notes(result, Path(baseline), Path(candidate)))


class _Nothing(contextlib.nullcontext):
    """Background's stand-in when no directory is to be checked."""

    def __enter__(self) -> _Nothing:
        return self

    def result(self) -> list[str]:
        return []


def _load(given: SideGiven, known: ReadOnce) -> Side:
    if isinstance(given, InMemory):
        # as a directory's document is checked (no digest or recorded sha256 yet: nothing written vouches): its
        # numbers agree with each other, and its values follow from the run and qrels it would write
        from turnbench.results.integrity import check_document
        from turnbench.results.rederive import rederive

        check_document(given.scored.document, given.name)
        rederive(given.scored.document, given.scored.extra_files, given.name)
        return [(None, page.from_files(given.scored.results, given.scored.extra_files))]
    return load_side(Path(given), checked=False, known=known)


def _paired_dirs(baseline: SideGiven, candidate: SideGiven, base: Side, cand: Side
                 ) -> list[tuple[Paired, Paired]]:
    """The (baseline, candidate) sides compared with each other, each with its record: the two directories (or
    results in memory, by the files they would write), or each seed's pair."""
    def held(given: SideGiven, side: Side) -> dict[int | None, Paired]:
        if isinstance(given, InMemory):
            return {None: (given.scored.extra_files, side[0][1].results, given.name)}
        return {s: (d, v.results, None) for (s, v), d in zip(side, side_dirs(Path(given)), strict=True)}

    b, c = held(baseline, base), held(candidate, cand)
    return [(b[s], c[s]) for s in b if s in c]


@dataclass(frozen=True)
class ComparedCorpora:
    """One change over several corpora (``compare BASE CAND --also BASE2 CAND2 ...``): each corpus's pair read and
    compared as ``compare_dirs`` does, the verdicts adjusted together (``turnbench.harness.corpora``)."""

    pairs: tuple[Compared, ...]
    result: across_corpora.CorporaComparison

    def to_markdown(self, *, gate: bool | None = None) -> str:
        return render_corpora_md(self.result, gate=gate)

    def to_summary(self, *, gate: bool = False, rule: tuple[str, str, str] | None = None,
                   markdown: str | None = None, page: str | None = None) -> str:
        return comparison_summary(self.result, Said(gate, rule, markdown, page))

    def to_html(self, *, gate: bool = False) -> bytes:
        """The first corpus's page, its verdicts the joint ones, with the verdict across corpora on top."""
        first = self.pairs[0]
        return comparison_html(first.baseline, first.candidate, self.result.corpora[0].comparison, gate=gate,
                               across=self.result)

    def to_json(self) -> dict[str, Any]:
        return self.result.to_json()

    def gate_failures(self) -> list[str]:
        return self.result.gate_failures()

    def warnings(self) -> list[str]:
        return self.result.warnings()

    def _repr_html_(self) -> str:
        """Jupyter's view: the verdict across corpora, then each corpus's Δ tables (jointly adjusted)."""
        from turnbench.render.html import across_section, effects_tables, esc

        return across_section(self.result) + "".join(
            f"<h3>{esc(c.name)}</h3>" + effects_tables(c.comparison) for c in self.result.corpora)

    def rows(self) -> tuple[Row, ...]:
        """Every corpus's rows, jointly adjusted."""
        return tuple(r for c in self.result.corpora for r in c.comparison.rows)


def compare_corpora(pairs: Sequence[tuple[SideGiven, SideGiven]], *, corpora: Sequence[Corpus] = (),
                    texts: bool = False, resamples: int = RESAMPLES, seed: int = SEED,
                    measures: Sequence[str] = ()) -> ComparedCorpora:
    """The same change (baseline arm → candidate arm) judged on each corpus of ``pairs``: a regression on any
    corpus fails the gate, a win must hold on every one. ``corpora``: corpus directories, each checked against the
    pair whose results it scored."""
    level = across_corpora.guard_level(len(pairs))
    done: list[Compared] = []
    for b, c in pairs:
        # each named corpus checks (and judges again) the pair whose results it scored
        mine = [x for x in corpora if x.id in _corpus_ids(b) | _corpus_ids(c)]
        # the page is the first corpus's: only its texts are drawn
        done.append(compare_dirs(b, c, corpora=mine, texts=texts and not done, resamples=resamples, seed=seed,
                                 guard_level=level, measures=measures))
    named = {x.id for x in corpora}
    unused = named - {v.corpus_id for p in done for side in (p.baseline, p.candidate) for _, v in side}
    if unused:
        raise BadInput(f"corpus {sorted(unused)[0]} is not the corpus of any results given")
    across_corpora.check_corpora([(p.baseline[0][1].results, p.candidate[0][1].results) for p in done])
    parts = []
    for p in done:
        cmp = p.result.pooled if isinstance(p.result, SeedsComparison) else p.result
        tier = p.baseline[0][1].results.provenance.licence_tier or "unrecorded"
        parts.append(across_corpora.Corpus(str(cmp.facts["corpus"]), tier, cmp))
    return ComparedCorpora(tuple(done), across_corpora.combine(parts))


def _corpus_ids(given: SideGiven) -> set[str]:
    return {given.scored.results.corpus_id} if isinstance(given, InMemory) else corpus_ids(Path(given))


def _one_blas_thread() -> Any:
    """BLAS kept to one thread: its matrix products are a small part of the statistics, and a second thread would
    spin on the core the re-derivation needs (numpy is loaded first, or there is no library yet to limit)."""
    import numpy  # noqa: F401
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    return threadpool_limits(limits=1, user_api="blas")


def report_page(results: Path, baseline: Path | None = None, *, corpora: Sequence[Corpus] = (),
                resamples: int = RESAMPLES, seed: int = SEED) -> bytes:
    """report.html of ``results`` alone, or of ``results`` against ``baseline``."""
    if baseline is None:
        (side,) = with_texts([load_side(Path(results))], corpora)
        # with a corpus named, its results' judgements and gold are the ones it gives
        check_sides([], corpora, [(d, v.results) for d, (_, v) in zip(side_dirs(Path(results)), side, strict=True)])
        return results_html(side)
    return compare_dirs(baseline, results, corpora=corpora, texts=True, resamples=resamples, seed=seed).to_html()
