"""Benchmark `run` against the server's own speed: ``make perf-run`` / ``python -m benchmarks.run``.

Loads a corpus into a fresh embedded stack (or uses the current one with ``--current``, loading it unless it
already holds the corpus), then sends the same ``_msearch`` bodies two ways, alternating so both see the same
machine: a bare loop (urllib3, pre-serialised bodies, the response read as JSON and nothing else) with 1, 2 and 4
threads, and ``run_arm`` at concurrency 1, 2 and 4 (inventory handed over, as ``bench`` does; and once read back
from PostgreSQL, as ``turnbench run`` does). Prints queries/s and the ratio to the bare loop at the same
concurrency (target: ``run`` >= 0.8x a bare two-thread loop), and checks every concurrency gives the same run.

``--process``: whole processes instead, on the current stack (the corpus loaded): ``turnbench run`` start to exit
against a bare process sending the same bodies from two threads (``BARE_PROCESS``: urllib3, the bodies read
serialised from a file), alternated, ``--repeat`` rounds: the median and best of each, their CPU time, and the ratio
per round (target: >= 0.8); ``--against TREE`` adds the same command from another checkout (the code before),
every run's files compared byte for byte.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TARGET_RATIO = 0.8

# the floor of a whole `turnbench run`: a process that only sends the bodies, already serialised, from two threads
BARE_PROCESS = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
import urllib3
url, path = sys.argv[1], sys.argv[2]
payloads = open(path, "rb").read().split(b"\\0")
http = urllib3.PoolManager(maxsize=2)
def one(payload):
    r = http.request("POST", url, body=payload, headers={"Content-Type": "application/x-ndjson"})
    return len(json.loads(r.data)["responses"])
with ThreadPoolExecutor(2) as ex:
    sum(ex.map(one, payloads))
"""


def whole_process(corpus_dir: Path, arm: str, url: str, payloads: list[bytes], repeat: int,
                  against: Path | None = None) -> dict[str, tuple[list[float], list[float]]]:
    """Each process's (wall seconds, CPU seconds) per round, ``repeat`` alternated rounds after one that warms them
    all: ``run`` (this tree's `turnbench run`), ``bare``, and with ``against`` ``before`` (the same command from that
    tree's ``turnbench`` package, for the same machine at the same moment); every run's files compared byte for
    byte with the first one's."""
    import resource
    import shutil
    import subprocess
    import sys
    import tempfile

    from turnbench.engines.msearch import MSEARCH_FILTER

    exe = str(Path(sys.executable).with_name("turnbench"))
    tmp = Path(tempfile.mkdtemp(prefix="turnbench-run-process-"))

    def children_cpu() -> float:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return used.ru_utime + used.ru_stime

    def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
        c0, t0 = children_cpu(), time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, **env})
        return time.perf_counter() - t0, children_cpu() - c0

    try:
        (tmp / "payloads").write_bytes(b"\0".join(payloads))
        run = [sys.executable, exe, "run", "--corpus", str(corpus_dir), "--arm", arm, "--out"]
        cmds: dict[str, tuple[list[str], dict[str, str]]] = {
            "run": (run + [str(tmp / "run")], {}),
            "bare": ([sys.executable, "-c", BARE_PROCESS, f"{url}/_msearch?filter_path={MSEARCH_FILTER}",
                      str(tmp / "payloads")], {})}
        if against is not None:  # the script's own directory comes first on sys.path, then PYTHONPATH's tree
            cmds["before"] = (run + [str(tmp / "before")], {"PYTHONPATH": str(against)})
        out: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in cmds}
        first: dict[str, bytes] = {}
        for i in range(repeat + 1):
            for name, (cmd, env) in cmds.items():
                if name != "bare":
                    shutil.rmtree(cmd[-1], ignore_errors=True)
                wall, cpu = timed(cmd, env)
                if name != "bare":
                    files = {f: (Path(cmd[-1]) / f).read_bytes() for f in RUN_FILES}
                    if first and files != first:
                        raise SystemExit(f"{name}: its run files differ from the first run's")
                    first = first or files
                if i:
                    out[name][0].append(wall)
                    out[name][1].append(cpu)
            if i:
                print(f"round {i}: " + ", ".join(f"{k} {v[0][-1]:.2f} s" for k, v in out.items())
                      + f"; bare / run {out['bare'][0][-1] / out['run'][0][-1]:.2f}; load average "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


RUN_FILES = ("passages.jsonl", "run.trec", "run.jsonl", "arm.json")


def bare(url: str, payloads: list[bytes], threads: int) -> float:
    """Seconds to send every payload and parse every response, ``threads`` at a time: the floor ``run`` races."""
    import urllib3

    from turnbench.engines.msearch import MSEARCH_FILTER

    http = urllib3.PoolManager(maxsize=threads)
    headers = {"Content-Type": "application/x-ndjson"}

    def one(payload: bytes) -> int:
        r = http.request("POST", f"{url}/_msearch?filter_path={MSEARCH_FILTER}", body=payload, headers=headers)
        return len(json.loads(r.data)["responses"])

    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as ex:
        sum(ex.map(one, payloads))
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_run", description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="corpora/default")
    ap.add_argument("--arm", default="bm25")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--current", action="store_true", help="use the current (recorded or external) stack")
    ap.add_argument("--process", action="store_true",
                    help="whole processes on the current stack: turnbench run against a bare process")
    ap.add_argument("--against", default=None, metavar="TREE",
                    help="with --process: also the same command from another checkout's turnbench (e.g. a git "
                         "worktree of the code before), alternated with the others")
    args = ap.parse_args(argv)

    from turnbench.corpus.format import open_corpus
    from turnbench.engines.arms import builtin
    from turnbench.engines.retrieval import MSEARCH_BATCH, run_arm, search_body
    from turnbench.loading import tables
    from turnbench.loading.index import DEFAULT_INDEX
    from turnbench.loading.load import load_corpus
    from turnbench.loading.settled import loaded_marker
    from turnbench.passages import inventory_sha256
    from turnbench.stack import current_stack, open_stack
    from turnbench.vocab import get_scope

    corpus = open_corpus(Path(args.corpus))
    arm = builtin(args.arm)
    queries = sorted((q for q in corpus.queries() if q.scored_on == "retrieval"), key=lambda q: q.id)
    bodies = [search_body(arm, q, get_scope("corpus"), arm.depth) for q in queries]
    head = json.dumps({"index": DEFAULT_INDEX}).encode() + b"\n"
    payloads = [b"".join(head + json.dumps(b, separators=(",", ":")).encode() + b"\n"
                         for b in bodies[i:i + MSEARCH_BATCH]) for i in range(0, len(bodies), MSEARCH_BATCH)]
    print(f"{corpus.id}: {len(queries)} queries, arm {arm.name}, depth {arm.depth}, {len(payloads)} batches of "
          f"{MSEARCH_BATCH}; cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")

    if args.process:
        timed = whole_process(Path(args.corpus), args.arm, current_stack().opensearch_url, payloads, args.repeat,
                              Path(args.against) if args.against else None)
        for name, (walls, cpus) in timed.items():
            print(f"{name}: median {statistics.median(walls):.2f} s, best {min(walls):.2f} s; CPU median "
                  f"{statistics.median(cpus):.2f} s")
        floor = timed["bare"][0]
        for name in [k for k in timed if k != "bare"]:
            ratios = [b / a for b, a in zip(floor, timed[name][0], strict=True)]
            print(f"{name}: bare / {name} per round median {statistics.median(ratios):.2f}, best {max(ratios):.2f}; "
                  f"best against best {min(floor) / min(timed[name][0]):.2f} (target >= {TARGET_RATIO}): "
                  f"{'ok' if statistics.median(ratios) >= TARGET_RATIO else 'MISSED'}")
        print(f"load average at the end {os.getloadavg()[0]:.1f}; every run's files the same bytes")
        return 0
    with (contextlib.nullcontext(current_stack()) if args.current else open_stack("embedded")) as stack:
        try:
            loaded_marker(stack, corpus)
            passages = tables.read_passages(stack)
            inventory = (passages, inventory_sha256(passages))
        except Exception:  # not loaded (or another corpus): load it
            loaded = load_corpus(stack, corpus)
            inventory = (loaded.passages, loaded.passages_sha256)
        run_arm(stack, corpus, arm, inventory=inventory)  # warm the server's caches and the JIT
        bare_s: dict[int, list[float]] = {1: [], 2: [], 4: []}
        run_s: dict[int, list[float]] = {1: [], 2: [], 4: []}
        runs = {}
        for _ in range(args.repeat):
            for n in (1, 2, 4):
                bare_s[n].append(bare(stack.opensearch_url, payloads, n))
                t0 = time.perf_counter()
                rr = run_arm(stack, corpus, arm, concurrency=n, inventory=inventory)
                run_s[n].append(time.perf_counter() - t0)
                runs[n] = (rr.entries.query_ids, list(rr.entries.passage_ids), list(rr.entries.scores))
        t0 = time.perf_counter()
        rr = run_arm(stack, corpus, arm, concurrency=2)
        from_pg = time.perf_counter() - t0
        verify = rr.timings["verify_s"]

    same = all(runs[n] == runs[1] for n in runs)
    print("| concurrency | bare _msearch q/s | run q/s | run / bare |")
    print("|---:|---:|---:|---:|")
    for n in (1, 2, 4):
        b, r = statistics.median(bare_s[n]), statistics.median(run_s[n])
        print(f"| {n} | {len(queries) / b:,.0f} | {len(queries) / r:,.0f} | {b / r:.2f} |")
    ratio = statistics.median(bare_s[2]) / statistics.median(run_s[2])
    print(f"run at concurrency 2 vs a bare two-thread loop: {ratio:.2f}x (target >= {TARGET_RATIO}x): "
          f"{'ok' if ratio >= TARGET_RATIO else 'MISSED'}")
    print(f"run with the inventory read back from PostgreSQL (turnbench run): {from_pg:.2f} s, of which verifying "
          f"the inventory {verify:.2f} s")
    print(f"the same run at concurrency 1, 2 and 4: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
