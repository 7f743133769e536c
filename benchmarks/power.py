"""How often the gate finds a loss of known size, against the size it says it can find. ``make perf-power``.

A regression is planted in a real run: for a random share of the lookup questions, every passage judged relevant
is taken out of the ranking (the answer demoted past the depth), and the run is judged and scored again from
scratch. The planted run is compared with the original. Per share, over ``--draws`` draws: how often the gate
failed, the mean Δ lookup nDCG@10 it measured, and that Δ over the detectable loss compare stated on the same row
(``detectable``) and over what the original results' metrics.md stated before any candidate ran (the planted
share). A stated figure is honest when losses at or above it are found about 80% of the time or more, and losses
well below it mostly are not. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import defaultdict
from pathlib import Path


def _relevant(qrels: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for line in qrels.read_text().splitlines():
        qid, _, pid, grade = line.split()
        if int(grade) > 0:
            out[qid].add(pid)
    return out


def main(argv: list[str] | None = None) -> None:
    from turnbench import api
    from turnbench.corpus.format import open_corpus
    from turnbench.harness.compare import compare
    from turnbench.harness.power import detection
    from turnbench.passages import read_passages
    from turnbench.results.directory import read_metrics
    from turnbench.results.record import from_tree
    from turnbench.runfiles import read_run

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True, type=Path, help="a results directory with its exported files")
    ap.add_argument("--corpus", required=True, type=Path, help="the corpus it was scored on")
    ap.add_argument("--shares", default="0.005,0.01,0.02,0.03,0.05", help="shares of lookups to plant a loss in")
    ap.add_argument("--draws", type=int, default=10)
    ap.add_argument("--resamples", type=int, default=10_000)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    # the planted run has no answers: the retrieval blocks are compared, as a retrieval change would be
    base = from_tree({k: v for k, v in read_metrics(args.results).tree.items() if k != "answers"})
    corpus = open_corpus(args.corpus)
    inventory = read_passages(args.results / "passages.jsonl")
    entries = list(read_run(args.results / "run.raw.trec"))
    relevant = _relevant(args.results / "qrels.passages.txt")
    lookups = sorted(r.query_id for r in (base.retrieval.per_query if base.retrieval else ()) if r.cls == "lookup")
    (stated,) = [d for d in detection(base).rows if d.group[-1] == "lookup" and d.measure == "nDCG@10"]
    print(f"{args.results}: {len(lookups)} lookups; metrics.md states a lookup nDCG@10 loss of "
          f"{stated.loss:.4f} ({100 * (stated.share or 0):.1f}% of lookups losing their score) is found 80% of the "
          "time")
    print("| share | lookups hit | draws | gate failed | mean Δ nDCG@10 | Δ / compare's detectable | "
          "Δ / metrics.md's stated loss |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for share in (float(x) for x in args.shares.split(",")):
        k = max(1, round(share * len(lookups)))
        failed, deltas, ratios, stated_ratios = 0, [], [], []
        for draw in range(args.draws):
            hit = set(random.Random(f"{share}/{draw}").sample(lookups, k))
            planted = []
            for e in entries:
                if e.query_id in hit and e.passage_id in relevant.get(e.query_id, ()):
                    continue  # the answer demoted past the depth
                planted.append(e)
            cand = api.score(corpus, inventory, planted, arm={"name": "planted"}).record
            cmp = compare(base, cand, resamples=args.resamples)
            failed += bool(cmp.gate_failures())
            row = next(r for r in cmp.rows if r.block == "retrieval" and r.group("class") == "lookup"
                       and r.measure == "nDCG@10")
            deltas.append(row.delta)
            if row.detectable:
                ratios.append(-row.delta / row.detectable)
            if stated.loss:
                stated_ratios.append(-row.delta / stated.loss)
        print(f"| {share:.1%} | {k} | {args.draws} | {failed}/{args.draws} | {statistics.fmean(deltas):+.4f} | "
              f"{statistics.fmean(ratios) if ratios else float('nan'):.2f} | "
              f"{statistics.fmean(stated_ratios) if stated_ratios else float('nan'):.2f} |")
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
