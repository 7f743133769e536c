"""The state file of a stack started in the background by ``turnbench stack up``.

It lives at ``$TURNBENCH_STATE_DIR/stack.json``, by default ``.turnbench/stack.json`` under the current
directory. It is written before anything starts (status ``starting``) and rewritten as each process exists, so a
``stack up`` killed at any point leaves a record that ``stack down`` can stop; once the stack is healthy it says
``up`` and holds the StackInfo. It names processes with their start time and command line and the private
directory with the stack's id, so ``stack down`` can prove what it stops and deletes is turnbench's own.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turnbench import canonical, settings
from turnbench.errors import StackStateError
from turnbench.stack.info import StackInfo

STATE_FILE = "stack.json"
STATE_FORMAT = "turnbench-stack-state/2"
STARTING, UP = "starting", "up"


@dataclass(frozen=True)
class Recorded:
    """A stack ``stack up`` started: ``details`` are what ``stack down`` needs (processes, directory, containers),
    ``info`` its endpoints and versions once it is up."""

    status: str  # STARTING | UP
    provider: str
    details: Mapping[str, Any] = field(default_factory=dict)
    info: StackInfo | None = None

    def to_json(self) -> dict[str, Any]:
        return {"format": STATE_FORMAT, "status": self.status, "provider": self.provider,
                "details": dict(self.details), "info": self.info.to_json() if self.info else None}


def state_dir() -> Path:
    return settings.state_dir()


def state_path() -> Path:
    return state_dir() / STATE_FILE


def read_state() -> Recorded | None:
    """The recorded stack; StackStateError (left in place) when the file cannot be what turnbench wrote."""
    path = state_path()
    if not path.exists():
        return None
    try:
        raw = canonical.parse_json(path.read_bytes().decode("utf-8"))
        if not isinstance(raw, dict) or raw.get("format") != STATE_FORMAT:
            raise ValueError(f"format is not {STATE_FORMAT}")
        status, provider, details = raw["status"], raw["provider"], raw["details"]
        if status not in (STARTING, UP) or not isinstance(provider, str) or not isinstance(details, dict):
            raise ValueError("status, provider or details are not what turnbench writes")
        info = StackInfo.from_json(raw["info"]) if raw.get("info") is not None else None
        if status == UP and info is None:
            raise ValueError("a stack recorded as up has no endpoints")
        return Recorded(status, provider, details, info)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StackStateError(f"the stack state file {path} is not one turnbench wrote ({exc}); it is left alone: "
                              "stop the stack by hand and remove the file") from None


def write_state(recorded: Recorded) -> Path:
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    canonical.write_json(path, recorded.to_json())
    return path


def clear_state() -> None:
    try:
        state_path().unlink()
    except FileNotFoundError:
        pass


LIFECYCLE_LOCK = "stack.lock"
USE_LOCK = "stack.use"


@contextlib.contextmanager
def _flock(name: str, *, exclusive: bool, busy: str) -> Iterator[None]:
    """Hold an advisory lock on ``state_dir()/name`` for the block; StackStateError(``busy``) when another process
    holds it incompatibly. The kernel releases it when the holder exits, however it exits (SIGKILL included)."""
    import fcntl

    directory = state_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / name, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StackStateError(f"{directory}: cannot keep the stack's lock there ({exc.strerror})") from None
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StackStateError(busy) from None
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def lifecycle_lock() -> contextlib.AbstractContextManager[None]:
    """One ``stack up`` or ``stack down`` at a time per state directory: taken before anything starts, held until
    the state is written."""
    return _flock(LIFECYCLE_LOCK, exclusive=True,
                  busy=f"another `turnbench stack up` or `stack down` is at work on {state_path()}; wait for it")


def use_lock(*, writes: bool) -> contextlib.AbstractContextManager[None]:
    """Held while a command uses the recorded stack: ``writes`` (a load, a bench: they replace the index) alone;
    reads (a run, an answer) together, but never beside a write, so no index is swapped under a running bench."""
    busy = (f"another turnbench command is using the stack recorded in {state_path()}, and a load or bench replaces "
            "its index: run this one when that one is done" if writes else
            f"a load or bench is replacing the index of the stack recorded in {state_path()}: run this when it is done")
    return _flock(USE_LOCK, exclusive=writes, busy=busy)
