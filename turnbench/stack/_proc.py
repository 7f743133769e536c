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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench.errors import StackStartError
from turnbench.procs import cmdline, is_running, start_ticks

LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Started:
    """A process a stack started, named so that a later ``stop`` can be sure it is still the same one: its pid,
    its start time and its command line must all match before it is signalled."""

    name: str
    pid: int
    ticks: int
    stop_signal: int
    argv: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "pid": self.pid, "ticks": self.ticks, "stop_signal": int(self.stop_signal),
                "argv": list(self.argv)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Started:
        """A recorded process; ValueError unless every field that proves its identity is there and well typed."""
        numbers = []
        for key in ("pid", "ticks", "stop_signal"):
            value = d.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"process {d.get('name', '?')!r}: {key} is {value!r}, not a positive integer")
            numbers.append(value)
        argv = d.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError(f"process {d.get('name', '?')!r}: no command line recorded to prove it is ours")
        return cls(str(d.get("name", "")), numbers[0], numbers[1], numbers[2], tuple(argv))

    def is_ours(self) -> bool:
        """Still the process we started: the same pid, start time and command line, and not a zombie."""
        return is_running(self.pid, self.ticks) and cmdline(self.pid) == self.argv


# Popen objects of the servers this process started, so their exit codes can be read and they are reaped.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def spawn(name: str, cmd: list[str], log: Path, stop_signal: int, **kwargs: Any) -> Started:
    """Start a server with its output appended to ``log``, in a session of its own: a terminal's Ctrl-C then
    reaches only turnbench, which stops the servers in order, and a detached stack outlives its starter."""
    with open(log, "ab") as out:
        popen = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True, **kwargs)
    _CHILDREN[popen.pid] = popen
    ticks = start_ticks(popen.pid)
    if ticks is None:  # exited before it could be looked at: nothing to record or stop
        ticks = 1
    return Started(name, popen.pid, ticks, stop_signal, tuple(str(a) for a in cmd))


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


def stop_processes(procs: Sequence[Started], timeout: float = 10.0) -> None:
    """Signal each process still ours (pid, start time and command line all match), wait up to ``timeout`` for all,
    then SIGKILL what is left. A process that is not provably ours is never signalled."""
    mine = [p for p in procs if p.is_ours()]
    for p in mine:
        _signal(p.pid, p.stop_signal)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(is_running(p.pid, p.ticks) for p in mine):
        _reap(mine)
        time.sleep(0.05)
    for p in mine:
        if p.is_ours():
            _signal(p.pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and any(is_running(p.pid, p.ticks) for p in mine):
        _reap(mine)
        time.sleep(0.05)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _reap(procs: Sequence[Started]) -> None:
    """Collect those of ``procs`` that are exited children of this process, so no zombie lingers."""
    for p in procs:
        try:
            os.waitpid(p.pid, os.WNOHANG)
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
