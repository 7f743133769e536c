"""Benchmark the load and the retrieval arms: ``make perf-load`` / ``python -m benchmarks.load``.

Loads a corpus (default: the 200-meeting default corpus that `make corpus` regenerates) into a
fresh embedded stack — or the current one with ``--current`` — and prints the load time split between
PostgreSQL, chunking, bulk indexing and force-merge, passages/s, retrieval queries/s at depth 100 for
each arm (best and median of ``--repeat`` runs), per-query latency quantiles, and this Python process's
peak RSS, each against its target. Figures only; no claim file is written.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import sys
import time
from pathlib import Path

DEFAULT_CORPUS = "corpora/default"
TARGET_LOAD_S = 30.0
TARGET_QPS = 200.0
TARGET_RSS_MIB = 1024.0


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB


def quantile(values: list[float], q: float) -> float:
    """Nearest-rank quantile."""
    ordered = sorted(values)
    k = max(1, -(-len(ordered) * q // 1))
    return ordered[int(k) - 1]


def ensure_corpus(path: Path) -> None:
    if not (path / "manifest.json").is_file():
        raise SystemExit(f"{path}: no corpus there; `make corpus` regenerates the default one from its manifest")


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_load", description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--max-words", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--current", action="store_true", help="use the current (recorded or external) stack")
    args = ap.parse_args(argv)

    from turnbench.corpus.format import open_corpus
    from turnbench.engines.arms import builtin, builtin_names
    from turnbench.engines.retrieval import run_arm
    from turnbench.loading.load import load_corpus
    from turnbench.loading.spec import LoadSpec
    from turnbench.stack import current_stack, open_stack

    corpus_dir = Path(args.corpus)
    ensure_corpus(corpus_dir)
    corpus = open_corpus(corpus_dir)
    ctx = contextlib.nullcontext(current_stack()) if args.current else open_stack("embedded")
    with ctx as stack:
        print(f"stack: {stack.provider}, OpenSearch {stack.opensearch_version} (Lucene {stack.lucene_version}), "
              f"PostgreSQL {stack.postgres_version}")
        t0 = time.perf_counter()
        result = load_corpus(stack, corpus, LoadSpec(max_words=args.max_words))
        wall = time.perf_counter() - t0
        t, p = result.timings, result.provenance
        print(f"corpus {corpus.id}: {p['meetings']} meetings, {p['segments']} segments, {p['passages']} passages "
              f"(max {args.max_words} words), store {t['store_size_bytes'] / 2**20:.1f} MiB")
        print(f"load {wall:.2f} s (target <= {TARGET_LOAD_S:.0f} s: {verdict(wall <= TARGET_LOAD_S)}): "
              f"postgres {t['postgres_s']:.2f} s, chunk {t['chunk_s']:.2f} s, "
              f"create index {t['create_index_s']:.2f} s, "
              f"bulk {t['bulk_s']:.2f} s, force-merge {t['force_merge_s']:.2f} s, settle {t['settle_s']:.2f} s "
              f"({int(t['settle_reads'])} reads), provenance {t['provenance_s']:.2f} s")
        print(f"passages/s: {p['passages'] / wall:.0f} over the whole load, {p['passages'] / t['bulk_s']:.0f} in bulk")
        for name in (n for n in builtin_names() if not builtin(n).vector_field):  # dense arms: make perf-dense
            cold = run_arm(stack, corpus, name, depth=100)  # the first pass also warms the JVM's compiled code
            rates, lat = [], []
            for _ in range(args.repeat):
                run = run_arm(stack, corpus, name, depth=100)
                rates.append(run.timings["queries_per_s"])
                lat = run.latencies
            med = statistics.median(rates)
            print(f"arm {name}: {int(run.timings['queries'])} queries at depth 100: first pass "
                  f"{cold.timings['queries_per_s']:.0f} queries/s, then median {med:.0f} of {args.repeat} "
                  f"(range {min(rates):.0f}-{max(rates):.0f}; "
                  f"target >= {TARGET_QPS:.0f}: {verdict(med >= TARGET_QPS)}); "
                  f"server took p50 {quantile(lat, .5) * 1000:.0f} ms, p95 {quantile(lat, .95) * 1000:.0f} ms, "
                  f"p99 {quantile(lat, .99) * 1000:.0f} ms; "
                  f"index check before searching {run.timings['verify_s']:.2f} s")
    rss = peak_rss_mib()
    load1, load5, _ = os.getloadavg()
    print(f"host: {os.cpu_count()} CPUs, load average {load1:.1f} (1 min) {load5:.1f} (5 min) — "
          "other work skews these figures")
    print(f"python peak RSS {rss:.0f} MiB (target < {TARGET_RSS_MIB:.0f} MiB: {verdict(rss < TARGET_RSS_MIB)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
