"""Benchmark the dense and hybrid arms: ``make perf-dense`` / ``python -m benchmarks.dense``.

Prints, each against its target where the issue sets one:

1. encoding: passages/s of the offline encoder on a fresh sample of the default corpus's passages (no cache), and
   the cache's read rate for the whole corpus (target >= 60 passages/s on 2 cores);
2. on a fresh embedded stack, the default corpus loaded with stored vectors (exact arms) and with an HNSW graph:
   time split, index size, JVM heap used; dense-exact (target >= 50 queries/s) and dense-hnsw (>= 150) at depth
   100, first pass and median of ``--repeat``, and dense-hnsw's recall against dense-exact;
3. index size and heap with a graph for a 2,000-meeting corpus — its vectors are seeded pseudo-random unit vectors,
   not the encoder's (encoding ~125k passages would take most of an hour here); size and heap depend on the number
   of vectors and the graph's parameters, not on what the vectors say;
4. ``make bench ARM=hybrid-rrf`` end to end with a warm embedding cache (target <= 30 s).

The machine's load average is printed with the figures: on a shared 2-core machine read them as ratios. Figures
only; no claim file is written.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_CORPUS = "corpora/default"
TARGET_ENCODE = 60.0
TARGET_QPS = {"dense-exact": 50.0, "dense-hnsw": 150.0}
TARGET_BENCH_S = 30.0


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def load_average() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) {five:.1f} (5 min) on {os.cpu_count()} CPUs"


def passages_of(corpus):
    from turnbench.loading.chunking import chunk_meeting

    return sorted((c for m in corpus.iter_meetings() for c in chunk_meeting(m.id, m.turns)), key=lambda c: c.passage.id)


def encode_figures(corpus, sample: int) -> None:
    from turnbench.engines import encoders
    from turnbench.engines.embeddings import embed

    encoder = encoders.get("minilm-l6-v2-int8")
    chunks = passages_of(corpus)
    step = max(1, len(chunks) // sample)
    texts = [c.text for c in chunks[::step]][:sample]
    tokens = sum(len(t) for t in encoder.token_ids(texts)) / len(texts)
    t0, c0 = time.perf_counter(), time.process_time()
    encoder.encode(texts, "passage")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rate = len(texts) / wall
    print(f"encode: {len(texts)} passages (mean {tokens:.0f} tokens) in {wall:.1f} s = {rate:.1f} passages/s "
          f"(target >= {TARGET_ENCODE:.0f}: {verdict(rate >= TARGET_ENCODE)}); {len(texts) / cpu:.1f} passages per "
          f"CPU-second, so at most {2 * len(texts) / cpu:.0f}/s on 2 idle cores; {load_average()}")
    t0 = time.perf_counter()
    found = embed(encoder, [(c.passage.id, c.text) for c in chunks], role="passage")
    print(f"embeddings of all {len(chunks)} passages: {found.cached} from the cache, {found.encoded} encoded, "
          f"{time.perf_counter() - t0:.1f} s; digest {found.digest[:16]}…")


def heap_mib(stack) -> tuple[float, float]:
    from turnbench.stack.clients import opensearch_client

    node = next(iter(opensearch_client(stack).nodes.stats(metric="jvm")["nodes"].values()))
    mem = node["jvm"]["mem"]
    return mem["heap_used_in_bytes"] / 2**20, mem["heap_max_in_bytes"] / 2**20


def arm_rates(stack, corpus, name: str, repeat: int) -> None:
    from turnbench.engines.retrieval import run_arm

    cold = run_arm(stack, corpus, name, depth=100)
    rates = [run_arm(stack, corpus, name, depth=100).timings["queries_per_s"] for _ in range(repeat)]
    med, target = statistics.median(rates), TARGET_QPS[name]
    approx = cold.arm_config.get("approximation")
    extra = f"; recall@10 {approx['recall@10']}, @100 {approx['recall@100']} vs dense-exact" if approx else ""
    print(f"  {name}: {int(cold.timings['queries'])} queries at depth 100: first pass "
          f"{cold.timings['queries_per_s']:.0f} q/s, then median {med:.0f} of {repeat} (range {min(rates):.0f}-"
          f"{max(rates):.0f}; target >= {target:.0f}: {verdict(med >= target)}){extra}")


def load_figures(stack, corpus, *, graph: bool, label: str, spec=None) -> None:
    from turnbench.engines.embeddings import vector_spec
    from turnbench.loading.load import load_corpus
    from turnbench.loading.spec import LoadSpec

    t0 = time.perf_counter()
    loaded = load_corpus(stack, corpus, LoadSpec(vectors=spec or vector_spec("minilm-l6-v2-int8", graph=graph)))
    wall = time.perf_counter() - t0
    t, p = loaded.timings, loaded.provenance
    used, top = heap_mib(stack)
    print(f"{label}: {p['passages']} passages, load {wall:.1f} s (embed {t['embed_s']:.1f}, bulk {t['bulk_s']:.1f}, "
          f"force-merge {t['force_merge_s']:.1f}); index {t['store_size_bytes'] / 2**20:.1f} MiB; JVM heap used "
          f"{used:.0f} of {top:.0f} MiB after the load; {load_average()}")


def random_spec(dim: int = 384):
    """A vector field of seeded pseudo-random unit vectors (sha256 of the passage id seeds each)."""
    import numpy as np

    from turnbench.loading.vectors import VectorSpec

    def embed(items, progress):
        vectors = {}
        for pid, _ in items:
            rng = np.random.default_rng(int.from_bytes(hashlib.sha256(pid.encode()).digest()[:8], "little"))
            v = rng.standard_normal(dim)
            vectors[pid] = [round(float(x), 6) for x in v / np.linalg.norm(v)]
        return vectors.__getitem__, {"digest": {"sha256": "random"}, "note": "seeded random unit vectors"}

    return VectorSpec(field="embedding", encoder="random", dim=dim, embed=embed, graph=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_dense", description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--sample", type=int, default=1000, help="passages encoded fresh for the encoding rate")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--large", type=int, default=2000, help="meetings of the size-and-heap corpus (0: skip)")
    ap.add_argument("--skip-make", action="store_true", help="skip timing `make bench ARM=hybrid-rrf`")
    args = ap.parse_args(argv)

    from turnbench.corpus.format import open_corpus
    from turnbench.stack import open_stack

    if not (Path(args.corpus) / "manifest.json").is_file():
        raise SystemExit(f"{args.corpus}: no corpus there; `make corpus` regenerates the default one")
    corpus = open_corpus(Path(args.corpus))
    encode_figures(corpus, args.sample)
    with open_stack("embedded") as stack:
        load_figures(stack, corpus, graph=False, label="default corpus, stored vectors (exact arms)")
        arm_rates(stack, corpus, "dense-exact", args.repeat)
        load_figures(stack, corpus, graph=True, label="default corpus, HNSW graph")
        arm_rates(stack, corpus, "dense-hnsw", args.repeat)
        used, top = heap_mib(stack)
        print(f"  JVM heap used {used:.0f} of {top:.0f} MiB after the queries")
        if args.large:
            from turnbench.generator.config import GeneratorConfig
            from turnbench.generator.generate import generate

            with tempfile.TemporaryDirectory(prefix="turnbench-bench-dense-") as tmp:
                t0 = time.perf_counter()
                generate(GeneratorConfig(meetings=args.large), Path(tmp) / "corpus", workers=2)
                print(f"generated {args.large} meetings in {time.perf_counter() - t0:.0f} s")
                load_figures(stack, open_corpus(Path(tmp) / "corpus"), graph=True, spec=random_spec(),
                             label=f"{args.large} meetings, HNSW graph of seeded random vectors")
    if not args.skip_make:
        with tempfile.TemporaryDirectory(prefix="turnbench-bench-dense-") as tmp:
            t0 = time.perf_counter()
            out = subprocess.run(["make", "bench", "ARM=hybrid-rrf", f"RESULTS={tmp}", "PROVIDER=embedded"],
                                 capture_output=True, text=True)
            wall = time.perf_counter() - t0
            # bench's stages line, and its continuation lines (it wraps at 100 columns)
            stages = re.findall(r"^stages:.*(?:\n  .*)*", out.stderr, re.M)
            ok = wall <= TARGET_BENCH_S and out.returncode == 0
            print(f"make bench ARM=hybrid-rrf (warm cache): {wall:.1f} s, exit {out.returncode} (target <= "
                  f"{TARGET_BENCH_S:.0f} s: {verdict(ok)}); {load_average()}")
            if stages:
                print(f"  {' '.join(stages[-1].split())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
