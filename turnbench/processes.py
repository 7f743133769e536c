"""Processes: which process is which, and starting and stopping the servers turnbench runs.

A pid names a process only together with its start time, read from /proc: after a process exits its pid can be
reused by an unrelated one, so turnbench records a process it starts as (pid, start ticks, command line) and
treats a pid as its own only while all three match: a stop never signals a process that reused the pid. And
``Background``: one function run in a forked child that never outlives its caller.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, TypeVar

from turnbench.errors import TurnbenchError


def start_ticks(pid: int) -> int | None:
    """The process start time in clock ticks since boot; None when no such process exists."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    # comm (field 2) may contain spaces and parentheses: split after the last ')'
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[19])


def is_running(pid: int, ticks: int | None = None) -> bool:
    """True while the process exists, is not a zombie, and (when given) started at ``ticks``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return False
    rest = stat[stat.rindex(")") + 2:].split()
    if rest[0] in ("Z", "X"):
        return False
    return ticks is None or int(rest[19]) == ticks


def cmdline(pid: int) -> tuple[str, ...] | None:
    """The process's argument vector; None when it cannot be read (gone, or not ours to read)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return tuple(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)



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


def tail(path: Path, lines: int = 20) -> list[str]:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    return text.splitlines()[-lines:]


# -- what lives as long as the process ------------------------------------------------------------------------
# The console script ends its process without freeing what it holds object by object (``cli.base.quick_exit``), but
# what a command's functions hold in their locals is still freed, one object at a time, as each returns: a score of
# 2,000 meetings spent 0.2 s so after its last file was written. Such objects are handed to the process instead
# (``outlive``), where the console script asked for it (``keep_until_exit``); in any other process (a library
# caller, the tests) ``outlive`` does nothing and they are freed as usual.

_KEPT: list[Any] | None = None


def keep_until_exit() -> None:
    """From now on, what is handed to ``outlive`` is kept until the process ends (the console script only)."""
    global _KEPT
    if _KEPT is None:
        _KEPT = []


def outlive(*objects: Any) -> None:
    """Keep ``objects`` until the process ends, when ``keep_until_exit`` was called; else nothing."""
    if _KEPT is not None:
        _KEPT.extend(objects)


_ABANDONED: set[Any] = set()


def abandon(threads: Sequence[Any]) -> None:
    """Threads the process does not wait for when it exits (``cli.base.quick_exit``): those a Python engine left
    running (turnbench.engines.fence), reported in a note; they end with the process."""
    _ABANDONED.update(threads)


def abandoned_alive() -> bool:
    """Whether a thread handed to ``abandon`` still runs."""
    return any(t.is_alive() for t in _ABANDONED)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the block, as it was after. Scoring builds millions of records that hold no
    cycles and live until it ends, and every automatic collection walks those made since the last (with the console
    script's raised thresholds that was still about a twelfth of a 2,000-meeting score's time); forked children
    inherit the setting. What little cyclic garbage the block makes (a caught exception's frames) waits for the
    next collection after it. In the console script's process (``keep_until_exit``), which keeps what a command
    made until it ends anyway, what exists at the end of the block is frozen first: the collection that would
    follow it would walk all of it to free nothing."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _KEPT is not None:
            gc.freeze()
        if was:
            gc.enable()


# -- a function in a forked child ----------------------------------------------------------------------------
# One function run in a forked child while the caller goes on, its result (or its exception) handed back.
#
# ``compare`` re-derives both sides' claims this way while it computes the statistics from them: the two are
# independent until the end, when nothing is written unless the re-derivation agreed. A child that outlives its
# parent would be a process left behind, so it asks the kernel to end it when the parent dies (even by SIGKILL), and
# the parent ends it itself on every way out of the block. Where ``fork`` is not available, or in a background child
# itself, the function simply runs when its result is asked for.

T = TypeVar("T")
_PR_SET_PDEATHSIG = 1
_HELD = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


# A child whose result is wanted only at the end (``later=True``) runs this much nicer than its parent: where every
# core is busy it takes what the others leave, and the children the parent waits for sooner finish sooner.
LATER_NICENESS = 10

NOT_YET = object()  # what a child's ``receive(wait=False)`` gives before the caller has sent anything


class Background(Generic[T]):
    """``with Background(fn, *args) as job: ...; value = job.result()``: ``fn(*args)`` runs in a forked child from
    the ``with`` on; ``result`` waits for it and returns its value or raises its exception. Leaving the block ends
    the child if it is still running.

    With ``inbox=True`` the child runs ``fn(receive, *args)``: it can do what needs nothing from the caller (imports,
    reading) while the caller works, then ``receive()`` waits for the one value the caller hands over with
    ``send`` (``receive(wait=False)`` looks without waiting: ``NOT_YET`` until it has come). What is sent is
    pickled; what the child had at the fork it has for nothing. With ``later=True`` the child runs at a lower priority
    (``LATER_NICENESS``): for work whose result is wanted only at the end, so that it does not slow what is wanted
    sooner."""

    def __init__(self, fn: Callable[..., T], *args: Any, inbox: bool = False, later: bool = False) -> None:
        self._fn, self._args, self._inbox, self._later = fn, args, inbox, later
        self._proc: Any = None
        self._pipe: Any = None
        self._outbox: Any = None
        self._sent: list[Any] = []  # where fork is not available: handed to ``fn`` when it runs in ``result``

    def __enter__(self) -> Background[T]:
        import multiprocessing  # here, not at the top: a command that forks nothing never imports it

        if "fork" not in multiprocessing.get_all_start_methods() or multiprocessing.current_process().daemon:
            return self  # no fork, or already in a background child (which may have none of its own): run inline
        ctx = multiprocessing.get_context("fork")
        reader, writer = ctx.Pipe(duplex=False)
        inbox = ctx.Pipe(duplex=False) if self._inbox else None
        self._proc = ctx.Process(target=_child, args=(self._fn, self._args, writer, os.getpid(), inbox, self._later),
                                 daemon=True, name="turnbench-background")
        start_worker(self._proc)
        writer.close()  # the child's end: closed here, so the child's death reads as end-of-file
        self._pipe = reader
        if inbox is not None:
            inbox[0].close()
            self._outbox = inbox[1]
        return self

    def send(self, value: Any) -> None:
        """Hand ``value`` to the child's ``receive()`` (``inbox=True`` only; once)."""
        if not self._inbox:
            raise TypeError("this Background has no inbox")
        if self._proc is None:
            self._sent.append(value)
            return
        try:
            self._outbox.send(value)
        except (BrokenPipeError, EOFError):
            pass  # the child is gone: ``result`` says so
        finally:
            self._outbox.close()

    def ready(self) -> bool:
        """Whether ``result`` would return without waiting (the child is done, or it runs inline when asked)."""
        return self._proc is None or self._pipe.poll(0)

    def result(self) -> T:
        if self._proc is None:
            if self._inbox:
                return self._fn(lambda wait=True: self._sent.pop(), *self._args)
            return self._fn(*self._args)
        try:
            kind, value = self._pipe.recv()
        except EOFError:
            raise TurnbenchError("a background worker died (killed, or out of memory); nothing was written") from None
        if kind == "error":
            raise value
        return value

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        end_workers([proc])
        self._pipe.close()
        if self._outbox is not None:
            self._outbox.close()


def _child(fn: Callable[..., Any], args: tuple[Any, ...], out: Any, parent: int, inbox: Any = None,
           later: bool = False) -> None:
    worker_signals()
    _die_with(parent)
    if later:
        with contextlib.suppress(OSError):
            os.nice(LATER_NICENESS)
    if inbox is None:
        send_outcome(out, lambda: out.send(("ok", fn(*args))), "a background worker")
        return
    reader, writer = inbox
    writer.close()  # the caller's end, inherited: closed, so a caller that ends without sending reads as end-of-file

    def receive(wait: bool = True) -> Any:
        """The value handed over; with ``wait=False``, ``NOT_YET`` when it has not come yet."""
        try:
            if not wait and not reader.poll(0):
                return NOT_YET
            return reader.recv()
        except EOFError:
            raise TurnbenchError("the caller ended before handing its work over") from None

    send_outcome(out, lambda: out.send(("ok", fn(receive, *args))), "a background worker")


# -- what every forked worker does (Background's child, the generator's render workers) ---------------------------

def start_worker(proc: Any) -> None:
    """``proc.start()`` with SIGINT, SIGTERM and SIGHUP held across the fork: a signal reaching the child before
    it has set its own handlers (``worker_signals``) would run the parent's (SIGTERM raising SystemExit) in the
    child's copy of the parent's stack, which would then go on as the parent."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        proc.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def worker_signals() -> None:
    """In a worker: Ctrl-C and SIGHUP are ignored (the parent decides, and ends it with SIGTERM), SIGTERM ends it
    (the parent's SystemExit handler is not for it); only then are the signals held across the fork let in."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)


def send_outcome(out: Any, work: Callable[[], None], who: str) -> None:
    """Run ``work`` (which sends its results on ``out``); an exception it raises is sent as ``("error", exc)``,
    for the parent to raise as if it had done the work itself; ``out`` is closed either way."""
    try:
        work()
    except Exception as exc:
        try:
            out.send(("error", exc))
        except Exception:  # an exception that does not pickle: its name and message
            out.send(("error", TurnbenchError(f"{who} failed: {type(exc).__name__}: {exc}")))
    finally:
        out.close()


def end_workers(procs: Sequence[Any]) -> None:
    """SIGTERM every worker still running, then wait; one still there after 5 s is killed."""
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=5)
        if proc.is_alive():
            proc.kill()
            proc.join()


def _die_with(parent: int) -> None:
    """SIGKILL this process when its parent dies (Linux); if the parent is already gone, exit now."""
    import ctypes

    try:
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the parent's __exit__ still ends the child on every way out but SIGKILL
    if os.getppid() != parent:
        os._exit(1)
