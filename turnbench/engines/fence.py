"""Engine code runs fenced (docs/engines.md "Fenced"): whatever a Python engine does inside one of its calls — the
factory, a property read, ``index``, ``search``, reading what ``search`` returned, ``close`` — ends as turnbench
decides, never as the engine's code does.

- Anything it raises, ``BaseException`` included (``SystemExit(0)``, ``GeneratorExit``, ``KeyboardInterrupt``), is
  one ``EngineFailed`` line (exit 2) — except a ``KeyboardInterrupt`` or ``SystemExit`` a signal raised while the
  call ran (Ctrl-C, SIGTERM, SIGHUP: ``turnbench.signals``), which ends the command as a signal does. Which one it
  was is known, not guessed: during the call each Python-level handler of those signals is wrapped by one that notes
  the signal's arrival before doing what it did. A turnbench error the engine raises passes through as itself.
- The process id is checked after every call: a forked child that comes back out of engine code ends there
  (``os._exit``, nothing flushed, no ``finally`` run), and the parent kills (SIGKILL) and reaps every child process
  the call left that still runs turnbench's own program (the same command line: a fork that did not exec), then
  refuses the run. So no fork outlives the bench or holds the stack's lock. A process the engine started with
  ``subprocess`` (another program) is its own business. A double fork (a daemon whose parent exited) is not seen.
- Threads: the non-daemon threads a run leaves running are named in a note, and the process exits after writing its
  results without waiting for them (``processes.abandon``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

from turnbench.errors import EngineFailed, TurnbenchError

T = TypeVar("T")
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def call(where: str, method: str, fn: Callable[[], T]) -> T:
    """``fn()`` (engine code), fenced: see the module docstring. ``where`` names the engine (``engine NAME``),
    ``method`` what was called (``search``)."""
    _count_forks()
    pid = os.getpid()
    before, forks = children(pid), _FORKS[0]
    signalled = False
    with _noting() as arrived:
        try:
            return fn()
        except TurnbenchError:
            raise
        except (KeyboardInterrupt, SystemExit) as exc:
            if os.getpid() == pid and arrived():
                signalled = True
                raise
            raise EngineFailed(f"{where}: {method} raised {said(exc)} (engine code may not end or interrupt "
                               "turnbench; --debug shows its traceback)") from exc
        except BaseException as exc:
            raise EngineFailed(f"{where}: {method} raised {said(exc)} (the engine's own error; --debug shows its "
                               "traceback)") from exc
        finally:
            if os.getpid() != pid:  # a child the engine forked, back in turnbench's code: it ends here, silently
                os._exit(70)
            forked = _kill_forks(pid, before, counted=_FORKS[0] != forks)
            if forked and not signalled:
                what = f"pid {', '.join(map(str, forked[:3]))}: killed"
                raise EngineFailed(f"{where}: {method} forked turnbench's process ({what}); an engine runs inside "
                                   "turnbench and may not fork it — start another program with subprocess instead")


def said(exc: BaseException) -> str:
    """``Type: first line of the message`` (at most 200 characters), whatever the exception's ``str`` does."""
    try:
        lines = str(exc).strip().splitlines()
    except Exception:
        lines = []
    return f"{type(exc).__name__}: {lines[0][:200]}" if lines else type(exc).__name__


def shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters; an integer too long to print is said by its size."""
    if isinstance(value, int) and value.bit_length() > 256:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    try:
        text = repr(value)
    except Exception:
        return f"a {type(value).__name__}"
    return text if len(text) <= limit else f"{text[:limit]}…"


def children(pid: int) -> set[int]:
    """The pids of ``pid``'s child processes (Linux /proc: each thread's ``children`` list, else a scan)."""
    tasks = f"/proc/{pid}/task"
    out: set[int] = set()
    try:
        for task in os.listdir(tasks):
            with open(f"{tasks}/{task}/children", "rb") as f:
                out.update(map(int, f.read().split()))
        return out
    except (OSError, ValueError):
        out.clear()
    for entry in Path("/proc").iterdir():  # no per-thread children lists: every process's parent, read once
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
                out.add(int(entry.name))
    return out


_FORKS = [0]  # os.fork calls made in this process (os.register_at_fork), turnbench's own included
_COUNTING: list[bool] = []


def _count_forks() -> None:
    if not _COUNTING:
        os.register_at_fork(after_in_parent=lambda: _FORKS.__setitem__(0, _FORKS[0] + 1))
        _COUNTING.append(True)


def _kill_forks(pid: int, before: set[int], *, counted: bool) -> list[int]:
    """Kill and reap the children that were not there before the call and still run this process's own command line
    (forks that did not exec: those made in C, past os.register_at_fork, too); when a fork was ``counted``, a new
    child with no command line (one ending, or ended: a zombie) as well. Their pids."""
    from turnbench.processes import cmdline

    new = children(pid) - before
    if not new:
        return []
    own = cmdline(pid)
    forks = []
    for child in sorted(new):
        argv = cmdline(child)
        if argv == own or (counted and not argv):
            forks.append(child)
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(child, 0)
    return forks


@contextlib.contextmanager
def _noting() -> Iterator[Callable[[], bool]]:
    """While the block runs, note whether SIGINT, SIGTERM or SIGHUP arrived (each Python-level handler wrapped, then
    restored); yields the question. Off the main thread no signal handler runs there, so nothing arrives."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    seen: list[int] = []
    previous: dict[int, Any] = {}
    for sig in SIGNALS:
        handler = signal.getsignal(sig)
        if callable(handler):
            def noted(signum: int, frame: FrameType | None, handler: Callable[..., Any] = handler) -> Any:
                seen.append(signum)
                return handler(signum, frame)

            previous[sig] = handler
            signal.signal(sig, noted)
    try:
        yield lambda: bool(seen)
    finally:
        for signum, kept in previous.items():
            signal.signal(signum, kept)


def threads() -> set[threading.Thread]:
    """The threads running now."""
    return set(threading.enumerate())


def threads_left(before: set[threading.Thread]) -> Sequence[threading.Thread]:
    """The non-daemon threads started since ``before`` that still run, in name order; handed to
    ``processes.abandon`` so the process exits without waiting for them."""
    from turnbench.processes import abandon

    left = sorted((t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon),
                  key=lambda t: t.name)
    abandon(left)
    return left
