"""``make verify``'s check of one arm: its embeddings digests first, then its claim files byte for byte against the
baseline, then (when they differ) what compare says. Exit 0 verified, 1 different, 3 not verifiable on this CPU.

usage: python scripts/verify_arm.py ARM BASELINE_DIR CANDIDATE_DIR FILE...
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

from turnbench.results.verify import DIFFERENT, NOT_HERE, verify_digests


def main(argv: list[str]) -> int:
    arm, baseline, candidate, *claimed = argv
    outcome, lines = verify_digests(arm, Path(baseline), Path(candidate))
    print(*lines, sep="\n")
    if outcome == NOT_HERE:
        return 3
    if outcome == DIFFERENT:
        return 1
    differ = False
    for name in claimed:
        a, b = Path(baseline) / name, Path(candidate) / name
        if a.is_file() and b.is_file() and a.read_bytes() == b.read_bytes():
            print(f"verify: {arm}: {name} byte-identical to {baseline}")
            continue
        differ = True
        print(f"verify: {arm}: {name} DIFFERS from {a}")
        old = a.read_text(errors="replace").splitlines() if a.is_file() else []
        new = b.read_text(errors="replace").splitlines() if b.is_file() else []
        print(*list(difflib.unified_diff(old, new, str(a), str(b), lineterm=""))[:40], sep="\n")
    if differ:
        shown = subprocess.run([sys.executable, "-c", "from turnbench.cli import main; main()", "compare", baseline,
                                candidate],
                               capture_output=True, text=True)
        print(*(shown.stdout + shown.stderr).splitlines()[:40], sep="\n")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
