"""turnbench.processes: a process is signalled only while its pid, start time and command line all match."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from turnbench.processes import Started, cmdline, is_running, start_ticks, stop_processes


def _sleeper() -> tuple[subprocess.Popen[bytes], Started]:
    proc = subprocess.Popen(["sleep", "30"])
    deadline = time.monotonic() + 10
    while cmdline(proc.pid) != ("sleep", "30") and time.monotonic() < deadline:  # until the exec has happened
        time.sleep(0.01)
    ticks = start_ticks(proc.pid)
    assert ticks is not None
    return proc, Started("sleep", proc.pid, ticks, signal.SIGTERM, ("sleep", "30"))


def test_a_reused_pid_or_another_command_line_is_left_alone_and_the_recorded_one_is_stopped() -> None:
    proc, me = _sleeper()
    try:
        assert cmdline(proc.pid) == ("sleep", "30") and me.is_ours()
        other_time = Started("sleep", proc.pid, me.ticks + 1, signal.SIGTERM, me.argv)
        other_command = Started("sleep", proc.pid, me.ticks, signal.SIGTERM, ("sleep", "31"))
        stop_processes([other_time, other_command], timeout=0.5)
        assert is_running(proc.pid, me.ticks)
        t0 = time.monotonic()
        stop_processes([me], timeout=5)
        assert not is_running(proc.pid) and time.monotonic() - t0 < 5
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("record, missing", [
    ({"name": "x", "pid": 42, "stop_signal": 15, "argv": ["x"]}, "ticks"),
    ({"name": "x", "pid": 42, "ticks": None, "stop_signal": 15, "argv": ["x"]}, "ticks"),
    ({"name": "x", "pid": 42, "ticks": 7, "stop_signal": 15}, "command line"),
    ({"name": "x", "pid": "42", "ticks": 7, "stop_signal": 15, "argv": ["x"]}, "pid"),
    ({"name": "x", "pid": 1, "ticks": 7, "stop_signal": True, "argv": ["x"]}, "stop_signal"),
])
def test_a_record_without_proof_of_identity_is_refused(record: dict[str, object], missing: str) -> None:
    with pytest.raises(ValueError, match=missing):
        Started.from_json(record)


def test_outlive_keeps_objects_only_in_a_process_whose_console_script_asked(monkeypatch):
    """A library caller's objects are freed as usual; the console script's are kept until the process ends."""
    import weakref

    from turnbench import processes as P

    class Held:
        pass

    monkeypatch.setattr(P, "_KEPT", None)
    a = Held()
    gone = weakref.ref(a)
    P.outlive(a)
    del a
    assert gone() is None
    P.keep_until_exit()
    b = Held()
    kept = weakref.ref(b)
    P.outlive(b)
    del b
    assert kept() is not None
