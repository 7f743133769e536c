"""Signals that end a command end it through ``finally``: SIGTERM and SIGHUP become SystemExit, as SIGINT
becomes KeyboardInterrupt, so staged outputs are removed and started servers stopped however a run is ended
short of SIGKILL (which the stack's watchdog and the next run's stale-staging sweep answer)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

TERMINATING = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def terminating_raises() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise SystemExit(128 + signal) in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_exit(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, raise_exit) for sig in TERMINATING}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


@contextlib.contextmanager
def blocked() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP during a teardown so a second signal cannot leave it half done."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, *TERMINATING})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
