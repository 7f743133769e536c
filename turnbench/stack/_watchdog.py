"""Stops a stack's servers when the process that opened it dies without tearing down (SIGKILL, out of memory),
so that no JVM, postgres or container outlives it.

Run as ``python -m turnbench.stack._watchdog <parent pid> <parent start ticks> <stack directory>``. It reads the
servers from ``<stack directory>/processes.json`` (embedded) and the container label from ``containers.json``
(docker) on every round, and exits quietly once that directory is gone (a normal teardown removes it) or, for a
stack meant to outlive its starter (``stack up``), once the starter has recorded it as up and handed it over
(``<stack directory>/handed-over``). Only processes still provably the ones started (pid, start time and
command line) are signalled.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from turnbench.processes import Started, is_running, start_ticks, stop_processes

PROCESSES_FILE = "processes.json"
HANDED_OVER = "handed-over"
MARKER = ".turnbench-stack.json"
CONTAINERS_FILE = "containers.json"


def _servers(root: Path) -> list[Started]:
    try:
        rows = json.loads((root / PROCESSES_FILE).read_text())
        return [Started.from_json(r) for r in rows]
    except (OSError, ValueError, TypeError, AttributeError):
        return []


def _remove_containers(root: Path) -> None:
    try:
        label = json.loads((root / CONTAINERS_FILE).read_text())["label"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    from turnbench.stack.containers import remove_labelled

    remove_labelled(str(label))


def launch(root: Path) -> subprocess.Popen[bytes]:
    """Start the watchdog of this process's stack directory ``root``, in its own session (a Ctrl-C is not its)."""
    return subprocess.Popen(
        [sys.executable, "-m", "turnbench.stack._watchdog", str(os.getpid()), str(start_ticks(os.getpid())), str(root)],
        stdin=subprocess.DEVNULL, start_new_session=True,
    )


def dismiss(watchdog: subprocess.Popen[bytes] | None) -> None:
    """End a watchdog whose stack was torn down normally (it has nothing left to guard)."""
    if watchdog is None:
        return
    watchdog.terminate()
    try:
        watchdog.wait(timeout=5)
    except subprocess.TimeoutExpired:
        watchdog.kill()
        watchdog.wait()


def main(argv: list[str]) -> int:
    parent, ticks, root = int(argv[0]), int(argv[1]), Path(argv[2])
    # Ctrl-C in the parent's terminal is the parent's to handle; the watchdog only acts on its death.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    servers: list[Started] = []
    while is_running(parent, ticks):
        if not root.exists() or (root / HANDED_OVER).exists():
            return 0
        servers = _servers(root) or servers
        time.sleep(0.5)
    if (root / HANDED_OVER).exists():
        return 0
    servers = _servers(root) or servers
    stop_processes(servers)
    _remove_containers(root)
    if (root / MARKER).is_file():  # the directory is one a stack of ours made
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
