"""Agreement benchmark (`make agreement`): does the synthetic corpus rank a broad family of arms as real meetings do?

Benches every arm file of a family (default ``arms/agreement/``) on the synthetic corpus and on each real corpus
given (QMSum, MeetingQA imports), one stack, one load per corpus, results under OUT/<corpus id>/<arm>/ (reused when
they are that corpus and those arm files). Then, per real corpus: Kendall's tau-b per class × measure with its
bootstrap interval, inert arms apart and the swaps both corpora can tell apart (turnbench.harness.agreement; tables
in OUT/agreement-<real id>.md and .json); and the regimes the family is built to show — nDCG@10 of the plain
lexical and the exact dense arm by terciles of the lookup questions' overlap with their evidence, and the strict
arms against the lexical one. Nothing here is a test; figures go to stdout.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TURNBENCH = [sys.executable, "-c", "from turnbench.cli import main; main()"]
HEADLINE = ("nDCG@10", "meeting:nDCG@10", "R@10", "MRR")
LEXICAL, DENSE = "lex-bm25", "dense-exact-cos"
STRICT = ("strict-and", "strict-msm75")


def arm_files(family: Path) -> list[Path]:
    files = sorted(family.glob("*.toml"))
    if not files:
        raise SystemExit(f"{family}: no arm files")
    return files


def _fresh(out: Path, corpus: Any, arms: Sequence[Path]) -> bool:
    """Whether OUT holds results of every arm file, as they are now, on this corpus."""
    from turnbench import canonical

    for f in arms:
        metrics = out / f.stem / "metrics.json"
        if not metrics.is_file():
            return False
        doc = json.loads(metrics.read_bytes())
        prov = doc["provenance"]
        arm = prov.get("arm", {}).get("arm", prov.get("arm", {}))
        if prov["corpus"]["sha256"] != corpus.sha256 or arm.get("file", {}).get("sha256") != \
                canonical.sha256_file(f):
            return False
    return True


def bench(corpus_dir: Path, arms: Sequence[Path], out: Path, provider: str) -> Path:
    from turnbench.corpus.format import open_corpus

    corpus = open_corpus(corpus_dir)
    where = out / corpus.id
    if _fresh(where, corpus, arms):
        print(f"{corpus.id}: results of {len(arms)} arms are fresh in {where}", flush=True)
        return where
    cmd = [*TURNBENCH, "bench", "--corpus", str(corpus_dir), "--out", str(where), "--answerer", "skip",
           "--provider", provider]
    for f in arms:
        cmd += ["--arm-file", str(f)]
    print(f"{corpus.id}: benching {len(arms)} arms into {where}", flush=True)
    subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    return where


def documents(results: Path, arms: Sequence[str]) -> list[dict[str, Any]]:
    from turnbench.resultsdir import read_metrics

    return [read_metrics(results / a) for a in arms]


def clusters(results: Path, arms: Sequence[str]) -> dict[str, str]:
    first: dict[str, str] = {}
    for line in (results / arms[0] / "qrels.meetings.txt").read_text(encoding="utf-8").splitlines():
        q, _, mid, grade = line.split()
        if grade != "0" and (q not in first or mid < first[q]):
            first[q] = mid
    return first


def agree(synthetic: Path, real: Path, arms: Sequence[str], out: Path, unit: str, resamples: int) -> None:
    from turnbench import canonical
    from turnbench.harness.agreement import agreement
    from turnbench.render.markdown import render_agreement_md as render_md

    docs = documents(synthetic, arms) + documents(real, arms)
    ids = [d["provenance"]["corpus"]["id"] for d in docs]
    groups = {ids[0]: clusters(synthetic, arms), ids[-1]: clusters(real, arms)} if unit == "meetings" else None
    cells = agreement(docs, resamples=resamples, unit=unit, clusters=groups)
    name = ids[-1]
    canonical.write_bytes_atomic(out / f"agreement-{name}.md", render_md(cells, unit=unit, resamples=resamples)
                                 .encode("utf-8"))
    canonical.write_json(out / f"agreement-{name}.json", {"unit": unit, "resamples": resamples,
                                                          "cells": [c.to_json() for c in cells]})
    print(f"\n## {ids[0]} against {name}: Kendall tau-b over {len(arms)} arms (inert arms apart), {unit} resampled")
    print(f"{'class':10s} {'measure':16s} {'tau-b':>7s} {'interval':>15s} {'all arms':>8s} {'swaps':>5s} "
          f"{'unres.':>6s}  inert")
    for c in cells:
        if c.measure not in HEADLINE:
            continue
        iv = "—" if c.interval is None else f"[{c.interval[0]:+.2f}, {c.interval[1]:+.2f}]"
        tb = "—" if c.tau_b is None else f"{c.tau_b:+.3f}"
        ta = "—" if c.tau_b_all is None else f"{c.tau_b_all:+.3f}"
        print(f"{c.cls:10s} {c.measure:16s} {tb:>7s} {iv:>15s} {ta:>8s} {len(c.swaps):5d} {c.unresolved:6d}  "
              f"{', '.join(c.inert) or '-'}")
    print(f"(every measure: {out / f'agreement-{name}.md'})")


def _per_query(results: Path, arm: str) -> dict[str, float]:
    doc = json.loads((results / arm / "metrics.json").read_bytes())
    return {r["query_id"]: r["values"]["nDCG@10"] for r in doc["retrieval"]["per_query"]
            if r["class"] == "lookup" and r["values"].get("nDCG@10") is not None}


def regimes(corpus_dir: Path, results: Path, arms: Sequence[str]) -> None:
    """nDCG@10 of the lexical and the dense arm by terciles of lookup overlap; the strict arms beside bm25."""
    from turnbench.corpus.format import open_corpus
    from turnbench.generator.measure import query_shares

    corpus = open_corpus(corpus_dir)
    if LEXICAL not in arms or DENSE not in arms:
        return
    lex, dense = _per_query(results, LEXICAL), _per_query(results, DENSE)
    shares = query_shares(corpus.iter_meetings(), [q for q in corpus.queries() if q.id in lex])
    ranked = sorted((s, q) for q, s in shares.items() if q in dense)
    n = len(ranked)
    print(f"\n{corpus.id}: lookup nDCG@10 by overlap tercile ({n} questions), {LEXICAL} / {DENSE} / dense − bm25")
    for k, label in enumerate(("low", "mid", "high")):
        part = ranked[k * n // 3:(k + 1) * n // 3]
        if not part:
            continue
        b = math.fsum(lex[q] for _, q in part) / len(part)
        d = math.fsum(dense[q] for _, q in part) / len(part)
        print(f"  {label:4s} share {part[0][0]:.2f}-{part[-1][0]:.2f}  n={len(part):4d}  {b:.3f} / {d:.3f} / "
              f"{d - b:+.3f}")
    rows = {a: json.loads((results / a / "metrics.json").read_bytes())["retrieval"]["rows"] for a in arms}

    def mean(arm: str, cls: str) -> float:
        return next(r["means"]["nDCG@10"] for r in rows[arm] if r["class"] == cls) or 0.0

    for s in STRICT:
        if s in rows:
            print(f"  {s}: nDCG@10 all {mean(s, 'all'):.3f} against {LEXICAL} {mean(LEXICAL, 'all'):.3f} "
                  f"({mean(s, 'all') / max(mean(LEXICAL, 'all'), 1e-9):.0%} of it)")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--synthetic", type=Path, required=True, help="the synthetic corpus (the default corpus)")
    ap.add_argument("--real", type=Path, action="append", default=[], help="a real corpus (repeatable)")
    ap.add_argument("--arms", type=Path, default=REPO / "arms" / "agreement", help="the family of arm files")
    ap.add_argument("--out", type=Path, default=REPO / "results" / "agreement")
    ap.add_argument("--provider", default="auto")
    ap.add_argument("--resample", choices=("queries", "meetings"), default="queries")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--results-only", action="store_true",
                    help="compute from results already in OUT (never bench)")
    args = ap.parse_args(argv)
    reals = [r for r in args.real if (r / "manifest.json").is_file()]
    if not reals:
        raise SystemExit("no real corpus present: import QMSum or MeetingQA first (make qmsum / make meetingqa)")
    files = arm_files(args.arms)
    names = [f.stem for f in files]
    dirs: Mapping[Path, Path]
    if args.results_only:
        from turnbench.corpus.format import open_corpus

        dirs = {c: args.out / open_corpus(c).id for c in (args.synthetic, *reals)}
    else:
        dirs = {c: bench(c, files, args.out, args.provider) for c in (args.synthetic, *reals)}
    for r in reals:
        agree(dirs[args.synthetic], dirs[r], names, args.out, args.resample, args.resamples)
    for c in (args.synthetic, *reals):
        regimes(c, dirs[c], names)


if __name__ == "__main__":
    main()
