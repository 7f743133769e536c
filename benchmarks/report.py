"""Benchmark: `turnbench report` and `turnbench compare` on the default corpus (targets: report <= 3 s, compare
<= 2 s). ``make perf-report``.

Runs the two commands end to end in fresh processes (imports included, as a user meets them), best and median
of ``--repeat``; the report twice more to check it is byte-identical. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _timed(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _line(name: str, runs: list[tuple[float, float]], target: float) -> str:
    walls = sorted(w for w, _ in runs)
    cpus = sorted(c for _, c in runs)
    return (f"{name:<34} wall best {walls[0]:.2f} s, median {walls[len(walls) // 2]:.2f} s; "
            f"cpu best {cpus[0]:.2f} s   [target <= {target:g} s]")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    turnbench = str(Path(sys.executable).parent / "turnbench")
    with tempfile.TemporaryDirectory(prefix="turnbench-report-") as tmp:
        out = Path(tmp)
        report = [_timed([turnbench, "report", args.candidate, "--baseline", args.baseline, "--corpus", args.corpus,
                          "--out", str(out / f"r{i}.html")]) for i in range(args.repeat)]
        compare = [_timed([turnbench, "compare", args.baseline, args.candidate]) for _ in range(args.repeat)]
        with_page = [_timed([turnbench, "compare", args.baseline, args.candidate, "--out", str(out / f"c{i}.md"),
                             "--html", str(out / f"c{i}.html")]) for i in range(args.repeat)]
        pages = {(out / f"r{i}.html").read_bytes() for i in range(args.repeat)}
        size = (out / "r0.html").stat().st_size
    print(f"baseline {args.baseline} vs candidate {args.candidate}, corpus {args.corpus}")
    print(_line("report (comparison, texts)", report, 3))
    print(_line("compare (markdown)", compare, 2))
    print(_line("compare --out --html (markdown + html)", with_page, 3))
    print(f"report.html: {size:,} bytes; byte-identical across {args.repeat} runs: {len(pages) == 1}")
    print(f"(load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}; cores: {os.cpu_count()})")


if __name__ == "__main__":
    main()
