"""Exit 0 when turnbench's docker provider can run a detached stack here; otherwise exit 1 naming what is missing.

usage: .venv/bin/python scripts/ci/docker_usable.py      (.ci/run's docker-usable stage)
"""

from __future__ import annotations

import sys

from turnbench.stack.docker import DockerStack


def main() -> int:
    problem = DockerStack.problem(detached=True)
    if problem:
        print(f"the docker provider cannot run: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
