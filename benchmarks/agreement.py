"""Agreement benchmark (`make agreement`): does the synthetic corpus rank a broad family of arms as real meetings do?

Benches every arm file of a family (default ``arms/agreement/``) on the synthetic corpus and on each real corpus
given (QMSum, MeetingQA imports), one stack, one load per corpus, results under OUT/<corpus id>/<arm>/ (reused when
they are that corpus and those arm files). Then, per real corpus: Kendall's tau-b per class × measure with its
bootstrap interval, inert arms apart and the swaps both corpora can tell apart (turnbench.harness.agreement; tables
in OUT/agreement-<real id>.md and .json); the verdict table of the decisions file (default
``arms/decisions/decisions.toml``: pairs of arms a team decides between, named arms benched with the family) —
per decision, better / worse / no measurable difference on the synthetic and on the real corpus, and whether they
agree (turnbench.harness.decisions; OUT/decisions-<real id>.md and .json); and the regimes the family is built to
show — nDCG@10 of the plain lexical and the exact dense arm by terciles of the lookup questions' overlap with their
evidence, and the strict arms against the lexical one. Nothing here is a test; figures go to stdout.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
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


BUILTIN_ARMS = REPO / "turnbench" / "engines" / "builtin_arms"
DECISIONS_FILE = "decisions.toml"  # in arms/decisions/, beside the arm files it names


def arm_files(family: Path) -> list[Path]:
    files = sorted(f for f in family.glob("*.toml") if f.name != DECISIONS_FILE)
    if not files:
        raise SystemExit(f"{family}: no arm files")
    return files


def decision_arms(decisions: Sequence[Any], where: Path, family: Sequence[Path]) -> list[Path]:
    """The arm files the decisions name that the family does not hold: each found by its name in the decisions
    file's directory, else among the built-in arms (a name the family holds too must be the same file there)."""
    from turnbench.harness.decisions import arms_of

    have = {f.stem: f for f in family}
    out = []
    for name in arms_of(decisions):
        own = where.parent / f"{name}.toml"
        if name in have:
            if own.is_file() and own.read_bytes() != have[name].read_bytes():
                raise SystemExit(f"{where}: arm {name} is both {own} and {have[name]}, and they differ")
            continue
        if not own.is_file():
            own = BUILTIN_ARMS / f"{name}.toml"  # a built-in arm: another engine family's, say
        if not own.is_file():
            raise SystemExit(f"{where}: a decision names arm {name}, but neither {where.parent}, the family nor the "
                             "built-in arms hold a file of that name")
        out.append(own)
    return out


def _fresh(out: Path, corpus: Any, arm: Path) -> bool:
    """Whether OUT holds results of the arm file, as it is now, on this corpus."""
    from turnbench import canonical

    metrics = out / arm.stem / "metrics.json"
    if not metrics.is_file():
        return False
    doc = json.loads(metrics.read_bytes())
    prov = doc["provenance"]
    declared = prov.get("arm", {}).get("arm", prov.get("arm", {}))
    return bool(prov["corpus"]["sha256"] == corpus.sha256
                and declared.get("file", {}).get("sha256") == canonical.sha256_file(arm))


def bench(corpus_dir: Path, arms: Sequence[Path], out: Path, provider: str) -> Path:
    """Bench the arms whose results in OUT/<corpus id>/ are not fresh, in one bench (one load)."""
    from turnbench.corpus.format import open_corpus

    corpus = open_corpus(corpus_dir)
    where = out / corpus.id
    stale = [f for f in arms if not _fresh(where, corpus, f)]
    if not stale:
        print(f"{corpus.id}: results of {len(arms)} arms are fresh in {where}", flush=True)
        return where
    cmd = [*TURNBENCH, "bench", "--corpus", str(corpus_dir), "--out", str(where), "--answerer", "skip",
           "--provider", provider]
    for f in stale:
        cmd += ["--arm-file", str(f)]
    print(f"{corpus.id}: benching {len(stale)} of {len(arms)} arms into {where} (the others are fresh)", flush=True)
    for f in stale:
        # results of another corpus of the same id (an older generator's) or of another arm file: this benchmark's
        # own output, replaced, never read
        shutil.rmtree(where / f.stem, ignore_errors=True)
    if subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL).returncode != 0:
        raise SystemExit(f"{corpus.id}: the bench of its stale arms failed (its one line is above)")
    return where


def documents(results: Path, arms: Sequence[str]) -> list[dict[str, Any]]:
    from turnbench.results.directory import read_metrics

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
    from turnbench.render.comparisons import render_agreement_md as render_md

    docs = documents(synthetic, arms) + documents(real, arms)
    ids = [d.corpus_id for d in docs]
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


def verdicts(synthetic: Path, reals: Sequence[Path], decisions: Sequence[Any], out: Path, resamples: int) -> None:
    """Each decision's verdict on the synthetic corpus and on every real corpus, a table per real corpus."""
    from turnbench import canonical
    from turnbench.harness.decisions import arms_of, decision_tables
    from turnbench.render.comparisons import render_decisions_md

    names = arms_of(decisions)
    docs = documents(synthetic, names) + [d for r in reals for d in documents(r, names)]
    for t in decision_tables(docs, decisions, synthetic=docs[0].corpus_id, resamples=resamples):
        text = render_decisions_md(t, resamples=resamples)
        canonical.write_bytes_atomic(out / f"decisions-{t.real}.md", text.encode("utf-8"))
        canonical.write_json(out / f"decisions-{t.real}.json", {"resamples": resamples, **t.to_json()})
        print("\n" + text.split("\nWhat each decision asks:")[0].rstrip())
        print(f"(with what each decision asks: {out / f'decisions-{t.real}.md'})")


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
    ap.add_argument("--decisions", type=Path, default=REPO / "arms" / "decisions" / DECISIONS_FILE,
                    help="the decisions file (pairs of arms, named; its arms beside it or in the family)")
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
    family = arm_files(args.arms)
    names = [f.stem for f in family]
    from turnbench.errors import BadInput
    from turnbench.harness.decisions import read_decisions

    try:
        decisions = read_decisions(args.decisions)
    except BadInput as exc:
        raise SystemExit(str(exc)) from None
    files = family + decision_arms(decisions, args.decisions, family)
    dirs: Mapping[Path, Path]
    if args.results_only:
        from turnbench.corpus.format import open_corpus

        dirs = {c: args.out / open_corpus(c).id for c in (args.synthetic, *reals)}
    else:
        dirs = {c: bench(c, files, args.out, args.provider) for c in (args.synthetic, *reals)}
    for r in reals:
        agree(dirs[args.synthetic], dirs[r], names, args.out, args.resample, args.resamples)
    verdicts(dirs[args.synthetic], [dirs[r] for r in reals], decisions, args.out, args.resamples)
    for c in (args.synthetic, *reals):
        regimes(c, dirs[c], names)


if __name__ == "__main__":
    main()
