"""Results and runs as the tools IR people already hold them: pandas DataFrames, ranx's Run and Qrels, TREC text,
and a run given as ``{query: {passage: score}}``, a ranx ``Run`` or a DataFrame (docs/api.md, "In a notebook").

pandas and ranx are optional: a conversion that needs one which is not installed is refused in one line (BadInput)
naming the package, never an ImportError from deep inside."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turnbench.errors import BadInput
from turnbench.rankings import RankedPassage
from turnbench.results.record import Results
from turnbench.results.tables import Block

LEVELS = ("passage", "meeting")
RUN_COLUMNS = ("query_id", "passage_id", "score")


def _optional(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise BadInput(f"this needs {name}, which is not installed: pip install {name}") from None


def is_frame(value: object) -> bool:
    return type(value).__module__.startswith("pandas") and hasattr(value, "itertuples")


def is_ranx_run(value: object) -> bool:
    return type(value).__module__.startswith("ranx") and hasattr(value, "to_dict")


def ranked_from(run: Any) -> list[RankedPassage] | None:
    """The ranked passages of a run given in memory, or None when ``run`` is none of the in-memory shapes."""
    if is_ranx_run(run):
        return _ranked(_from_mapping(run.to_dict(), "the ranx Run"))
    if is_frame(run):
        missing = [c for c in RUN_COLUMNS if c not in run.columns]
        if missing:
            raise BadInput(f"the run DataFrame lacks the column(s) {', '.join(missing)}; it needs "
                           f"{', '.join(RUN_COLUMNS)}")
        rows = run[list(RUN_COLUMNS)].itertuples(index=False, name=None)
        return _ranked([_entry(q, p, s, f"the run DataFrame's row {i}") for i, (q, p, s) in enumerate(rows)])
    if isinstance(run, Mapping):
        return _ranked(_from_mapping(run, "the run mapping"))
    return None


def _ranked(entries: list[tuple[str, str, float]]) -> list[RankedPassage]:
    """Ranks as the scores give them: a mapping has no order of its own, so each query's passages are ranked by
    score, highest first (then rule 5 orders them as it orders any run, ties included)."""
    by_query: dict[str, list[tuple[str, float]]] = {}
    for qid, pid, value in entries:
        by_query.setdefault(qid, []).append((pid, value))
    return [RankedPassage(qid, pid, rank, value) for qid, hits in by_query.items()
            for rank, (pid, value) in enumerate(sorted(hits, key=lambda h: (-h[1], h[0])), 1)]


def _from_mapping(run: Mapping[Any, Any], what: str) -> list[tuple[str, str, float]]:
    out = []
    for qid, scores in run.items():
        if not isinstance(scores, Mapping):
            raise BadInput(f"{what}: query {qid!r} maps to {type(scores).__name__}, not {{passage: score}}")
        out += [_entry(qid, pid, s, f"{what}: query {qid!r}") for pid, s in scores.items()]
    return out


def _entry(qid: Any, pid: Any, score: Any, where: str) -> tuple[str, str, float]:
    if not isinstance(qid, str) or not isinstance(pid, str) or not qid or not pid:
        raise BadInput(f"{where}: query and passage ids must be non-empty strings, not {qid!r}, {pid!r}")
    if isinstance(score, bool) or not isinstance(score, (int, float)) and not hasattr(score, "__float__"):
        raise BadInput(f"{where}: passage {pid!r} has score {score!r}, not a number")
    value = float(score)
    if not math.isfinite(value):
        raise BadInput(f"{where}: passage {pid!r} has score {value}, not a finite number")
    return qid, pid, value


def per_query_frame(block: Block) -> Any:
    """One row per judged query: its id, class, surface, level, whether answered, and one column per measure."""
    pd = _optional("pandas")
    rows = [{"query_id": q.query_id, "class": q.cls, "surface": q.surface, "level": q.level,
             "answered": q.answered, **dict(q.values)} for q in block.per_query]
    return pd.DataFrame(rows, columns=["query_id", "class", "surface", "level", "answered", *block.measures])


def rows_frame(block: Block) -> Any:
    """The table metrics.md shows: one row per corpus × class (and ``all``), one column per measure."""
    pd = _optional("pandas")
    rows = [{"corpus": r.corpus, "class": r.cls, "queries": r.queries, "unanswered": r.unanswered,
             "dropped_unjudgeable": r.dropped_unjudgeable, **dict(r.means)} for r in block.rows]
    return pd.DataFrame(rows, columns=["corpus", "class", "queries", "unanswered", "dropped_unjudgeable",
                                       *block.measures])


def trec_files(out_dir: Path | None, files: Mapping[str, Any], level: str) -> tuple[bytes, bytes]:
    """(the run as scored, its qrels) at ``level``, as written beside metrics.json (TREC six- and four-column): read
    from ``out_dir`` when the results were written, else from the files scoring made (``files``)."""
    from turnbench.harness import exports

    if level not in LEVELS:
        raise BadInput(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    run, qrels = ((exports.RUN_PASSAGES, exports.QRELS_PASSAGES) if level == "passage"
                  else (exports.RUN_MEETINGS, exports.QRELS_MEETINGS))
    if out_dir is not None:
        missing = [n for n in (run, qrels) if not (out_dir / n).is_file()]
        if missing:
            raise BadInput(f"{out_dir}: no {missing[0]}; re-score these results to export them")
        return (out_dir / run).read_bytes(), (out_dir / qrels).read_bytes()
    return exports.content_bytes(files[run]), exports.content_bytes(files[qrels])


def ranx_pair(record: Results, run_text: bytes, qrels_text: bytes) -> tuple[Any, Any]:
    """ranx's (Run, Qrels) of the run as scored (rank order made strictly decreasing scores) and its qrels."""
    from turnbench.harness import exports

    ranx = _optional("ranx")
    parsed = exports.parse_run(run_text, "run")
    qrels = exports.parse_qrels(qrels_text, "qrels")
    return (ranx.Run({q: dict(docs) for q, docs in parsed.items()}, name=record.label),
            ranx.Qrels({q: dict(d) for q, d in qrels.items()}))


def html_table(record: Results) -> str:
    from turnbench.render.html import metric_table

    return metric_table(record)

