"""The constants of issue 25 in one table: ``make perf`` / ``python -m benchmarks.perf``.

One embedded stack for what needs one (the benches and the run), per size (``--meetings``, default 200 and 2,000;
corpora generated under ``--work`` and reused, as ``benchmarks.scale`` does); then, the stack stopped, what needs
none (score and compare: a server left running is load on the cores that the bare process, on one core, barely
feels). Each ratio alternates its two sides and keeps the best of ``--repeat``:

- score: ``turnbench score`` start to exit on the bench's own passages.jsonl and run.raw.trec, against a bare
  pytrec_eval process on the qrels and runs it exported (``benchmarks.harness.BARE``); target <= 3x;
- run: ``run_arm`` at concurrency 2 (inventory handed over, as ``bench`` does) against a bare two-thread
  ``_msearch`` loop sending the same bodies (``benchmarks.run.bare``); target >= 0.8x;
- warm bench: a second ``bench`` of the same corpus on the same stack (the settled load kept): the load stage's
  share of all its stages; target <= 10%;
- compare: ``turnbench compare`` of the results against themselves, start to exit, against a process doing only
  the numpy statistics of it (the same bootstrap and randomisation calls on the same per-query arrays); target
  <= 1.3x.

Timings on a shared machine are noisy: read the ratios, within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.harness import BARE as BARE_TREC
from benchmarks.scale import corpus_for

TARGETS = {"score": ("<=", 3.0), "run": (">=", 0.8), "warm bench load share": ("<=", 0.10),
           "warm bench load share, --reload": ("<=", 1.0), "compare": ("<=", 1.3)}  # --reload: the before, no target

# the statistics `compare` computes, and nothing else: per table and group, the measures present on the same
# queries as one matrix of per-query differences (as compare_table buckets them), its bootstrap means and its
# randomisation p-values (numpy), then Holm over the cells; on results compared with themselves
BARE_STATS = """
import json, sys
from turnbench.harness.compare import ALL, RESAMPLES, SEED, _row_seed, tables_of
from turnbench.harness.stats import bootstrap_means, holm, randomisation_p
import numpy as np
from turnbench.results.record import from_tree
doc = from_tree(json.load(open(sys.argv[1] + "/metrics.json")))
ps = []
for name, t in tables_of(doc).items():
    groups = {}
    for q in sorted(t.records, key=lambda q: (t.strata.get(q, ""), q)):
        g = t.records[q][0]
        groups.setdefault(g, []).append(q)
        groups.setdefault((*g[:-1], ALL), []).append(q)
    for g, qids in groups.items():
        buckets = {}
        for m in t.measures:
            have = tuple(q for q in qids if m in t.records[q][1])
            if have:
                buckets.setdefault(have, []).append(m)
        for have, ms in buckets.items():
            v = np.array([[t.records[q][1][m] for m in ms] for q in have], dtype=np.float64)
            d = v - v
            sizes = {}
            for q in have:
                sizes[t.strata.get(q, "")] = sizes.get(t.strata.get(q, ""), 0) + 1
            entropy = _row_seed(SEED, t.name, *g, *ms)
            bootstrap_means(d, RESAMPLES, entropy, list(sizes.values()) if len(sizes) > 1 else None)
            ps += randomisation_p(d, RESAMPLES, entropy)
holm(ps)
"""


def _wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t0


def _busy() -> tuple[int, int]:
    """(busy, total) jiffies of every CPU since boot, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def quiet(most: float = 60.0, share: float = 0.10) -> float:
    """Wait until the machine has been at most ``share`` busy for two seconds running (the stack's merges and
    collections after a bench finish in the background; a timing taken meanwhile measures them), up to ``most``
    seconds; returns the seconds waited. Where /proc/stat cannot be read, returns at once."""
    t0 = time.monotonic()
    calm = 0
    try:
        before = _busy()
        while calm < 2 and time.monotonic() - t0 < most:
            time.sleep(1.0)
            after = _busy()
            busy, total = after[0] - before[0], after[1] - before[1]
            calm = calm + 1 if total and busy / total <= share else 0
            before = after
    except (OSError, ValueError, IndexError):
        pass
    return time.monotonic() - t0


def _best(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    return min(a for a, _ in pairs), min(b for _, b in pairs)


def measure_stack(stack, corpus_dir: Path, work: Path, repeat: int) -> dict[str, tuple[float, float]]:
    """(load s, all stages s) of a warm bench and of a forced reload, and (turnbench s, bare s) of run; the warm
    bench's results stay in ``work`` for ``measure_alone``."""
    from benchmarks.run import bare
    from turnbench.corpus.format import open_corpus
    from turnbench.engines.arms import builtin
    from turnbench.engines.retrieval import MSEARCH_BATCH, run_arm, search_body
    from turnbench.loading.index import DEFAULT_INDEX
    from turnbench.pipeline import bench as pipeline
    from turnbench.vocab import get_scope

    corpus = open_corpus(corpus_dir)
    arm = builtin("bm25")
    options = pipeline.BenchOptions(provider="external", answerer="skip", stack_options={
        "opensearch_url": stack.opensearch_url, "postgres_dsn": stack.postgres_dsn})
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    pipeline.bench(corpus_dir, [arm], work / "first", options, stack=stack)  # loads unless already settled
    forced = pipeline.bench(corpus_dir, [arm], work / "forced", replace(options, reload=True), stack=stack)[0].stages
    warm = pipeline.bench(corpus_dir, [arm], work / "warm", options, stack=stack)
    stages = warm[0].stages
    out: dict[str, tuple[float, float]] = {"warm bench load share": (stages["load"], sum(stages.values())),
                                           "warm bench load share, --reload": (forced["load"],
                                                                               sum(forced.values()))}

    queries = sorted((q for q in corpus.queries() if q.scored_on == "retrieval"), key=lambda q: q.id)
    bodies = [search_body(arm, q, get_scope("corpus"), arm.depth) for q in queries]
    head = json.dumps({"index": DEFAULT_INDEX}).encode() + b"\n"
    payloads = [b"".join(head + json.dumps(x, separators=(",", ":")).encode() + b"\n"
                         for x in bodies[i:i + MSEARCH_BATCH]) for i in range(0, len(bodies), MSEARCH_BATCH)]
    loaded = warm_inventory(stack, corpus)
    pairs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run_arm(stack, corpus, arm, concurrency=2, inventory=loaded)
        a = time.perf_counter() - t0
        pairs.append((a, bare(stack.opensearch_url, payloads, 2)))
    out["run"] = _best(pairs)
    return out


def measure_alone(corpus_dir: Path, work: Path, repeat: int) -> dict[str, tuple[float, float]]:
    """(turnbench s, bare s) of score and compare, on the warm bench's results in ``work``, with no stack running."""
    exe = str(Path(sys.executable).with_name("turnbench"))
    results = work / "warm" / "bm25"
    out: dict[str, tuple[float, float]] = {}
    quiet()
    pairs = []
    for i in range(repeat):
        scored = work / f"scored-{i}"
        a = _wall([exe, "score", "--corpus", str(corpus_dir), "--passages", str(results / "passages.jsonl"),
                   "--run", str(results / "run.raw.trec"), "--out", str(scored)])
        b = _wall([sys.executable, "-c", BARE_TREC, str(scored)])
        pairs.append((a, b))
    out["score"] = _best(pairs)

    quiet()
    pairs = []
    for i in range(repeat):
        a = _wall([exe, "compare", str(results), str(results), "--out", str(work / f"c{i}.md"),
                   "--html", str(work / f"c{i}.html")])
        b = _wall([sys.executable, "-c", BARE_STATS, str(results)])
        pairs.append((a, b))
    out["compare"] = _best(pairs)
    return out


def warm_inventory(stack, corpus):
    from turnbench.loading import tables
    from turnbench.passages import inventory_sha256

    passages = tables.read_passages(stack)
    return passages, inventory_sha256(passages)


def ratio(name: str, pair: tuple[float, float]) -> float:
    a, b = pair
    if name == "run":
        return b / a  # run's speed as a share of the bare loop's
    return a / b


def _rows(n: int, row: dict[str, tuple[float, float]]) -> None:
    for name, (op, target) in TARGETS.items():
        if name not in row:
            continue
        a, b = row[name]
        r = ratio(name, row[name])
        ok = r <= target if op == "<=" else r >= target
        floor = "all stages" if "share" in name else "bare"
        shown = "(before: reloads)" if "reload" in name else f"{op} {target:g}"
        print(f"| {n:,} | {name} | {a:.2f} s | {b:.2f} s ({floor}) | {r:.2f} | {shown} | {'ok' if ok else 'MISSED'} |",
              flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="perf", description=__doc__.splitlines()[0])
    ap.add_argument("--meetings", default="200,2000", help="sizes, comma-separated")
    ap.add_argument("--work", default=".turnbench/scale", help="corpora (shared with perf-scale, kept for reuse)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.meetings.split(",")]

    import gc

    from turnbench.cli import COLLECTOR_THRESHOLDS
    from turnbench.stack import open_stack

    # the benches and the run are timed in this process: with the collector as the console script sets it for them
    gc.set_threshold(*COLLECTOR_THRESHOLDS)

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    corpora = {n: corpus_for(work, n)[0] for n in sizes}
    print(f"best of {args.repeat}, alternating; cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
    print("| meetings | measure | turnbench | floor | ratio | target | |")
    print("|---:|---|---:|---:|---:|---:|---|", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="turnbench-perf-"))
    try:
        with open_stack("embedded") as stack:
            for n in sizes:  # each size's rows as soon as they are measured
                _rows(n, measure_stack(stack, corpora[n], tmp / f"m{n}", args.repeat))
        for n in sizes:  # the stack stopped: score and compare need none
            _rows(n, measure_alone(corpora[n], tmp / f"m{n}", args.repeat))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"(load average at the end: {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
