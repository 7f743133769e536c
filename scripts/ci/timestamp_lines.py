"""Prefix every line of stdin with the seconds since this program started (``%7.1f``), flushing as it goes.

.ci/run pipes the zero-install stage's `make bench` through it, so zero_install_split.py can read when each step
began. Standard library only: it runs on the bare interpreter of a machine with nothing installed.

usage: COMMAND | python3 scripts/ci/timestamp_lines.py
"""

from __future__ import annotations

import sys
import time


def main() -> int:
    t0 = time.monotonic()
    for line in sys.stdin:
        print(f"{time.monotonic() - t0:7.1f} {line}", end="", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
