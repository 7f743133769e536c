"""Two results directories scored on two snapshots of one corpus: ``compare --across-snapshots`` and ``reannotate``
read them from disk (the rules are ``turnbench.harness.snapshots``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

from turnbench.errors import BadInput, ResultsIntegrityError, UnpairedComparison
from turnbench.harness import snapshots as snapshot_rules
from turnbench.harness.compare import RESAMPLES, SEED, compare
from turnbench.harness.gold import Gold, check_same_gold, gold_of
from turnbench.results.record import Results


def _single(path: Path, what: str) -> Path:
    from turnbench.results.directory import seed_dirs

    if seed_dirs(Path(path)) is not None:
        raise BadInput(f"{what} {path} is a set of seed-<S>/ directories; across snapshots, give one results "
                       "directory a side")
    return Path(path)


def gold_entry(gold: Gold, qid: str) -> dict[str, Any]:
    """What a receipt records as a query's new gold: its graded passages and meetings, and its gold answer."""
    entry: dict[str, Any] = {"passages": dict(sorted(gold.judgements.get(qid, {}).items())),
                             "meetings": dict(sorted(gold.meetings.get(qid, {}).items()))}
    if qid in gold.answers:
        entry["answer"] = gold.answers[qid]
    return entry


def targets(directory: Path, results: Results) -> dict[str, str]:
    """Every query's target digest in a results directory: its binding, or (a question scored on its answer, which
    binds no turns) its gold answer's — so no compared query is left unclassified."""
    bound = snapshot_rules.query_bindings(directory)
    answers = [(r.query_id, r.gold) for r in (results.answers.per_query if results.answers else ())
               if r.query_id not in bound]
    return {**bound, **snapshot_rules.answer_targets(answers)}


def _sides(base: Results, cand: Results) -> tuple[str, str, str]:
    bc, cc = base.provenance.corpus, cand.provenance.corpus
    if bc.id != cc.id:
        raise UnpairedComparison(f"corpora (id) differ: baseline {bc.id!r}, candidate {cc.id!r}; across snapshots "
                                 "both sides are one corpus's snapshots")
    return bc.id, bc.sha256, cc.sha256


def _when(at: str) -> str:
    """``at`` as given, once it is an ISO 8601 date or date and time (never the clock: who and when are a person's
    word, recorded as said)."""
    for parse in (date.fromisoformat, datetime.fromisoformat):
        try:
            parse(at)
            return at
        except ValueError:
            pass
    raise BadInput(f"--at {at!r}: give the date (and time) of the reannotation in ISO 8601, e.g. 2026-12-06")


def reannotate(baseline: Path, candidate: Path, queries: Sequence[str], *, by: str, at: str) -> bytes:
    """A receipt (canonical JSON bytes) that person ``by`` re-judged, at ``at``, each of ``queries`` — targets whose
    text changed between the baseline's snapshot and the candidate's — and that the candidate's gold is its new
    gold. Refused (BadInput) for a query whose target did not change."""
    from turnbench.results.directory import read_metrics

    if not by.strip():
        raise BadInput("--by: name who reannotated (as it should be recorded)")
    at = _when(at)
    if not queries:
        raise BadInput("give at least one --query to reannotate")
    b, c = _single(baseline, "baseline"), _single(candidate, "candidate")
    base, cand = read_metrics(b), read_metrics(c)
    corpus, old, new = _sides(base, cand)
    bound_b, bound_c = targets(b, base), targets(c, cand)
    classes = snapshot_rules.classify(bound_b, bound_c)
    gold = gold_of(c, cand)
    entries = []
    for qid in dict.fromkeys(queries):
        if qid not in classes[snapshot_rules.CHANGED]:
            cls = next((k for k, qs in classes.items() if qid in qs), None)
            raise BadInput(f"query {qid} is {cls or 'in neither results directory'}: only a target whose text changed "
                           "between the snapshots is reannotated")
        entries.append({"query": qid, "old_sha256": bound_b[qid], "new_sha256": bound_c[qid], "by": by, "at": at,
                        "gold": gold_entry(gold, qid)})
    return snapshot_rules.receipt_document(corpus, old, new, entries)


def _all_classified(sides: Sequence[Results], classified: set[str]) -> None:
    """Refuse (UnpairedComparison) a compared query no target digest classifies: none may be dropped unseen."""
    from turnbench.harness.compare import tables_of

    for side in sides:
        missed = sorted({q for t in tables_of(side).values() for q in t.records} - classified)
        if missed:
            raise UnpairedComparison(f"query {missed[0]} ({len(missed)} in all) has no target digest to classify it "
                                     "by across snapshots (no binding, no gold answer)")


def _only(gold: Gold, keep: frozenset[str]) -> Gold:
    """``gold`` of the queries ``keep`` alone."""
    def cut(held: Mapping[str, Any]) -> dict[str, Any]:
        return {q: v for q, v in held.items() if q in keep}

    return replace(gold, bound=cut(gold.bound), meetings=cut(gold.meetings), spans=cut(gold.spans),
                   answers=cut(gold.answers), judgements=cut(gold.judgements))


def compare_snapshots(baseline: Path, candidate: Path, *, receipts: Sequence[Path] = (), resamples: int = RESAMPLES,
                      seed: int = SEED, measures: Sequence[str] = ()) -> Any:
    """``compare --across-snapshots``: the two results directories compared on the queries comparable across their
    snapshots (unchanged, and changed with a receipt), the rest listed by class (a ``Compared``)."""
    from turnbench.pipeline.comparing import Compared, with_stack_notes
    from turnbench.processes import Background
    from turnbench.results.directory import ReadOnce, load_side, rederive_dirs

    b, c = _single(baseline, "baseline"), _single(candidate, "candidate")
    # a file that is no receipt: refused first
    read = [(Path(p), snapshot_rules.read_receipt(Path(p))) for p in receipts]
    with Background(rederive_dirs, [b, c]) as job:
        try:
            known = ReadOnce()
            base, cand = load_side(b, checked=False, known=known), load_side(c, checked=False, known=known)
            bres, cres = base[0][1].results, cand[0][1].results
            corpus, old, new = _sides(bres, cres)
            bound_b, bound_c = targets(b, bres), targets(c, cres)
            classes = snapshot_rules.classify(bound_b, bound_c)
            _all_classified([bres, cres], {*bound_b, *bound_c})
            bgold, cgold = gold_of(b, bres), gold_of(c, cres)
            changed = classes[snapshot_rules.CHANGED]
            accepted = snapshot_rules.check_receipts(read, corpus=corpus, old_snapshot=old, new_snapshot=new,
                                                     classes=classes, base=bound_b, cand=bound_c,
                                                     gold={q: gold_entry(cgold, q) for q in changed})
            across = snapshot_rules.snapshots(corpus, old, new, classes, accepted)
            result = compare(bres, cres, resamples=resamples, seed=seed, across=across, measures=measures)
            # the unchanged queries hold one gold on both sides; a reannotated one, the candidate's (its receipt's)
            unchanged = frozenset(across.unchanged)
            check_same_gold(_only(bgold, unchanged), _only(cgold, unchanged))
        except Exception:
            job.result()
            raise
        checked = set(job.result())
        if any(v.claim not in checked for side in (base, cand) for _, v in side):
            raise ResultsIntegrityError("a results directory changed while compare read it; run it again")
    return Compared(base, cand, with_stack_notes(result, b, c))
