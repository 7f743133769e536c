"""Benchmark turnbench end to end as the corpus grows: ``make perf-scale`` / ``python -m benchmarks.scale``.

For each size (meetings) it generates the corpus (kept under ``--work`` and reused when it is still that corpus),
runs ``turnbench bench`` on a fresh embedded stack as its own process, and times ``turnbench compare`` of the
result against itself (the bootstrap and randomisation test run in full either way). Per size it prints the
stages' seconds (from runinfo.json), the bench process's peak RSS (its rusage, children included), the index's
store and the JVM heap it ran with; then each stage's growth exponent fitted by least squares on log time against
log meetings, the worst stage named, and the fit extrapolated to 200,000 meetings with the disk that
turnbench.loading.capacity asks for at that size. ``--cluster`` also benches the default corpus on 3 nodes × 3
shards beside 1 × 1: start times, bench times, and whether the claim files are the same bytes.

The figures are only as good as the machine is quiet: compare sizes within one run.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

STAGES = ("stack", "load", "answers", "run", "judge_and_score", "report")
TARGETS = {2000: (60.0, 1 << 30), 20000: (600.0, 2 << 30)}  # end to end s, peak Python RSS
PROJECT_TO = 200_000
SEED = 20261130


# The CLI in a process that reports its own peak RSS on exit: the JVM and PostgreSQL are its children (reaped at
# teardown), so the rusage of the process tree would be the JVM's, not Python's.
WRAP = """import atexit, resource, sys
atexit.register(lambda: print(f"\\nperf-scale-maxrss-kb={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}",
                              file=sys.stderr))
from turnbench.cli import main
sys.argv = ["turnbench", *sys.argv[1:]]
main()
"""


def rss_of(args: list[str], heap: str | None = None) -> tuple[float, int, str]:
    """Seconds and the Python process's own peak RSS (bytes) of ``turnbench ARGS``."""
    env = {**os.environ, **({"TURNBENCH_OPENSEARCH_HEAP": heap} if heap else {})}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRAP, *args], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"perf-scale: turnbench {' '.join(args[:2])} failed ({done.returncode}): "
                         f"{done.stderr.strip()[-600:]}")
    marks = [line for line in done.stderr.splitlines() if line.startswith("perf-scale-maxrss-kb=")]
    return seconds, int(marks[-1].split("=")[1]) * 1024 if marks else 0, done.stdout


def corpus_for(work: Path, meetings: int) -> tuple[Path, float | None]:
    """The corpus of ``meetings`` at the default seed, generated unless a valid one is already there."""
    out = work / f"m{meetings}"
    if (out / "manifest.json").is_file():
        from turnbench.corpus.format import open_corpus

        try:  # every file against its manifest hash, and the manifest is of this size and seed
            config = open_corpus(out).manifest["producer"]["config"]
            if (config["meetings"], config["seed"]) == (meetings, SEED):
                return out, None
        except Exception:  # anything else is regenerated
            pass
        shutil.rmtree(out)
    seconds, _, _ = rss_of(["generate", "--seed", str(SEED), "--meetings", str(meetings), "--workers", "2",
                            "--out", str(out)])
    return out, seconds


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(a, b) of log y = a + b log x by least squares."""
    lx, ly = [math.log(x) for x in xs], [math.log(max(y, 1e-3)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    b = sum((x - mx) * (y - my) for x, y in zip(lx, ly, strict=True)) / sum((x - mx) ** 2 for x in lx)
    return my - b * mx, b


def human(n: float) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n / 1024:.0f} KB"


def bench_size(work: Path, meetings: int, heap: str) -> dict[str, float]:
    corpus, generate_s = corpus_for(work, meetings)
    out = work / f"results-m{meetings}"
    shutil.rmtree(out, ignore_errors=True)
    total, rss, _ = rss_of(["bench", "--corpus", str(corpus), "--arm", "bm25", "--provider", "embedded",
                            "--out", str(out)], heap)
    info = json.loads((out / "bm25" / "runinfo.json").read_text())
    compare_s, _, _ = rss_of(["compare", str(out / "bm25"), str(out / "bm25"), "--out", str(work / "c.md"),
                              "--html", str(work / "c.html")])
    counts = json.loads((corpus / "manifest.json").read_text())["counts"]
    row: dict[str, float] = {"meetings": meetings, "words": counts["words"], "end_to_end": total,
                             "peak_rss": rss, "compare": compare_s,
                             "store": info["load_steps"].get("store_size_bytes", 0.0)}
    if generate_s is not None:
        row["generate"] = generate_s
    row.update({s: float(info["elapsed_seconds"].get(s, 0.0)) for s in STAGES})
    return row


def cluster(work: Path) -> int:
    from turnbench.corpus.format import open_corpus
    from turnbench.results.directory import CLAIM_FILES

    corpus = Path("corpora/default")
    open_corpus(corpus)
    outs = {}
    print("\n| topology | stack start s | bench s | load s | run s |")
    print("|---|---:|---:|---:|---:|")
    for nodes, shards in ((1, 1), (3, 3)):
        out = work / f"cluster-{nodes}x{shards}"
        shutil.rmtree(out, ignore_errors=True)
        seconds, _, _ = rss_of(["bench", "--corpus", str(corpus), "--arm", "bm25", "--provider", "embedded",
                                "--nodes", str(nodes), "--shards", str(shards), "--out", str(out)], "512m")
        e = json.loads((out / "bm25" / "runinfo.json").read_text())["elapsed_seconds"]
        print(f"| {nodes} node(s) × {shards} shard(s) | {e['stack']:.1f} | {seconds:.1f} | {e['load']:.1f} | "
              f"{e['run']:.1f} |")
        outs[nodes] = out / "bm25"
    same = all(filecmp.cmp(outs[1] / f, outs[3] / f, shallow=False) for f in CLAIM_FILES)
    print(f"claim files ({', '.join(CLAIM_FILES)}) byte-identical on 3 nodes × 3 shards and 1 × 1: "
          f"{'yes' if same else 'NO'}")
    return 0 if same else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_scale", description=__doc__.splitlines()[0])
    ap.add_argument("--meetings", default="200,2000", help="sizes, comma-separated (8..20000)")
    ap.add_argument("--work", default=".turnbench/scale", help="corpora and results (kept for reuse)")
    ap.add_argument("--heap", default="1g")
    ap.add_argument("--cluster", action="store_true", help="also 3 nodes × 3 shards beside 1 × 1")
    args = ap.parse_args(argv)
    sizes = sorted({int(s) for s in args.meetings.split(",") if s.strip()})
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}, heap {args.heap}, seed {SEED}")

    rows = [bench_size(work, n, args.heap) for n in sizes]
    stages = ("generate", *STAGES, "compare", "end_to_end")
    print("\n| meetings | words | " + " | ".join(stages) + " | peak RSS | index store |")
    print("|---:|---:|" + "---:|" * len(stages) + "---:|---:|")
    for r in rows:
        cells = [f"{r[s]:.1f}" if s in r else "(reused)" for s in stages]
        print(f"| {r['meetings']:,.0f} | {r['words']:,.0f} | " + " | ".join(cells)
              + f" | {human(r['peak_rss'])} | {human(r['store'])} |")
    misses = 0
    for r in rows:
        if int(r["meetings"]) in TARGETS:
            t, m = TARGETS[int(r["meetings"])]
            ok = r["end_to_end"] <= t and r["peak_rss"] <= m
            misses += not ok
            print(f"{r['meetings']:,.0f} meetings: end to end {r['end_to_end']:.0f} s (target <= {t:.0f}), peak RSS "
                  f"{human(r['peak_rss'])} (target <= {human(m)}): {'ok' if ok else 'MISSED'}")

    if len(rows) >= 2:
        from turnbench.loading import capacity

        # sizes below 2,000 meetings are mostly fixed costs (a stack start, a JIT warming up): fitting them in would
        # flatten every exponent, so they are left out whenever two larger sizes were measured
        fitted = [r for r in rows if r["meetings"] >= 2000]
        fitted = fitted if len(fitted) >= 2 else rows
        xs = [r["meetings"] for r in fitted]
        print(f"\ngrowth against meetings ({', '.join(f'{x:,.0f}' for x in xs)}), extrapolated to {PROJECT_TO:,}:")
        print("| stage | exponent | projected s |")
        print("|---|---:|---:|")
        worst = ("", 0.0)
        for s in (*stages, "peak_rss", "store"):
            if not all(s in r and r[s] > 0 for r in fitted):
                continue
            a, b = fit(xs, [r[s] for r in fitted])
            projected = math.exp(a) * PROJECT_TO ** b
            shown = human(projected) if s in ("peak_rss", "store") else f"{projected:,.0f}"
            print(f"| {s} | {b:.2f} | {shown} |")
            if s in STAGES + ("compare",) and b > worst[1]:
                worst = (s, b)
        print(f"worst growth: {worst[0]} (exponent {worst[1]:.2f}"
              f"{', super-linear' if worst[1] > 1.05 else ''})")
        words_per_meeting = rows[-1]["words"] / rows[-1]["meetings"]
        need = capacity.need({"words": int(words_per_meeting * PROJECT_TO), "turns": 0})
        if need is not None:
            print(f"disk turnbench asks for at {PROJECT_TO:,} meetings: {human(need.index_disk)} for the index, "
                  f"{human(need.postgres_disk)} for PostgreSQL")
    if args.cluster:
        misses += cluster(work)
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
