"""Benchmark: a 3-seed bench against a one-seed bench (target: within 3.5x). ``make perf-seeds``.

Both run `turnbench bench --seeds` end to end on a fresh embedded stack, each corpus generated from its seed into
a fresh directory (generation, stack start, load, answers, run, score, report and write all timed), arm bm25.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _bench(turnbench: str, seeds: str, root: Path, provider: str) -> float:
    t = time.perf_counter()
    subprocess.run([turnbench, "bench", "--seeds", seeds, "--arm", "bm25", "--out", str(root / "out"),
                    "--corpora", str(root / "corpora"), "--provider", provider], check=True, capture_output=True)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="101,102,103")
    ap.add_argument("--provider", default="embedded")
    args = ap.parse_args(argv)
    turnbench = str(Path(sys.executable).parent / "turnbench")
    first = args.seeds.split(",")[0]
    with tempfile.TemporaryDirectory(prefix="turnbench-seeds-") as a, \
            tempfile.TemporaryDirectory(prefix="turnbench-seeds-") as b:
        one = _bench(turnbench, first, Path(a), args.provider)
        three = _bench(turnbench, args.seeds, Path(b), args.provider)
    print(f"bench --seeds {first}: {one:.1f} s")
    print(f"bench --seeds {args.seeds}: {three:.1f} s")
    print(f"ratio {three / one:.2f}x   [target <= 3.5x]")
    print(f"(load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}; cores: {os.cpu_count()})")


if __name__ == "__main__":
    main()
