"""What a run hands another engine's scorer, and fusing runs: ``turnbench run`` writes, ``turnbench fuse`` fuses.

A run directory holds the passage inventory, the run as TREC and as run.jsonl with the engine's own ranks and raw
scores, and what made it (arm.json, or fuse.json) — enough for ``turnbench score`` or trec_eval, ties and all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from turnbench import canonical
from turnbench.errors import BadInput, UnpairedComparison
from turnbench.rankings import RankedPassage

if TYPE_CHECKING:
    from turnbench.engines.fusion import Fusion
    from turnbench.engines.retrieval import RunResult


def write_run(out_dir: Path, result: RunResult) -> list[str]:
    """A run's files — the passage inventory, the run as TREC and JSONL with the engine's own ranks and raw
    scores, the resolved arm — so that ``turnbench score`` (or trec_eval) can score it from files alone, ties
    and all; returns the names written. A run in query-id order (what the arms and engines hand over) is written
    from its columns, a query at a time, never a record per hit; any other as its records."""
    from turnbench.engines.retrieval import run_tag
    from turnbench.passages import canonical_blocks

    entries, tag = result.entries, run_tag(result.arm_config)
    out_dir = canonical.refuse_non_empty(Path(out_dir), "run directory")
    with canonical.staged_directory(out_dir) as tmp:  # a killed run never leaves a mix of two runs' files
        canonical.write_bytes_atomic(tmp / "passages.jsonl", result.passages_jsonl if result.passages_jsonl is not None
                                     else canonical_blocks(result.passages))
        if list(entries.query_ids) == sorted(set(entries.query_ids)):
            from turnbench.runfiles import ranking_lines

            lines = list(ranking_lines(entries, tag))
            canonical.write_bytes_atomic(tmp / "run.trec", [trec for trec, _ in lines])
            jsonl = [line for _, line in lines if line is not None]
            if len(jsonl) < len(lines):  # an id JSON escapes, or a score it writes otherwise: as canonical JSON
                # each hit a (passage id, score) pair: JSON's array, as a list would be, without a list per hit
                jsonl = [canonical.dumps_line({"query": qid, "passages": list(zip(*entries.hits(k), strict=True))})
                         for k, qid in enumerate(entries.query_ids) if entries.bounds[k + 1] > entries.bounds[k]]
            canonical.write_bytes_atomic(tmp / "run.jsonl", jsonl)
        else:
            from turnbench.runfiles import write_jsonl_run, write_trec_run

            raw: dict[str, list[RankedPassage]] = {}
            for e in entries:
                raw.setdefault(e.query_id, []).append(e)
            write_trec_run(tmp / "run.trec", raw, tag)
            write_jsonl_run(tmp / "run.jsonl", raw)
        canonical.write_json(tmp / "arm.json", result.arm_config)
    return ["passages.jsonl", "run.trec", "run.jsonl", "arm.json"]


def read_run_input(path: Path) -> tuple[list[RankedPassage], Path | None]:
    """A run to fuse: a run file (TREC or run.jsonl), or a run directory holding run.jsonl or run.trec and
    passages.jsonl (what `turnbench run` writes); returns its entries and the directory's inventory, if any."""
    from turnbench.runfiles import read_run

    path = Path(path)
    if path.is_dir():
        for name in ("run.jsonl", "run.trec"):
            if (path / name).is_file():
                inventory = path / "passages.jsonl"
                return read_run(path / name), inventory if inventory.is_file() else None
        raise BadInput(f"{path}: a run directory holds run.jsonl or run.trec; this one holds neither")
    return read_run(path), None


def fuse_runs(inputs: Sequence[Path], out: Path, fusion: Fusion, passages_file: Path | None = None) -> list[str]:
    """``turnbench fuse``: read the runs and their one inventory, fuse, and write a run directory (passages.jsonl,
    run.jsonl, run.trec, fuse.json) whose files ``turnbench score --passages ... --run ...`` takes; returns the names
    written."""
    from turnbench.engines.fusion import fuse
    from turnbench.passages import inventory_sha256, read_passages, write_passages
    from turnbench.runfiles import write_jsonl_run, write_trec_run

    out = canonical.refuse_non_empty(Path(out), "run directory")
    runs, inventories = [], []
    for path in inputs:
        entries, inventory = read_run_input(path)
        runs.append(entries)
        inventories.append(inventory)
    given = [p for p in (passages_file, *inventories) if p is not None]
    if not given:
        raise BadInput("fuse needs the passage inventory the runs rank: run directories holding passages.jsonl, "
                       "or --passages")
    shas = {p: inventory_sha256(read_passages(p)) for p in given}
    if len(set(shas.values())) != 1:
        first, other = given[0], next(p for p in given if shas[p] != shas[given[0]])
        raise UnpairedComparison(f"the runs rank different passage inventories: {first} and {other} differ")
    passages = read_passages(given[0])
    fused = fuse(runs, {p.id: p for p in passages}, fusion)
    record = {"fusion": fusion.config(len(inputs)), "inputs": [
        {"name": Path(p).name, "entries": len(r), "queries": len({e.query_id for e in r})}
        for p, r in zip(inputs, runs, strict=True)], "passages_sha256": shas[given[0]],
        "name": f"fuse-{fusion.method}"}
    with canonical.staged_directory(out) as tmp:
        write_passages(tmp / "passages.jsonl", passages)
        write_jsonl_run(tmp / "run.jsonl", fused)
        write_trec_run(tmp / "run.trec", fused, f"fuse-{fusion.method}")
        canonical.write_json(tmp / "fuse.json", record)
    return ["passages.jsonl", "run.jsonl", "run.trec", "fuse.json"]
