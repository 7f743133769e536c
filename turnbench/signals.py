"""Signals that end a command end it through ``finally``: SIGTERM and SIGHUP become SystemExit, as SIGINT
becomes KeyboardInterrupt, so staged outputs are removed and started servers stopped however a run is ended
short of SIGKILL (which the stack's watchdog and the next run's stale-staging sweep answer)."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

TERMINATING = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def terminating_raises() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise SystemExit(128 + signal) in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_exit(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    # Python runs a signal's handler wherever the main thread is, a finaliser too (a pipe's or a generator's __del__
    # as its last reference goes, a weakref callback): an exception raised there is unraisable, printed and dropped,
    # and the command would run on to the end as if never signalled. Dropped, it is raised again: the signal is sent
    # once more, from another thread a moment later, so that its handler runs outside the finaliser (sent from this
    # hook, it would run inside the hook, and be dropped again).
    hook = sys.unraisablehook

    def raise_again(unraisable: Any) -> None:
        code = getattr(unraisable.exc_value, "code", None)
        if isinstance(unraisable.exc_value, SystemExit) and code in {128 + sig for sig in TERMINATING}:
            # sent from another thread, once this one has left the finaliser (if it lands in one again, it is
            # dropped and sent again); to the main thread, so a call it is blocked in is interrupted as by the first
            threading.Thread(target=_send_again, args=(threading.main_thread().ident, code - 128),
                             name="turnbench-signal-again", daemon=True).start()
            return
        hook(unraisable)

    previous = {sig: signal.signal(sig, raise_exit) for sig in TERMINATING}
    sys.unraisablehook = raise_again
    try:
        yield
    finally:
        sys.unraisablehook = hook
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def _send_again(thread: int | None, sig: int) -> None:
    time.sleep(AGAIN_AFTER_S)  # long enough for the main thread to leave the finaliser (it waits for this thread)
    if thread is not None:
        signal.pthread_kill(thread, sig)


AGAIN_AFTER_S = 0.01


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
