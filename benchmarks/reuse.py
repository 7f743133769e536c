"""What a reuse check costs: ``python -m benchmarks.reuse`` (issue 40).

Loads a corpus (default: the 200-meeting default corpus) into a fresh embedded stack — or the current one with
``--current`` — then runs the check ``bench`` and ``load`` make before keeping a settled load
(turnbench.loading.reuse.settled_load) ``--repeat`` times and prints, per check, the wall time, this process's
CPU-seconds and the servers' (OpenSearch's JVM and PostgreSQL's postmaster with its reaped backends, read from /proc
for an embedded stack), with the median of each. ``--encoder NAME`` gives the index a vector field of that encoder
(its embeddings must be in the cache or they are computed first). Figures only; the records of the load go to a
temporary state directory unless TURNBENCH_STATE_DIR is set.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_CORPUS = "corpora/default"


def _proc_cpu_s(pid: int) -> float:
    """utime + stime + cutime + cstime of ``pid`` in seconds (children once reaped: PostgreSQL's backends)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _server_pids(stack: object) -> list[int]:
    details = getattr(stack, "details", {}) or {}
    return [int(p["pid"]) for p in details.get("processes", []) if isinstance(p, dict) and "pid" in p]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_reuse", description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--encoder", default=None, help="also give the index this encoder's vector field (exact)")
    ap.add_argument("--current", action="store_true", help="use the current (recorded or external) stack")
    args = ap.parse_args(argv)
    os.environ.setdefault("TURNBENCH_STATE_DIR", tempfile.mkdtemp(prefix="turnbench-reuse-state-"))

    import turnbench
    from turnbench.corpus.format import open_corpus
    from turnbench.loading.load import load_corpus
    from turnbench.loading.reuse import settled_load
    from turnbench.loading.spec import LoadSpec
    from turnbench.stack import current_stack, open_stack

    vectors = None
    if args.encoder:
        from turnbench.engines.embeddings import vector_spec

        vectors = vector_spec(args.encoder, graph=False)
    corpus = open_corpus(Path(args.corpus))
    ctx = contextlib.nullcontext(current_stack()) if args.current else open_stack("embedded")
    with ctx as stack:
        pids = _server_pids(stack)
        print(f"turnbench from {Path(turnbench.__file__).parent}; stack {stack.provider}, servers {pids or 'unseen'}")
        t0 = time.perf_counter()
        loaded = load_corpus(stack, corpus, LoadSpec(vectors=vectors))
        print(f"loaded {corpus.id}: {loaded.provenance['passages']} passages"
              f"{' with vectors by ' + args.encoder if vectors else ''} in {time.perf_counter() - t0:.1f} s")
        rows = []
        for n in range(args.repeat):
            wall0, cpu0, srv0 = time.perf_counter(), time.process_time(), sum(_proc_cpu_s(p) for p in pids)
            kept, why = settled_load(stack, corpus, LoadSpec(vectors=vectors))
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            srv = sum(_proc_cpu_s(p) for p in pids) - srv0
            if kept is None:
                print(f"check {n + 1}: NOT kept ({why})")
                return 1
            rows.append((wall, cpu, srv))
            print(f"check {n + 1}: wall {wall:.2f} s, this process {cpu:.2f} CPU-s, servers {srv:.2f} CPU-s")
        med = [statistics.median(r[k] for r in rows) for k in range(3)]
        print(f"median of {args.repeat}: wall {med[0]:.2f} s, this process {med[1]:.2f} CPU-s, servers {med[2]:.2f} "
              f"CPU-s, together {med[1] + med[2]:.2f} CPU-s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
