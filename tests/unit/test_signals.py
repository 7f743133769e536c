"""turnbench.signals: SIGTERM and SIGHUP end a command through its ``finally`` blocks, wherever they land."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from turnbench.signals import terminating_raises


class _SignalledAsItGoes:
    """An object whose finaliser is where the signal lands: its handler runs inside ``__del__``, whose exception
    Python prints and drops."""

    def __init__(self, sig: int) -> None:
        self.sig = sig

    def __del__(self) -> None:
        os.kill(os.getpid(), self.sig)
        for _ in range(10_000):  # the handler runs here, inside the finaliser
            pass


@pytest.mark.parametrize("waiting", ["busy", "blocked in a call"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_landing_in_a_finaliser_still_ends_the_block(sig, waiting, capsys):
    """Dropped by the finaliser, the handler's SystemExit is raised again soon after, whether the main thread is
    busy or blocked in a call (the signal is sent to it again, which interrupts the call): the block ends with
    128 + the signal, within seconds, and nothing is printed as ignored; outside the block the hook is the one
    before."""
    hook = sys.unraisablehook
    reached = []
    with pytest.raises(SystemExit) as ended:
        with terminating_raises():
            _SignalledAsItGoes(sig)  # its last reference goes at once
            deadline = time.monotonic() + 10
            if waiting == "blocked in a call":
                time.sleep(10)
            while time.monotonic() < deadline:
                pass
            reached.append("the end")
    assert ended.value.code == 128 + sig and not reached and time.monotonic() < deadline - 5
    assert "Exception ignored" not in capsys.readouterr().err
    assert sys.unraisablehook is hook


def test_another_unraisable_exception_is_left_to_the_hook_before(monkeypatch):
    """Only the handler's own exit is raised again; any other exception a finaliser drops goes to the hook that was
    there, as before."""
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)

    class Broken:
        def __del__(self) -> None:
            raise ValueError("not a signal")

    with terminating_raises():
        Broken()
    assert [type(u.exc_value) for u in seen] == [ValueError]
