"""Comparing results from Python: two results directories (or sets of seeds) judged per class and measure
(``compare``), a decision rule's verdict on a comparison (``decide``), how many questions a comparison needs
(``plan``, ``check_plan``), one self-contained page (``report``), and whether two corpora rank arms alike
(``agreement``, ``agreement_decisions``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnbench.api._args import PathLike, _corpora, _int, _list, _path, _paths, _typed
from turnbench.api.results import Results, _results_dir
from turnbench.errors import BadInput
from turnbench.results.record import Results as Record

if TYPE_CHECKING:
    from turnbench.harness.agreement import Cell
    from turnbench.harness.decisions import DecisionTable
    from turnbench.harness.rules import Decision, Rule
    from turnbench.pipeline.comparing import Compared, ComparedCorpora
    from turnbench.pipeline.planning import Plan

CorpusLike = Any  # a Corpus or its directory


def compare(baseline: Results | PathLike, candidate: Results | PathLike, *,
            corpora: Sequence[CorpusLike] = (), resamples: int = 10_000, seed: int | None = None,
            also: Sequence[tuple[Results | PathLike, Results | PathLike]] = (),
            texts: bool = False, publishable: bool = False, across_snapshots: bool = False,
            receipts: Sequence[PathLike] = (), measures: Sequence[str] = ()) -> Compared | ComparedCorpora:
    """Compare two results directories (or two sets of seeds), or results in memory (what ``score`` returned, never
    written; either side or both): per class × measure, the paired bootstrap interval, the randomisation p-value,
    the Holm-adjusted verdict and the detectable effect; ``.gate_failures()`` is what ``--gate`` fails on,
    ``.warnings()`` the lookup losses within noise. Results in memory are refused as their files would be (other
    corpora, policies or queries, another gold). ``also``: the same two arms on other corpora, judged together
    (``compare --also``; docs/gate.md). ``texts``: read the texts (and check every binding) for a page
    (``.to_html()``) even when no corpus is named. ``publishable``: refuse (NotPublishable) any results not measured
    on a tier A corpus, before anything is compared. ``across_snapshots``: the two sides (written results
    directories) were scored on two snapshots of one corpus; compare the queries whose targets are unchanged (and the
    changed ones a reannotation receipt of ``receipts`` vouches for: ``reannotate``), list the rest by class
    (docs/design.md §7). ``measures``: extra measures (R@1, P@5, ...; as ``score`` takes them) both sides recorded,
    compared in a report-only ``extra`` block; one a side did not record is refused (BadInput)."""
    from turnbench.harness.compare import SEED
    from turnbench.harness.metrics import selected
    from turnbench.pipeline.comparing import compare_corpora, compare_dirs

    base, cand = _given(baseline, "baseline"), _given(candidate, "candidate")
    names = [str(m) for m in selected(measures)]
    _int(resamples, "resamples")
    _int(seed, "seed", optional=True)
    _typed(texts, bool, "texts", "True or False")
    if not 100 <= resamples <= 1_000_000 or not (seed is None or 0 <= seed < 2**32):
        raise BadInput(f"resamples must be from 100 to 1000000 and seed from 0 to 2^32-1, not {resamples}, {seed}")
    pairs = _list(also, "also", "(baseline, candidate) pairs", lambda p: isinstance(p, (tuple, list)) and len(p) == 2,
                  "a (baseline, candidate) pair")
    sides = [(_given(b, f"also[{i}] baseline"), _given(c, f"also[{i}] candidate")) for i, (b, c) in enumerate(pairs)]
    receipt_files = _paths(receipts, "receipts")
    if _typed(publishable, bool, "publishable", "True or False"):
        _publishable([base, cand, *(p for pair in sides for p in pair)])
    if _typed(across_snapshots, bool, "across_snapshots", "True or False"):
        from turnbench.pipeline.snapshots import compare_snapshots

        given = [name for name, on in (("corpora", bool(corpora)), ("also", bool(pairs)), ("texts", texts)) if on]
        if given:
            raise BadInput(f"across snapshots, {given[0]} is not taken: the comparison is of two results directories "
                           "on their comparable queries, drawn without texts")
        if not (isinstance(base, Path) and isinstance(cand, Path)):
            raise BadInput("across snapshots, both sides are written results directories (their bindings.jsonl "
                           "classifies each query): write() results in memory first")
        return compare_snapshots(base, cand, receipts=receipt_files, resamples=resamples,
                                 seed=SEED if seed is None else seed, measures=names)
    if receipt_files:
        raise BadInput("receipts are read across snapshots only: give across_snapshots=True (--across-snapshots)")
    if pairs:
        return compare_corpora([(base, cand), *sides], corpora=_corpora(corpora), texts=texts, resamples=resamples,
                               seed=SEED if seed is None else seed, measures=names)
    return compare_dirs(base, cand, corpora=_corpora(corpora), texts=texts, resamples=resamples,
                        seed=SEED if seed is None else seed, measures=names)


def reannotate(baseline: Results | PathLike, candidate: Results | PathLike, queries: Sequence[str], *, by: str,
               at: str) -> bytes:
    """A reannotation receipt (canonical JSON bytes, for ``compare(..., across_snapshots=True, receipts=...)``):
    ``by`` re-judged each of ``queries`` at ``at`` (an ISO 8601 date or date and time, recorded as given), targets
    whose text changed between the baseline's snapshot of the corpus and the candidate's; the receipt holds both
    snapshots, each query's old and new binding digests and its new gold (the candidate's)."""
    from turnbench.pipeline.snapshots import reannotate as receipt

    qids = _list(queries, "queries", "query ids", lambda q: isinstance(q, str), "a query id (str)")
    return receipt(_results_dir(baseline, "baseline"), _results_dir(candidate, "candidate"), qids,
                   by=_typed(by, str, "by", "who reannotated (str)"), at=_typed(at, str, "at", "a date (str)"))


def _given(side: Results | PathLike, name: str) -> Any:
    """A side of ``compare``: its results directory, or (results never written) the results in memory."""
    from turnbench.pipeline.comparing import InMemory

    if isinstance(side, Results) and side.out_dir is None:
        return InMemory(side.scored, f"the {name} (results in memory)")
    return _results_dir(side, f"{name}")


def _publishable(sides: Sequence[Any]) -> None:
    """NotPublishable at the first side, in order, not measured on a tier A corpus (a directory's seeds each)."""
    from turnbench.pipeline.comparing import InMemory
    from turnbench.results.verify import publishable, refuse_unpublishable

    for side in sides:
        if isinstance(side, InMemory):
            prov = side.scored.results.provenance
            refuse_unpublishable(side.name, prov.licence_tier or "unrecorded", prov.corpus.id)
        else:
            publishable([side])


@dataclass(frozen=True)
class Decided:
    """A decision rule (a file written before the candidate ran: clauses with margins, docs/gate.md) and its verdict
    on one comparison, with the clause that decided it."""

    rule: Rule
    decision: Decision

    @property
    def passes(self) -> bool:
        return self.decision.passes

    def to_markdown(self) -> str:
        from turnbench.render.comparisons import render_decision_md

        return render_decision_md(self.decision, self.rule.source, self.rule.undetermined_passes)

    def to_json(self) -> dict[str, Any]:
        return {"file": self.rule.source, **self.decision.to_json()}


def decide(compared: Compared | ComparedCorpora, rule: PathLike) -> Decided:
    """The verdict of the decision file ``rule`` on a comparison (what ``compare`` returned); BadInput on a line that
    is no clause or a clause naming what the comparison does not hold."""
    from turnbench.harness.rules import decide as verdict
    from turnbench.harness.rules import read_rule
    from turnbench.pipeline.comparing import Compared, ComparedCorpora

    _typed(compared, (Compared, ComparedCorpora), "compared", "what compare() returned")
    rows = compared.rows()
    parsed = read_rule(_path(rule, "rule"), sorted({r.measure for r in rows}))
    return Decided(parsed, verdict(parsed, rows))


def plan(pilot: Results | PathLike, candidate: Results | PathLike | None = None, *, delta: float,
         cls: str = "lookup", measure: str = "nDCG@10", power: float = 0.8) -> Plan:
    """How many questions, meetings or seeds a comparison needs to find a loss of ``delta`` (``turnbench plan``)."""
    from turnbench.pipeline.planning import plan as make_plan

    _typed(delta, (int, float), "delta", "a number")
    _typed(power, (int, float), "power", "a number")
    _typed(cls, str, "cls", "a class name")
    _typed(measure, str, "measure", "a measure name")
    return make_plan(_results_dir(pilot, "pilot"), None if candidate is None else _results_dir(candidate, "candidate"),
                     delta=float(delta), cls=cls, measure=measure, power=float(power))


def check_plan(planned: Plan, corpus: PathLike) -> tuple[bool, str]:
    """Whether a corpus generated at the planned size asks enough questions for ``planned`` (what ``plan``
    returned), and the line that says so."""
    from turnbench.pipeline.planning import Plan, check

    return check(_typed(planned, Plan, "planned", "a Plan (what plan() returned)"), _path(corpus, "corpus"))


def report(results: Results | PathLike, baseline: Results | PathLike | None = None, *,
           corpora: Sequence[CorpusLike] = (), resamples: int = 10_000, seed: int | None = None,
           publishable: bool = False) -> bytes:
    """report.html of ``results`` alone, or against ``baseline`` (bootstrap of ``resamples`` from ``seed``, as
    ``compare`` draws): one self-contained page. ``publishable``: refuse (NotPublishable) results not measured on a
    tier A corpus, before anything is drawn."""
    from turnbench.harness.compare import SEED
    from turnbench.pipeline.comparing import report_page

    _int(resamples, "resamples")
    _int(seed, "seed", optional=True)
    if _typed(publishable, bool, "publishable", "True or False"):
        from turnbench.results.verify import publishable as check

        check([_results_dir(results, "results"), *([] if baseline is None else [_results_dir(baseline, "baseline")])])
    return report_page(_results_dir(results, "results"),
                       None if baseline is None else _results_dir(baseline, "baseline"), corpora=_corpora(corpora),
                       resamples=resamples, seed=SEED if seed is None else seed)


@dataclass(frozen=True)
class Agreement:
    """Whether two corpora rank the same arms alike, per class and measure (``cells``), from ``resamples`` bootstrap
    resamples of ``unit`` (queries or meetings)."""

    cells: tuple[Cell, ...]
    unit: str
    resamples: int

    def to_markdown(self) -> str:
        from turnbench.render.comparisons import render_agreement_md

        return render_agreement_md(self.cells, unit=self.unit, resamples=self.resamples)

    def to_json(self) -> dict[str, Any]:
        return {"unit": self.unit, "resamples": self.resamples, "cells": [c.to_json() for c in self.cells]}


def agreement(results: Sequence[PathLike], *, unit: str = "queries", resamples: int = 1000) -> Agreement:
    """Do two corpora rank the same arms alike? ``results``: results directories of arms on exactly two corpora. Per
    class and measure: both orderings (ties as ties), Kendall's tau-b with a bootstrap interval drawing ``unit``
    (queries, or meetings: each query with its first gold meeting, from qrels.meetings.txt), inert arms apart."""
    from turnbench.harness.agreement import agreement as cells_of
    from turnbench.results.directory import read_metrics

    dirs = [_path(r, f"results[{i}]") for i, r in enumerate(_list(results, "results", "results directories"))]
    _typed(unit, str, "unit", "queries or meetings")
    _int(resamples, "resamples")
    documents = [read_metrics(d) for d in dirs]
    clusters = _first_gold_meetings(dirs, documents) if unit == "meetings" else None
    return Agreement(tuple(cells_of(documents, resamples=resamples, unit=unit, clusters=clusters)), unit, resamples)


def _first_gold_meetings(results: Sequence[Path], documents: Sequence[Record]
                         ) -> dict[str, dict[str, str]]:
    """corpus id -> query id -> its first gold meeting, read from each results directory's meeting-level qrels."""
    out: dict[str, dict[str, str]] = {}
    for path, doc in zip(results, documents, strict=True):
        qrels = path / "qrels.meetings.txt"
        if not qrels.is_file():
            raise BadInput(f"{path}: no qrels.meetings.txt beside metrics.json; --resample meetings needs it")
        first = out.setdefault(doc.corpus_id, {})
        for line in qrels.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[3] != "0" and (parts[0] not in first or parts[2] < first[parts[0]]):
                first[parts[0]] = parts[2]
    return out


@dataclass(frozen=True)
class DecisionAgreement:
    """Each decision's verdict on the synthetic corpus and on a real one, and whether they agree: a table per real
    corpus."""

    tables: tuple[DecisionTable, ...]
    resamples: int

    def to_markdown(self) -> str:
        from turnbench.render.comparisons import render_decisions_md

        return "\n".join(render_decisions_md(t, resamples=self.resamples) for t in self.tables)

    def to_json(self) -> dict[str, Any]:
        return {"resamples": self.resamples, "tables": [t.to_json() for t in self.tables]}


def agreement_decisions(results: Sequence[PathLike], decisions: PathLike, *, resamples: int = 1000,
                        synthetic: str | None = None) -> DecisionAgreement:
    """Does the synthetic corpus give each decision of the file ``decisions`` (a pair of arms; e.g.
    arms/decisions/decisions.toml) the verdict each real corpus of ``results`` gives? ``synthetic``: the synthetic
    corpus's id (default: the one corpus turnbench's generator made)."""
    from turnbench.harness.decisions import decision_tables, read_decisions
    from turnbench.results.directory import read_metrics

    dirs = [_path(r, f"results[{i}]") for i, r in enumerate(_list(results, "results", "results directories"))]
    _int(resamples, "resamples")
    _typed(synthetic, str, "synthetic", "a corpus id (str)", optional=True)
    read = read_decisions(_path(decisions, "decisions"))
    tables = decision_tables([read_metrics(d) for d in dirs], read, synthetic=synthetic, resamples=resamples)
    return DecisionAgreement(tuple(tables), resamples)
