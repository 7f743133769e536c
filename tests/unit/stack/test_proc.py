"""turnbench.stack._proc: a process is stopped only while its pid and start time both match."""

from __future__ import annotations

import subprocess
import time

from turnbench.stack._proc import is_running, start_ticks, stop_pids


def test_stop_leaves_a_reused_pid_alone_and_stops_the_recorded_one():
    proc = subprocess.Popen(["sleep", "30"])
    try:
        ticks = start_ticks(proc.pid)
        stop_pids([(proc.pid, ticks + 1, 15)], timeout=0.5)  # a different start time: someone else's process
        assert is_running(proc.pid, ticks)
        t0 = time.monotonic()
        stop_pids([(proc.pid, ticks, 15)], timeout=5)
        assert not is_running(proc.pid) and time.monotonic() - t0 < 5
    finally:
        proc.kill()
        proc.wait()
