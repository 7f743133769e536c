"""Benchmark: judging and scoring 10,000 queries × 100 ranked passages (target ≤ 5 s). ``make perf-harness``.

Builds a synthetic corpus on disk (not timed: 1,000 meetings × 100 turns, one passage per turn, 10,000
ranked queries across the three classes), a run of 100 passages per query, then times ``score_run`` end to
end (reading meetings and queries, judging, normalising, pytrec_eval, aggregation), its stages alone, and
writing the results directory. Then whole processes, start to exit: ``turnbench score`` on the run and inventory
as files, against a bare pytrec_eval process given what it needs prebuilt — the qrels and runs ``score`` exported
(passage and meeting level), parsed by pytrec_eval itself and evaluated on the same measures (target: ``score``
within 2× of it). Prints figures; asserts nothing, so it never fails a test run.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path


def build(root: Path, n_meetings: int, turns: int, n_queries: int, depth: int, seed: int):
    from turnbench.corpus import CorpusWriter, Meeting, Query, Turn
    from turnbench.passages import Passage
    from turnbench.rankings import RankedPassage

    rng = random.Random(seed)
    speakers = ("ann", "bob", "cat", "dan")
    meetings, passages = [], []
    for m in range(n_meetings):
        mid = f"m{m:05d}"
        ts, t0 = [], 0.0
        for i in range(turns):
            dur = rng.uniform(2.0, 30.0)
            n_words = rng.randint(3, 80)
            ts.append(Turn(i, speakers[rng.randrange(4)], round(t0, 3), round(t0 + dur, 3), " ".join(["w"] * n_words)))
            t0 += dur * rng.uniform(0.7, 1.0)  # some overlap between speakers
        length = max(t0, max(t.end for t in ts))  # the last turn may overrun the clock: the meeting holds it
        meetings.append(Meeting(mid, f"meeting {m}", "2026-01-05", round(length, 3), "synthetic", speakers,
                                tuple(ts)))
        passages += [Passage(f"{mid}:{t.index:05d}", mid, t.speaker, t.start, t.end, t.index) for t in ts]
    queries, entries = [], []
    for q in range(n_queries):
        qid = f"q{q:06d}"
        cls = ("lookup", "multi_file", "summarize")[q % 3]
        gm = sorted(rng.sample(range(n_meetings), {"lookup": 1, "multi_file": 3, "summarize": 4}[cls]))
        gold_turns, answer = {}, {}
        for m in gm:
            first = rng.randrange(turns - 5)
            gold_turns[f"m{m:05d}"] = ((first, first + rng.randint(0, 4)),)
            if cls == "lookup":
                answer[f"m{m:05d}"] = (first,)
        level = "meeting" if cls == "summarize" else "turn"
        queries.append(Query(qid, cls, {"lookup": "R1", "multi_file": "R2", "summarize": "R8"}[cls], "plain",
                             f"question {q}", "retrieval", tuple(f"m{m:05d}" for m in gm),
                             gold_turns if level == "turn" else {}, answer, None, level))
        if q % 50 == 0:
            continue  # unanswered queries, counted
        ranked = set()
        for m, rs in gold_turns.items():
            for first, last in rs:
                ranked.update(f"{m}:{i:05d}" for i in range(first, last + 1))
        while len(ranked) < depth:
            ranked.add(f"m{rng.randrange(n_meetings):05d}:{rng.randrange(turns):05d}")
        order = sorted(ranked)
        rng.shuffle(order)
        entries += [RankedPassage(qid, pid, r, float(depth - r // 3)) for r, pid in enumerate(order[:depth], 1)]
    with CorpusWriter(root) as w:
        w.write_meetings(meetings)
        w.write_queries(queries)
        w.write_manifest(corpus_id="speed", licence={"name": "CC0-1.0", "tier": "A"},
                         producer={"name": "benchmarks.harness", "version": "1", "seed": seed},
                         counts={"meetings": n_meetings, "queries": n_queries})
    return passages, entries


BARE = """import sys, pytrec_eval
from turnbench.harness import metrics as M
for level, measures in (("passages", M.PASSAGE_MEASURES), ("meetings", M.MEETING_MEASURES)):
    with open(f"{sys.argv[1]}/qrels.{level}.txt") as q, open(f"{sys.argv[1]}/run.{level}.trec") as r:
        qrels, run = pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)
    pytrec_eval.RelevanceEvaluator(qrels, M._trec_measure_set(measures)).evaluate(run)
"""


def whole_processes(tmp: Path, passages, entries, repeat: int) -> None:
    """``turnbench score`` start to exit against a bare pytrec_eval process on the qrels and runs it exported."""
    import statistics
    import subprocess
    import sys

    from turnbench.passages import write_passages
    from turnbench.runfiles import write_trec_run

    write_passages(tmp / "passages.jsonl", passages)
    by_query: dict = {}
    for e in entries:
        by_query.setdefault(e.query_id, []).append(e)
    write_trec_run(tmp / "run.trec", by_query, "speed")
    exe = str(Path(sys.executable).with_name("turnbench"))
    score_s, bare_s = [], []
    for i in range(max(1, repeat)):
        out = tmp / f"scored-{i}"
        t0 = time.perf_counter()
        subprocess.run([exe, "score", "--corpus", str(tmp / "corpus"), "--passages", str(tmp / "passages.jsonl"),
                        "--run", str(tmp / "run.trec"), "--out", str(out)], check=True, capture_output=True)
        score_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", BARE, str(out)], check=True, capture_output=True)
        bare_s.append(time.perf_counter() - t0)
    s, b = statistics.median(score_s), statistics.median(bare_s)
    print(f"whole process: turnbench score {s:.2f} s, bare pytrec_eval on its exported qrels and runs {b:.2f} s: "
          f"{s / b:.2f}x   [target <= 2x]")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--meetings", type=int, default=1_000)
    ap.add_argument("--turns", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=3, help="time score_run this many times; report best and median")
    args = ap.parse_args(argv)

    from turnbench.corpus import open_corpus
    from turnbench.harness import judgements as J
    from turnbench.harness import metrics as M
    from turnbench.harness.score import UNKNOWN, EngineSide
    from turnbench.pipeline.executor import score as score_forked
    from turnbench.rankings import normalised_order
    from turnbench.results.directory import write_results

    tmp = Path(tempfile.mkdtemp(prefix="turnbench-speed-"))
    try:
        t = time.perf_counter()
        passages, entries = build(tmp / "corpus", args.meetings, args.turns, args.queries, args.depth, args.seed)
        print(f"built corpus: {args.meetings} meetings x {args.turns} turns, {len(passages)} passages, "
              f"{args.queries} queries, {len(entries)} run entries ({time.perf_counter() - t:.1f} s, not timed)")
        corpus = open_corpus(tmp / "corpus")
        policy = J.RelevancePolicy()
        prov = EngineSide(UNKNOWN, UNKNOWN, UNKNOWN)

        times = []
        for _ in range(max(1, args.repeat)):
            t0 = time.perf_counter()
            results = score_forked(corpus, passages, entries, policy=policy, engine=prov)[0]
            times.append(time.perf_counter() - t0)
        t1 = time.perf_counter()
        write_results(tmp / "results", results)
        t2 = time.perf_counter()

        # the stages alone, for the split
        s0 = time.perf_counter()
        queries = [q for q in corpus.queries() if q.scored_on == "retrieval"]
        meetings = list(corpus.iter_meetings())
        s1 = time.perf_counter()
        judged = J.judge(queries, meetings, passages, policy)
        s2 = time.perf_counter()
        run = normalised_order(entries, {p.id: p for p in passages})
        s3 = time.perf_counter()
        qrels = {q: j.passages for q, j in judged.items() if j.judgeable and j.level == "turn"}
        M.evaluate(qrels, {q: {d: float(-r) for r, d in enumerate(run.get(q, ()))} for q in qrels}, M.PASSAGE_MEASURES)
        s4 = time.perf_counter()

        c = results.document["retrieval"]["counts"]
        print(f"queries judged {c['queries_judged']}, unanswered {c['queries_unanswered']}, "
              f"dropped {c['queries_dropped_unjudgeable']}, judged passages {c['judged_passages']}")
        times.sort()
        print(f"judge + score (score_run, end to end): best {times[0]:.2f} s, median {times[len(times) // 2]:.2f} s "
              f"of {len(times)}   [target <= 5 s]")
        print(f"  read corpus meetings + queries: {s1 - s0:.2f} s")
        print(f"  judge:                          {s2 - s1:.2f} s")
        print(f"  normalise run (rule 5):         {s3 - s2:.2f} s")
        print(f"  pytrec_eval (passage level):    {s4 - s3:.2f} s")
        print(f"write results (metrics.json/md):  {t2 - t1:.2f} s")
        whole_processes(tmp, passages, entries, args.repeat)
        import os

        print(f"(load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}; cores: {os.cpu_count()})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
