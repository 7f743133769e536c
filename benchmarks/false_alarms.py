"""How often the gate fails a change that changes nothing: its A/A false-alarm rate. ``make perf-false-alarms``.

How the pairs are made: equivalent arms by label swapping. Take two genuinely different arms' results on the same
corpus (say bm25 and bm25 plus a phrase should-clause); for pair k, a fair coin per query (seeded by k) decides
which arm's values go to side A and which to side B. Both sides are then draws of the same mixture of the two
arms, so they are equivalent by construction, while their per-query differences are as large and as correlated
across measures as a real change's. Any regression the gate names on such a pair is a false alarm. Pairs: every
two of the ``--arm`` directories (each a set of seed-<S>/ results, or one directory), every seed, ``--swaps`` coins.

Printed: per rule (the Holm family, the lookup guard, the whole gate, and the old rule that failed any lookup Δ
below zero) how many pairs it fired on, with a Wilson 95% interval; then the real, unswapped pairs' gate verdicts
for a reader to judge. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import math
import random
import time
from pathlib import Path


def _swap(a: dict, b: dict, seed: int) -> tuple[dict, dict]:
    x, y = copy.deepcopy(a), copy.deepcopy(b)
    for block in ("retrieval", "strict"):
        if block not in x:
            continue
        by_id = {r["query_id"]: r for r in y[block]["per_query"]}
        for rx in x[block]["per_query"]:
            ry = by_id[rx["query_id"]]
            # one coin per query, the same in every block: a query's results move together
            if random.Random(f"{seed}/{rx['query_id']}").random() < 0.5:
                rx["values"], ry["values"] = ry["values"], rx["values"]
    x["provenance"]["arm"] = {"name": "A"}
    y["provenance"]["arm"] = {"name": "B"}
    return x, y


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def main(argv: list[str] | None = None) -> None:
    from turnbench.harness.compare import STRICT_CLASS, WORSE, compare, guard_fires
    from turnbench.results.directory import read_metrics, seed_dirs
    from turnbench.results.record import from_tree

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arm", action="append", required=True,
                    help="results of one arm (repeat, two at least): a directory or a set of seed-<S>/ dirs")
    ap.add_argument("--swaps", type=int, default=4, help="coin seeds per pair of arms and corpus")
    ap.add_argument("--resamples", type=int, default=10_000)
    args = ap.parse_args(argv)
    if len(args.arm) < 2:
        ap.error("give two --arm directories at least")
    dirs = {Path(a).name: seed_dirs(Path(a)) or {0: Path(a)} for a in args.arm}
    seeds = sorted(set.intersection(*(set(d) for d in dirs.values())))
    fired = {"holm": 0, "guard": 0, "gate": 0, "old lookup rule": 0}
    pairs = 0
    real = []
    t = time.perf_counter()
    docs = {(name, s): read_metrics(d[s]).tree for name, d in dirs.items() for s in seeds}
    for (name_a, name_b), s in itertools.product(itertools.combinations(sorted(dirs), 2), seeds):
        a, b = docs[(name_a, s)], docs[(name_b, s)]
        cmp = compare(from_tree(a), from_tree(b), resamples=args.resamples)
        real.append(f"{name_a} -> {name_b} (seed {s}): gate {'FAIL' if cmp.gate_failures() else 'pass'}"
                    f"{' (' + cmp.gate_failures()[0] + ')' if cmp.gate_failures() else ''}"
                    f"{'; ' + str(len(cmp.warnings())) + ' lookup warning(s)' if cmp.warnings() else ''}")
        for k in range(args.swaps):
            x, y = _swap(a, b, _coin(name_a, name_b, s, k))
            cmp = compare(from_tree(x), from_tree(y), resamples=args.resamples)
            level = cmp.guard_level()
            holm = any(r.verdict == WORSE and r.block not in ("comparable", "strict") for r in cmp.rows)
            guard = any(guard_fires(r, level) for r in cmp.rows)
            old = any(r.block == "retrieval" and dict(r.groups).get("class") == STRICT_CLASS and r.delta < 0
                      for r in cmp.rows)
            pairs += 1
            fired["holm"] += holm
            fired["guard"] += guard
            fired["gate"] += bool(cmp.gate_failures())
            fired["old lookup rule"] += holm or old
    print(f"A/A pairs: {pairs} ({len(dirs)} arms: {', '.join(sorted(dirs))}; every two of them x {len(seeds)} "
          f"corpora x {args.swaps} label swaps), {args.resamples:,} resamples, {time.perf_counter() - t:.0f} s")
    print("| rule | fired | rate | Wilson 95% |")
    print("|---|---:|---:|---|")
    for rule, k in fired.items():
        lo, hi = wilson(k, pairs)
        print(f"| {rule} | {k}/{pairs} | {k / max(1, pairs):.1%} | [{lo:.1%}, {hi:.1%}] |")
    print("\nthe real (unswapped) pairs:")
    for line in real:
        print(f"- {line}")


def _coin(a: str, b: str, seed: int, k: int) -> int:
    """A coin seed for one pair, stable across runs and Python processes (no hash randomisation)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(f"{a}\x1f{b}\x1f{seed}\x1f{k}".encode()).digest()[:8], "big")


if __name__ == "__main__":
    main()
