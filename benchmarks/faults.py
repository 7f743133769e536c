"""The fault-injection table: for each area, how many hostile or clumsy inputs turnbench was tried with and how many
it held (the right exit code, one line, no traceback, nothing left behind). ``make faults``.

``--python PATH`` runs every case against the turnbench installed for another interpreter — an older checkout's
venv — so the same table says what changed. The message wording is not scored here (the test suite checks it for
this checkout); only what a user or a CI job would act on.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=None, help="the interpreter whose turnbench to try (default: this one)")
    args = ap.parse_args(argv)
    if args.python:
        os.environ["TURNBENCH_FAULTS_PYTHON"] = args.python
    from tests.faults import test_faults as F

    table: dict[str, list[int]] = {}
    broke: list[str] = []
    for case in F.CASES:
        work = Path(tempfile.mkdtemp(prefix="turnbench-faults-"))
        try:
            os.environ["TURNBENCH_STATE_DIR"] = str(work / "state")
            args = case.args(work)
            before = {rel: (work / rel).read_bytes() for rel in case.kept}
            out = F.run(args, work, dict(case.env))
            lines = out.stderr.strip().splitlines()
            errors = [ln for ln in lines if ln.startswith("turnbench: ") and "Error" in ln]
            one_line = (not errors) if case.code == 0 else (len(lines) == 1 and len(lines[0]) <= 400)
            held = (out.code == case.code and one_line and case.held(out) and "Traceback" not in out.stderr
                    and not any((work / rel).exists() for rel in case.left)
                    and not any(text in out.stderr for text in case.absent)
                    and all((work / rel).read_bytes() == data for rel, data in before.items())
                    and all((work / a).read_bytes() == (work / b).read_bytes() for a, b in case.same)
                    and not list(work.rglob(".*.partial")))
        except Exception as exc:  # a case that cannot even be set up against this version counts as broken
            held, out = False, F.Outcome(-1, f"{type(exc).__name__}: {exc}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
        tried_held = table.setdefault(case.area, [0, 0])
        tried_held[0] += 1
        tried_held[1] += held
        if not held:
            broke.append(f"{case.area}: {case.name} -> exit {out.code}: {out.stderr.strip()[:160]!r}")
    print("| area | tried | held |")
    print("|---|---:|---:|")
    for area, (tried, held_n) in table.items():
        print(f"| {area} | {tried} | {held_n} |")
    total = [sum(v[0] for v in table.values()), sum(v[1] for v in table.values())]
    print(f"| **all** | {total[0]} | {total[1]} |")
    for line in broke:
        print("broke:", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
