"""Stops a stack's servers when the process that opened it dies without tearing down (SIGKILL, out of memory),
so that no JVM, postgres or container outlives it.

Run as ``python -m turnbench.stack._watchdog <parent pid> <parent start ticks> <stack directory>``. It reads the
embedded servers from ``<stack directory>/processes.json`` on every round, and the docker stack's container
label from ``containers.json``; it exits quietly once that directory is gone (a normal teardown removes it).
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
import time
from pathlib import Path

from turnbench.stack._proc import is_running, stop_pids

PROCESSES_FILE = "processes.json"
CONTAINERS_FILE = "containers.json"


def _servers(root: Path) -> list[tuple[int, int | None, int]]:
    try:
        rows = json.loads((root / PROCESSES_FILE).read_text())
    except (OSError, ValueError):
        return []
    return [(int(r["pid"]), r.get("ticks"), int(r["stop_signal"])) for r in rows]


def _remove_containers(root: Path) -> None:
    try:
        label = json.loads((root / CONTAINERS_FILE).read_text())["label"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    from turnbench.stack.docker import remove_labelled

    remove_labelled(str(label))


def main(argv: list[str]) -> int:
    parent, ticks, root = int(argv[0]), int(argv[1]), Path(argv[2])
    # Ctrl-C in the parent's terminal is the parent's to handle; the watchdog only acts on its death.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    servers: list[tuple[int, int | None, int]] = []
    while is_running(parent, ticks):
        if not root.exists():
            return 0
        servers = _servers(root) or servers
        time.sleep(0.5)
    servers = _servers(root) or servers
    stop_pids(servers)
    _remove_containers(root)
    if root.name.startswith("turnbench-stack-"):
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
