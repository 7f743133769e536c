"""Orchestration: plan, write meetings (optionally in worker processes), stream them to disk, write
queries, facts and the manifest. Output bytes depend only on the config, never on ``workers``."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench.corpus.format import CorpusWriter, part_name
from turnbench.errors import BadInput, TurnbenchError, VersionDrift
from turnbench.generator import PRODUCER_NAME, generator_version
from turnbench.generator.config import (
    DEFAULT_ENTITY_ACCURACY,
    DEFAULT_NEAR_DUPLICATE_RATE,
    DEFAULT_TITLES,
    GeneratorConfig,
)
from turnbench.generator.contracts import LocatedFact
from turnbench.generator.plan import MeetingPlan, build_plan
from turnbench.generator.queries import aggregation_targets, build_queries
from turnbench.generator.register import DEFAULT_REGISTER
from turnbench.generator.transcript import write_meeting
from turnbench.processes import end_workers, send_outcome, start_worker, worker_signals

LICENCE = {"tier": "A", "name": "MIT"}
MAX_WORKERS = 64


@dataclass(frozen=True)
class Regenerated:
    manifest: Mapping[str, Any]
    drift: tuple[str, ...]  # human-readable version differences ("" when none)
    differing_files: tuple[str, ...]  # files whose hash differs from the recorded manifest


def faker_version() -> str:
    import faker

    return faker.VERSION


def corpus_id(cfg: GeneratorConfig) -> str:
    cid = f"synthetic-s{cfg.seed}-m{cfg.meetings}"
    if cfg.register != DEFAULT_REGISTER:
        cid += f"-{cfg.register}"
    if cfg.words_per_meeting != cfg.voice.words_per_meeting:
        cid += f"-w{cfg.words_per_meeting}"
    if cfg.near_duplicate_rate != DEFAULT_NEAR_DUPLICATE_RATE:
        cid += f"-d{cfg.near_duplicate_rate:g}"
    if cfg.titles != DEFAULT_TITLES:
        cid += f"-{cfg.titles}"
    if cfg.asr_wer > 0:
        cid += f"-asr{cfg.asr_wer:g}"
        if cfg.asr_entity_accuracy != DEFAULT_ENTITY_ACCURACY:
            cid += f"-ne{cfg.asr_entity_accuracy:g}"
    return cid


def producer(cfg: GeneratorConfig) -> dict[str, Any]:
    return {"name": PRODUCER_NAME, "version": generator_version(), "seed": cfg.seed, "config": cfg.to_json(),
            "libraries": {"faker": faker_version()}}


# (staging directory, part file, its meetings) -> (their facts, (meeting id, turn and word counts))
PartTask = tuple[str, str, tuple[MeetingPlan, ...]]
PartResult = tuple[list[LocatedFact], list[tuple[str, dict[str, int]]]]


def _write_part(task: PartTask) -> PartResult:
    """Write one part file's meetings; return their facts and counts.

    A part is the unit of work so that workers write their own bytes instead of shipping them back."""
    stage, rel, meetings = task
    facts: list[LocatedFact] = []
    counts: list[tuple[str, dict[str, int]]] = []
    with open(Path(stage) / rel, "wb") as fh:
        for mp in meetings:
            line, meeting_facts, c = write_meeting(mp)
            fh.write(line)
            facts.extend(meeting_facts)
            counts.append((mp.id, c))
    return facts, counts


def _write_parts(tasks: list[PartTask], workers: int) -> Generator[PartResult, None, None]:
    """Each part's result, in task order, from ``workers`` processes.

    Not an executor: its shared result queue is read by a thread that blocks forever on a message a killed worker
    left half-written, so a signalled run could hang at exit. Here each worker has its own pipe and takes tasks
    ``w, w + n, ...``; its death is an end-of-file on that pipe alone, and the parent ends every worker itself."""
    if workers <= 1 or len(tasks) < 2:
        yield from map(_write_part, tasks)
        return
    methods = multiprocessing.get_all_start_methods()
    ctx: Any = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    n = min(workers, len(tasks))
    procs, pipes = [], []
    try:
        for w in range(n):
            reader, writer = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_worker, args=(tasks[w::n], writer), daemon=True, name=f"turnbench-generate-{w}")
            start_worker(proc)
            writer.close()  # the worker's end: closed here, so the worker's death reads as end-of-file
            procs.append(proc)
            pipes.append(reader)
        for i in range(len(tasks)):
            try:
                kind, value = pipes[i % n].recv()
            except EOFError:
                raise TurnbenchError("a generator worker died (killed or out of memory); nothing was written") from None
            if kind == "error":
                raise value  # the worker's own exception: a full disk is still DiskFull's OSError
            yield value
    finally:
        end_workers(procs)  # nothing waits for parts no one will read
        for reader in pipes:
            reader.close()


def _worker(tasks: list[PartTask], out: Any) -> None:
    worker_signals()

    def write() -> None:
        for task in tasks:
            out.send(("ok", _write_part(task)))

    send_outcome(out, write, "a generator worker")


def generate(cfg: GeneratorConfig, out: Path, *, workers: int = 1,
             expect: tuple[Path, Mapping[str, str]] | None = None) -> dict[str, Any]:
    """Write the corpus for ``cfg`` into ``out`` (which must not exist or be empty); returns the manifest.

    ``expect`` (the recorded manifest's path and files) makes the write conditional: when the new files differ,
    the staged corpus is discarded before it is renamed into place, so nothing is left at ``out``."""
    if not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise BadInput(f"workers must be an integer from 1 to {MAX_WORKERS}, got {workers!r}")
    out = Path(out)
    with CorpusWriter(out) as writer:  # refuses a non-empty directory before any work is done
        plan = build_plan(cfg)
        (writer.path / "meetings").mkdir()
        parts: dict[str, list[MeetingPlan]] = {}
        for mp in plan.meetings:
            parts.setdefault(part_name(mp.ordinal), []).append(mp)
        tasks = [(str(writer.path), rel, tuple(ms)) for rel, ms in sorted(parts.items())]
        facts: list[LocatedFact] = []
        turn_counts: dict[str, int] = {}
        n_turns = n_words = 0
        # closed explicitly, so the workers are gone before the staging directory is removed on a failure
        with contextlib.closing(_write_parts(tasks, workers)) as written:
            for part_facts, part_counts in written:
                facts.extend(part_facts)
                for mid, c in part_counts:
                    turn_counts[mid] = c["turns"]
                    n_turns += c["turns"]
                    n_words += c["words"]
        queries = build_queries(plan, facts, turn_counts)
        writer.write_queries(queries)
        writer.write_facts([*aggregation_targets(plan), *facts])
        by_class: dict[str, int] = {}
        by_rule: dict[str, int] = {}
        for q in queries:
            by_class[q.cls] = by_class.get(q.cls, 0) + 1
            by_rule[q.rule] = by_rule.get(q.rule, 0) + 1
        manifest = writer.write_manifest(
            corpus_id=corpus_id(cfg), licence=LICENCE, producer=producer(cfg),
            counts={"meetings": len(plan.meetings), "turns": n_turns, "words": n_words, "queries": len(queries),
                    "queries_by_class": by_class, "queries_by_rule": by_rule, "facts": len(facts)},
        )
        if expect is not None:
            recorded, old = expect
            new = manifest["files"]
            differing = sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p))
            if differing:
                # the same versions must give the same bytes: anything else is a bug, never a result
                raise TurnbenchError(f"regenerated corpus differs from {recorded} with the same versions in "
                                     f"{len(differing)} file(s): {', '.join(differing)}; nothing was written")
    return manifest


def read_recorded_manifest(path: Path) -> dict[str, Any]:
    path = Path(path)
    try:
        manifest = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise BadInput(f"{path}: no such manifest file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: not a JSON manifest ({exc})") from None
    prod = manifest.get("producer") if isinstance(manifest, dict) else None
    if not isinstance(prod, dict) or prod.get("name") != PRODUCER_NAME or not isinstance(prod.get("config"), dict):
        raise BadInput(f"{path}: not a manifest written by {PRODUCER_NAME}; cannot regenerate from it")
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise BadInput(f"{path}: 'files' is not an object of file name to sha256; cannot compare a regeneration")
    return manifest


def version_drift(recorded: Mapping[str, Any]) -> tuple[str, ...]:
    prod = recorded["producer"]
    drift = []
    if prod.get("version") != generator_version():
        drift.append(f"generator recorded {prod.get('version')}, installed {generator_version()}")
    rec_faker = prod.get("libraries", {}).get("faker")
    if rec_faker != faker_version():
        drift.append(f"Faker recorded {rec_faker}, installed {faker_version()}")
    return tuple(drift)


def regenerate(manifest_path: Path, out: Path, *, workers: int = 1, allow_version_drift: bool = False) -> Regenerated:
    """Regenerate a recorded corpus; refuse (VersionDrift) when versions differ unless drift is allowed."""
    recorded = read_recorded_manifest(manifest_path)
    drift = version_drift(recorded)
    if drift and not allow_version_drift:
        raise VersionDrift(f"{manifest_path}: {'; '.join(drift)}; pass --allow-version-drift to regenerate anyway")
    cfg = GeneratorConfig.from_json(recorded["producer"]["config"])
    old = recorded["files"]
    manifest = generate(cfg, out, workers=workers, expect=None if drift else (Path(manifest_path), old))
    new = manifest["files"]
    differing = tuple(sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p)))
    return Regenerated(manifest=manifest, drift=drift, differing_files=differing)
