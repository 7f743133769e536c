"""``make verify``'s checks. Two modes:

``--versions BASELINE_DIR...`` (before anything is benched): the byte-shaping libraries installed now (constraints.txt
names the tested ones) against the versions each baseline records (metrics.json's provenance.libraries): one line
per library that differs, naming it and both versions, and exit 3 (a refusal, as the README's exit codes) unless
``--allow-version-drift``; 0 otherwise.

``ARM BASELINE_DIR CANDIDATE_DIR FILE...`` (per arm, once benched): the library versions first (a difference is a
failure, exit 1, unless ``--allow-version-drift``, which compares the claim with the recorded versions set aside),
then its embeddings digests, then its claim files byte for byte against the baseline, then (when they differ) what
compare says. Exit 0 verified, 1 different, 3 not verifiable on this CPU.

usage: python scripts/verify_arm.py [--allow-version-drift] --versions BASELINE_DIR...
       python scripts/verify_arm.py [--allow-version-drift] ARM BASELINE_DIR CANDIDATE_DIR FILE...
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

from turnbench.errors import TurnbenchError
from turnbench.results import verify as V
from turnbench.versions import libraries

REFUSED = 3


def versions(baselines: list[str], allowed: bool) -> int:
    """Every baseline's recorded versions against the installed ones, before anything is benched: one line per
    difference, naming the baselines that share it."""
    now, found = libraries(), {}
    for baseline in baselines:
        try:
            recorded = V.recorded_libraries(Path(baseline))
        except TurnbenchError as exc:
            print(f"verify: {exc}", file=sys.stderr)
            return REFUSED
        for line in V.differences(recorded, now):
            found.setdefault(line, []).append(Path(baseline).name)
    for line, names in found.items():
        out = sys.stdout if allowed else sys.stderr
        print(f"verify: {', '.join(names)}: {line}; {V.consequence(allowed)}", file=out)
    return REFUSED if found and not allowed else 0


def main(argv: list[str]) -> int:
    allowed = V.ALLOW_DRIFT in argv
    argv = [a for a in argv if a != V.ALLOW_DRIFT]
    if argv[:1] == ["--versions"]:
        return versions(argv[1:], allowed)
    arm, baseline, candidate, *claimed = argv
    recorded = V.recorded_libraries(Path(baseline))
    drifted = V.version_lines(arm, recorded, V.recorded_libraries(Path(candidate)), allowed)
    if drifted:
        print(*drifted, sep="\n")
        if not allowed:
            return 1
    outcome, lines = V.verify_digests(arm, Path(baseline), Path(candidate))
    print(*lines, sep="\n")
    if outcome == V.NOT_HERE:
        return 3
    if outcome == V.DIFFERENT:
        return 1
    differ = False
    for name in claimed:
        a, b = Path(baseline) / name, Path(candidate) / name
        if a.is_file() and b.is_file() and a.read_bytes() == b.read_bytes():
            print(f"verify: {arm}: {name} byte-identical to {baseline}")
            continue
        if drifted and a.is_file() and b.is_file() and V.same_but_versions(name, a.read_bytes(), b.read_bytes()):
            print(f"verify: {arm}: {name} identical to {baseline} but for the recorded library versions")
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
