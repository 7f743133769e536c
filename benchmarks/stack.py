"""`make perf-stack`: how long `turnbench stack up` takes to a healthy stack (jars cached) and `stack down` takes.

Runs the real CLI three times in a private state directory, prints the median with the OpenSearch /
PostgreSQL split (each measured from its own launch; they start concurrently), and the `stack down` times.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 3


def _turnbench() -> list[str]:
    # the installed console script beside this interpreter: exactly what a user runs
    script = Path(sys.executable).with_name("turnbench")
    return [str(script)]


def main() -> int:
    ups, downs, os_s, pg_s = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="turnbench-bench-stack-") as state:
        env = {**os.environ, "TURNBENCH_STATE_DIR": state}
        for i in range(RUNS):
            t0 = time.monotonic()
            up = subprocess.run([*_turnbench(), "stack", "up", "--provider", "embedded"], env=env,
                                capture_output=True, text=True)
            ups.append(time.monotonic() - t0)
            if up.returncode != 0:
                print(up.stderr, file=sys.stderr)
                return up.returncode
            info = json.loads((Path(state) / "stack.json").read_text())
            timings = info["details"]["timings_s"]
            os_s.append(timings["opensearch_ready_s"])
            pg_s.append(timings["postgres_ready_s"])
            t0 = time.monotonic()
            down = subprocess.run([*_turnbench(), "stack", "down"], env=env, capture_output=True, text=True)
            downs.append(time.monotonic() - t0)
            if down.returncode != 0:
                print(down.stderr, file=sys.stderr)
                return down.returncode
            print(f"run {i + 1}: up {ups[-1]:.2f} s (OpenSearch {os_s[-1]:.2f} s, PostgreSQL {pg_s[-1]:.2f} s), "
                  f"down {downs[-1]:.2f} s")
    print(f"stack up to healthy, median of {RUNS}: {statistics.median(ups):.2f} s "
          f"(OpenSearch {statistics.median(os_s):.2f} s, PostgreSQL {statistics.median(pg_s):.2f} s, concurrent; "
          f"target <= 45 s)")
    print(f"stack down, median of {RUNS}: {statistics.median(downs):.2f} s (max {max(downs):.2f} s; target <= 10 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
