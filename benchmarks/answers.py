"""Benchmark: every aggregation query of the default corpus answered on the embedded stack (target ≤ 5 s).

``make perf-answers`` / ``python -m benchmarks.answers``. Uses the default corpus (``make corpus``
regenerates it from its recorded manifest), loads it into a fresh embedded stack — or the current one with
``--current`` —
then times ``answer_queries`` end to end (connect, the corpus check, parsing, every mechanism) over
``--repeat`` runs, with the time per rule, and scores the answers so a fast wrong answer cannot pass
unnoticed. Prints figures; asserts nothing and writes no claim file.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

TARGET_S = 5.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_answers", description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="corpora/default", help="a corpus directory (`make corpus` makes the default)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--current", action="store_true", help="use the current (recorded or external) stack")
    ap.add_argument("--no-load", action="store_true", help="the stack already holds the corpus (with --current)")
    args = ap.parse_args(argv)

    from turnbench.corpus.format import open_corpus
    from turnbench.engines.answer.engine import answer_queries
    from turnbench.engines.answer.mechanisms import ReferenceAnswerer
    from turnbench.harness.answers import score_answers
    from turnbench.loading.load import load_corpus
    from turnbench.stack import current_stack, open_stack

    corpus = open_corpus(Path(args.corpus))
    queries = corpus.queries()
    todo = [q for q in queries if q.scored_on == "answer"]
    ctx = contextlib.nullcontext(current_stack()) if args.current else open_stack("embedded")
    with ctx as stack:
        print(f"stack: {stack.provider}, OpenSearch {stack.opensearch_version} (Lucene {stack.lucene_version}), "
              f"PostgreSQL {stack.postgres_version}")
        if not (args.current and args.no_load):
            t0 = time.perf_counter()
            load_corpus(stack, corpus)
            print(f"loaded {corpus.id} in {time.perf_counter() - t0:.2f} s (not part of the figure)")
        walls = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            submitted = answer_queries(stack, queries, answerer="reference", corpus=corpus)
            walls.append(time.perf_counter() - t0)
        per_rule: dict[str, float] = {}
        with ReferenceAnswerer.connect(stack) as ref:
            ref.meetings()
            for q in todo:
                t0 = time.perf_counter()
                ref.answer(q.id, q.text)
                per_rule[q.rule] = per_rule.get(q.rule, 0.0) + time.perf_counter() - t0
    res = score_answers(queries, submitted, corpus=corpus.id, answerer="reference")
    best, med = min(walls), statistics.median(walls)
    verdict = "ok" if med <= TARGET_S else "MISSED"
    print(f"{len(todo)} aggregation questions answered in {med:.2f} s median of {args.repeat} (best {best:.2f} s; "
          f"target <= {TARGET_S:.0f} s: {verdict}); {len(todo) / med:.0f} questions/s")
    print("time per rule: " + ", ".join(f"{r} {s:.2f} s" for r, s in sorted(per_rule.items())))
    grammar = {row.grammar: row for row in res.grammar_rows()}
    print(f"EM in grammar {grammar['in'].em:.4f} over {grammar['in'].questions}; out of grammar: "
          f"{grammar['out'].declined} of {grammar['out'].questions} declined")
    return 0


if __name__ == "__main__":
    sys.exit(main())
