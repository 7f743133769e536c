"""The gate's false-alarm rate on A/A pairs, before and after Holm's correction. ``make perf-false-alarms``.

How the pairs are made: equivalent arms by label swapping. Take two real arms' results on the same corpus (bm25
and bm25-title, one per seed); for pair k, a fair coin per query (seeded by k) decides which arm's per-query values
go to side A and which to side B. Both sides are then draws of the same mixture of the two arms, so they are
equivalent by construction, while their per-query differences are as large as a real change's. Any difference
the gate names on such a pair is a false alarm. Pairs: every seed's results × ``--swaps`` coin seeds.

Reported, per pair: whether any row is named worse by its own 95% interval (the gate before the correction),
whether any row is worse after Holm (the gate now), and whether the lookup rule (any lookup Δ below 0, kept
as policy) fires; and per cell, the unadjusted false-alarm rate. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path


def _swap(a: dict, b: dict, seed: int) -> tuple[dict, dict]:
    x, y = json.loads(json.dumps(a)), json.loads(json.dumps(b))
    rng = random.Random(seed)
    for rx, ry in zip(x["retrieval"]["per_query"], y["retrieval"]["per_query"], strict=True):
        assert rx["query_id"] == ry["query_id"]
        if rng.random() < 0.5:
            rx["values"], ry["values"] = ry["values"], rx["values"]
    x["provenance"]["arm"] = {"name": "A"}
    y["provenance"]["arm"] = {"name": "B"}
    return x, y


def main(argv: list[str] | None = None) -> None:
    from turnbench.harness.compare import STRICT_CLASS, WORSE, compare
    from turnbench.resultsdir import read_metrics, seed_dirs

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arm-a", required=True, help="results of one arm: a directory or a set of seed-<S>/ dirs")
    ap.add_argument("--arm-b", required=True, help="results of another arm on the same corpora")
    ap.add_argument("--swaps", type=int, default=20, help="coin seeds per corpus")
    ap.add_argument("--resamples", type=int, default=10_000)
    args = ap.parse_args(argv)
    dirs_a = seed_dirs(Path(args.arm_a)) or {0: Path(args.arm_a)}
    dirs_b = seed_dirs(Path(args.arm_b)) or {0: Path(args.arm_b)}
    pairs = before = after = lookup_rule = gate_before = gate_after = 0
    cells = cell_alarms_before = cell_alarms_after = 0
    t = time.perf_counter()
    for s in sorted(dirs_a):
        a, b = read_metrics(dirs_a[s]), read_metrics(dirs_b[s])
        for k in range(args.swaps):
            x, y = _swap(a, b, 1_000 * s + k)
            cmp = compare(x, y, resamples=args.resamples)
            worse_before = any(r.verdict_unadjusted == WORSE for r in cmp.rows)
            worse_after = any(r.verdict == WORSE for r in cmp.rows)
            lookup = any(r.block == "retrieval" and dict(r.groups).get("class") == STRICT_CLASS and r.delta < 0
                         for r in cmp.rows)
            pairs += 1
            before += worse_before
            after += worse_after
            lookup_rule += lookup
            gate_before += worse_before or lookup
            gate_after += worse_after or lookup
            named = [r for r in cmp.rows if r.delta != 0.0 or r.p < 1.0]
            cells += len(named)
            cell_alarms_before += sum(r.verdict_unadjusted != "no measurable difference" for r in named)
            cell_alarms_after += sum(r.verdict != "no measurable difference" for r in named)
    print(f"A/A pairs: {pairs} ({len(dirs_a)} corpora x {args.swaps} label swaps of {args.arm_a} / {args.arm_b}), "
          f"{args.resamples:,} resamples, {time.perf_counter() - t:.0f} s")
    print(f"gate's statistical rule (a row worse), before correction (95% interval per cell): "
          f"{before}/{pairs} = {before / pairs:.1%}")
    print(f"gate's statistical rule (a row worse), after Holm:                             "
          f"{after}/{pairs} = {after / pairs:.1%}")
    print(f"lookup rule alone (any lookup delta < 0, policy): {lookup_rule}/{pairs} = {lookup_rule / pairs:.1%}")
    print(f"whole gate: before {gate_before / pairs:.1%}, after {gate_after / pairs:.1%}")
    print(f"per cell (rows that can move), any named difference: before {cell_alarms_before / max(1, cells):.2%}, "
          f"after {cell_alarms_after / max(1, cells):.2%} of {cells}")


if __name__ == "__main__":
    main()
