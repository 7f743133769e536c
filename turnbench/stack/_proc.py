"""Small process, port and HTTP helpers shared by the providers.

A process turnbench starts is named by its pid *and* its start time (``ticks``), so that a later stop can be
sure it is still the same process and never signals one that reused the pid.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench.errors import StackStartError
from turnbench.procs import is_running, start_ticks

LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Started:
    """A process a stack started, named so that a later ``stop`` can be sure it is still the same one."""

    name: str
    pid: int
    ticks: int | None
    stop_signal: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "pid": self.pid, "ticks": self.ticks, "stop_signal": int(self.stop_signal)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Started:
        return cls(str(d.get("name", "")), int(d["pid"]), d.get("ticks"), int(d["stop_signal"]))

    @property
    def stop_key(self) -> tuple[int, int | None, int]:
        return self.pid, self.ticks, self.stop_signal


# Popen objects of the servers this process started, so their exit codes can be read and they are reaped.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def spawn(name: str, cmd: list[str], log: Path, stop_signal: int, **kwargs: Any) -> Started:
    """Start a server with its output appended to ``log``, in a session of its own: a terminal's Ctrl-C then
    reaches only turnbench, which stops the servers in order, and a detached stack outlives its starter."""
    with open(log, "ab") as out:
        popen = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True, **kwargs)
    _CHILDREN[popen.pid] = popen
    return Started(name, popen.pid, start_ticks(popen.pid), stop_signal)


def exit_code(pid: int) -> int | None:
    """The exit code of a server this process started and that has exited; None otherwise."""
    popen = _CHILDREN.get(pid)
    if popen is None:
        return None
    try:
        return popen.wait(timeout=1)
    except subprocess.TimeoutExpired:
        return None


def forget(pids: list[int]) -> None:
    """Reap and forget servers that have been stopped."""
    for pid in pids:
        popen = _CHILDREN.pop(pid, None)
        if popen is not None:
            try:
                popen.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass


def free_port() -> int:
    """A port the kernel just handed out on loopback (a later bind can still race; the start then fails loudly)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def require_free_port(port: int, what: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((LOOPBACK, port))
        except OSError as exc:
            raise StackStartError(
                f"{what} port {port} on {LOOPBACK} is taken ({exc.strerror}); choose another port or leave it unset"
            ) from None
    return port


def stop_pids(procs: list[tuple[int, int | None, int]], timeout: float = 10.0) -> None:
    """Signal each (pid, start ticks, signal), wait up to ``timeout`` for all, then SIGKILL what is left.

    A pid whose start time no longer matches belongs to someone else now and is left alone.
    """
    mine = [(pid, ticks) for pid, ticks, sig in procs if is_running(pid, ticks)]
    for pid, ticks, sig in procs:
        if is_running(pid, ticks):
            _signal(pid, sig)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(is_running(p, t) for p, t in mine):
        _reap(mine)
        time.sleep(0.05)
    for pid, ticks in mine:
        if is_running(pid, ticks):
            _signal(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and any(is_running(p, t) for p, t in mine):
        _reap(mine)
        time.sleep(0.05)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _reap(procs: list[tuple[int, int | None]]) -> None:
    """Collect those of ``procs`` that are exited children of this process, so no zombie lingers."""
    for pid, _ in procs:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass  # not our child (a detached stack): its parent or init reaps it


def http_json(url: str, timeout: float = 5.0, method: str = "GET", body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8"))


def tail(path: Path, lines: int = 20) -> list[str]:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    return text.splitlines()[-lines:]
