"""``turnbench export run``: a run as ranx and BEIR read it, ``{query id: {doc id: score}}`` in one JSON file
(ranx's ``Run.from_file(path)`` / ``Run.from_dict``, BEIR's ``EvaluateRetrieval.evaluate`` results), read from the
run files turnbench already wrote; nothing in the source is written, so no claim file changes.

The source is a results directory (``turnbench bench`` or ``score``), a run directory (``turnbench run``) or a run
file (TREC or run.jsonl). From a results directory, ``which`` picks its file:

* ``passages`` (the default): ``run.passages.trec``, the run as scored, in docs/design.md §3 rule-5 order with
  strictly decreasing integer scores, so a reader that orders a query's documents by score (ranx, BEIR, trec_eval)
  ranks them exactly as turnbench scored them;
* ``meetings``: ``run.meetings.trec``, that run collapsed to meetings by first occurrence (scores likewise);
* ``raw``: ``run.raw.trec``, the engine's own scores, ties and all.

A run directory holds only the engine's scores (its ``run.jsonl``, else ``run.trec``), so only ``raw`` is there. A
dict has no order of its own: where a query's raw scores tie, the reader breaks the tie its own way, which may not
be turnbench's (the count of such queries is returned and said); the scored run never ties.

Refused (BadInput): a source that is none of these, a ``which`` the source has not, a query that ranks one
document twice (a dict would keep one of them silently). A results file that does not match the ``claim.sha256``
written with it is refused too (ResultsIntegrityError).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from turnbench import canonical
from turnbench.errors import BadInput, ResultsIntegrityError

RESULTS_RUNS = {"passages": "run.passages.trec", "meetings": "run.meetings.trec", "raw": "run.raw.trec"}
RUN_DIR_RUNS = ("run.jsonl", "run.trec")
WHICH = tuple(RESULTS_RUNS)
FORMATS = ("ranx",)


@dataclass(frozen=True)
class ExportedRun:
    """What ``export_run`` wrote: the file it read, the counts, and the queries whose scores tie."""

    source: Path
    queries: int
    documents: int  # (query, document) pairs
    tied_queries: int


def source_file(source: Path, which: str | None) -> Path:
    """The run file ``source`` names for ``which`` (None: the scored passage run of a results directory, the run of
    a run directory, the file itself); BadInput when there is none."""
    if which is not None and which not in RESULTS_RUNS:
        raise BadInput(f"--run {which!r} is not one of {', '.join(WHICH)}")
    if source.is_file():
        if which not in (None, "raw"):
            raise BadInput(f"{source} is a run file: --run {which} names a file of a results directory")
        return source
    if not source.is_dir():
        raise BadInput(f"{source}: no run file, results directory or run directory there")
    if (source / "metrics.json").is_file():  # a results directory
        path = source / RESULTS_RUNS[which or "passages"]
        if not path.is_file():
            raise BadInput(f"{source} is a results directory without {path.name}")
        _check_claim(source, path)
        return path
    for name in RUN_DIR_RUNS:
        if (source / name).is_file():
            if which not in (None, "raw"):
                raise BadInput(f"{source} is a run directory: it holds the engine's own scores only (--run raw)")
            return source / name
    raise BadInput(f"{source} holds no run: neither a results directory (metrics.json) nor a run directory "
                   f"({' or '.join(RUN_DIR_RUNS)})")


def _check_claim(results: Path, path: Path) -> None:
    """``path`` against its line in the results directory's claim.sha256 (``sha256  name``), where it has one."""
    claim = results / "claim.sha256"
    if not claim.is_file():
        return
    for line in claim.read_text(encoding="utf-8", errors="replace").splitlines():
        digest, _, name = line.partition("  ")
        if name == path.name:
            if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
                raise ResultsIntegrityError(f"{path} does not match its sha256 in {claim}: the run was changed "
                                            "after it was written")
            return


def run_dict(path: Path) -> tuple[dict[str, dict[str, float]], int]:
    """``{query id: {doc id: score}}`` of a run file, and how many queries have two documents of one score."""
    from turnbench.runfiles import read_run

    run: dict[str, dict[str, float]] = {}
    for e in read_run(path):
        docs = run.setdefault(e.query_id, {})
        if e.passage_id in docs:
            raise BadInput(f"{path}: query {e.query_id} ranks {e.passage_id} twice: a {{doc: score}} map would "
                           "keep one of them")
        docs[e.passage_id] = e.score
    tied = sum(1 for docs in run.values() if len(set(docs.values())) < len(docs))
    return run, tied


def export_run(source: Path, out: Path, *, which: str | None = None, fmt: str = "ranx") -> ExportedRun:
    """Write the run of ``source`` (see the module docstring) to ``out`` as ``{query id: {doc id: score}}`` JSON
    (canonical: keys sorted, floats as Python's repr, so every score reads back as the float it was)."""
    if fmt not in FORMATS:
        raise BadInput(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    out = Path(out)
    if out.exists():
        raise BadInput(f"--out {out} exists: choose a new file")
    path = source_file(Path(source), which)
    run, tied = run_dict(path)
    canonical.write_bytes_atomic(out, canonical.dumps_line(run))
    return ExportedRun(source=path, queries=len(run), documents=sum(map(len, run.values())), tied_queries=tied)
