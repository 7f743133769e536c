"""``make generator-contracts``: the generator keeps its own contracts at every size. Each (seed, meeting count) is
generated at the default settings into a scratch directory and validated with every check that needs no encoder
(``validate_corpus``: the generic and synthetic checks; ``--cosine`` adds the encoder's ``surface_cosine``, as
``turnbench validate`` runs it); a corpus that fails one is listed with the checks it fails, and the summary gives,
per meeting count, how many seeds passed and the slowest. Exit 0 when every corpus passes, 1 when one does not.

usage: python scripts/generator_contracts.py [--seeds 1-50] [--meetings 8,16,200] [--cosine]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path


def contract_failures(seed: int, meetings: int, cosine: bool = False) -> list[str]:
    """The checks that the corpus of ``seed`` at ``meetings`` (default settings otherwise) fails, each with its
    first problems; empty when it passes."""
    from turnbench.corpus.format import open_corpus
    from turnbench.generator.config import GeneratorConfig
    from turnbench.generator.generate import generate
    from turnbench.generator.validate import validate_corpus

    with tempfile.TemporaryDirectory(prefix="turnbench-contracts-") as scratch:
        out = Path(scratch) / "corpus"
        generate(GeneratorConfig(seed=seed, meetings=meetings), out)
        results = validate_corpus(out)
        if cosine:
            from turnbench.engines.surfaces import check_surface_cosine

            results.append(check_surface_cosine(open_corpus(out)))
        return [f"{r.name}: {r.detail}" for r in results if r.status == "fail"]


def _range(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1-50", help="seeds: a list of numbers and ranges (default 1-50)")
    ap.add_argument("--meetings", default="8,16,200", help="meeting counts (default 8,16,200)")
    ap.add_argument("--cosine", action="store_true", help="also run surface_cosine (loads the encoder; slow)")
    args = ap.parse_args(argv)
    seeds, sizes = _range(args.seeds), _range(args.meetings)
    failed = 0
    rows = []
    for meetings in sizes:
        passed, slowest = 0, 0.0
        for seed in seeds:
            t = time.perf_counter()
            problems = contract_failures(seed, meetings, args.cosine)
            slowest = max(slowest, time.perf_counter() - t)
            for p in problems:
                print(f"FAIL  seed {seed}, {meetings} meetings: {p[:300]}", flush=True)
            passed += not problems
        failed += len(seeds) - passed
        rows.append(f"{meetings:>6} meetings: {passed}/{len(seeds)} seeds pass validate (slowest {slowest:.1f} s)")
    print(*rows, sep="\n")
    print(f"{failed} corpus(es) fail their own validate" if failed else
          f"every corpus passes its own validate ({len(seeds) * len(sizes)} corpora)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
