"""turnbench.processes.Background: a function in a forked child, its value or its exception handed back, and no
child left however the parent leaves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from turnbench.errors import ResultsIntegrityError
from turnbench.processes import Background, is_running


def _pid_and_sum(a: int, b: int) -> tuple[int, int]:
    return os.getpid(), a + b


def _refuse(where: str) -> None:
    raise ResultsIntegrityError(f"{where}: query q03 MRR: metrics.json says 1.0")


def _sleep_then_pid(seconds: float, out: str) -> int:
    Path(out).write_text(str(os.getpid()))
    time.sleep(seconds)
    return os.getpid()


def _child_pid(marker: Path) -> int:
    """The pid the child wrote to ``marker``, once it has (waiting up to 20 s)."""
    for _ in range(400):
        if marker.is_file() and marker.read_text():
            break
        time.sleep(0.05)
    return int(marker.read_text())


def test_the_value_comes_back_from_another_process() -> None:
    with Background(_pid_and_sum, 2, 3) as job:
        pid, total = job.result()
    assert total == 5 and pid != os.getpid()


def test_the_exception_is_raised_in_the_parent_as_it_was_raised() -> None:
    with Background(_refuse, "results/b") as job, pytest.raises(ResultsIntegrityError,
                                                                 match="^results/b: query q03 MRR: metrics.json"):
        job.result()


def test_leaving_the_block_early_ends_the_child(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    with pytest.raises(KeyError), Background(_sleep_then_pid, 60, str(marker)):
        child = _child_pid(marker)
        assert is_running(child)
        raise KeyError("the caller failed")
    assert not is_running(child)


def test_a_parent_killed_outright_takes_the_child_with_it(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    program = ("import sys, time\n"
               "from tests.unit.test_processes_background import _sleep_then_pid\n"
               "from turnbench.processes import Background\n"
               "with Background(_sleep_then_pid, 60, sys.argv[1]) as job:\n"
               "    job.result()\n")
    parent = subprocess.Popen([sys.executable, "-c", program, str(marker)], cwd=Path(__file__).parents[2])
    try:
        child = _child_pid(marker)
        assert is_running(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        for _ in range(100):
            if not is_running(child):
                break
            time.sleep(0.05)
        assert not is_running(child), "the child outlived a parent killed with SIGKILL"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_what_the_parent_had_buffered_is_printed_once(tmp_path: Path) -> None:
    """A forked child flushes the standard streams when it exits; output the parent had buffered (stdout to a pipe
    is block-buffered) must not come out twice (multiprocessing flushes before it forks; a bare os.fork would not)."""
    program = ("import sys\n"
               "from tests.unit.test_processes_background import _pid_and_sum\n"
               "from turnbench.processes import Background\n"
               "print('before the fork')\n"
               "with Background(_pid_and_sum, 1, 2) as job:\n"
               "    job.result()\n"
               "print('after')\n")
    out = subprocess.run([sys.executable, "-c", program], cwd=Path(__file__).parents[2], capture_output=True,
                         text=True, check=True)
    assert out.stdout == "before the fork\nafter\n"


def test_a_child_ended_at_once_never_goes_on_as_its_parent() -> None:
    """The parent's SIGTERM handler raises SystemExit (turnbench.signals); a child signalled before it had set its
    own would have raised it in its copy of the parent's stack and gone on running the parent's code (a test
    session ran twice). Signals are held across the fork, so a child ended at once just ends."""
    program = ("import os, signal, sys, time\n"
               "from turnbench.processes import Background\n"
               "def stop(signum, frame):\n"
               "    raise SystemExit(128 + signum)\n"
               "signal.signal(signal.SIGTERM, stop)\n"
               "me = os.getpid()\n"
               "for _ in range(100):\n"
               "    try:\n"
               "        with Background(time.sleep, 30):\n"
               "            pass\n"
               "    except SystemExit:\n"
               "        pass\n"
               "    if os.getpid() != me:\n"
               "        print('a child went on as its parent', flush=True)\n"
               "        os._exit(0)\n"
               "print('done', flush=True)\n")
    try:
        out = subprocess.run([sys.executable, "-c", program], cwd=Path(__file__).parents[2], capture_output=True,
                             text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("children that went on as their parent kept the program running")
    assert (out.stdout, out.stderr, out.returncode) == ("done\n", "", 0), out.stdout + out.stderr


def _warm_then_add(receive, base: int, out: str) -> tuple[int, int]:
    """Does its own part first (writes its pid), then waits for the caller's value."""
    Path(out).write_text(str(os.getpid()))
    return os.getpid(), base + receive()


def test_an_inbox_hands_the_child_a_value_made_after_it_started(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    with Background(_warm_then_add, 40, str(marker), inbox=True) as job:
        child = _child_pid(marker)  # the child is running, and waiting, before the value exists
        assert is_running(child)
        job.send(2)
        pid, total = job.result()
    assert (pid, total) == (child, 42)


def test_a_caller_that_fails_before_sending_leaves_no_child_waiting(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    with pytest.raises(KeyError), Background(_warm_then_add, 1, str(marker), inbox=True):
        child = _child_pid(marker)
        raise KeyError("scoring failed")
    assert not is_running(child)


def test_without_fork_the_sent_value_reaches_the_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("multiprocessing.get_all_start_methods", lambda: ["spawn"])
    with Background(_warm_then_add, 5, str(tmp_path / "pid"), inbox=True) as job:
        job.send(7)
        pid, total = job.result()
    assert (pid, total) == (os.getpid(), 12)


def test_a_background_without_an_inbox_refuses_a_value() -> None:
    with Background(_pid_and_sum, 1, 2) as job, pytest.raises(TypeError, match="no inbox"):
        job.send(3)


def _nested(a: int, b: int) -> tuple[int, int, int]:
    with Background(_pid_and_sum, a, b) as inner:
        pid, total = inner.result()
    return os.getpid(), pid, total


def test_a_background_inside_a_background_child_runs_inline_there() -> None:
    # a daemonic child may start no process of its own: the inner function runs in the child itself
    with Background(_nested, 4, 5) as job:
        outer, inner, total = job.result()
    assert total == 9 and outer == inner != os.getpid()


def _niceness() -> tuple[int, bool]:
    import gc

    return os.nice(0), gc.isenabled()


def test_a_child_for_later_runs_at_a_lower_priority_and_the_paused_collector_is_inherited_and_restored() -> None:
    import gc

    from turnbench.processes import LATER_NICENESS, collector_paused

    mine = os.nice(0)
    with Background(_niceness) as now, Background(_niceness, later=True) as later:
        assert now.result() == (mine, True)
        assert later.result() == (min(mine + LATER_NICENESS, 19), True)
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with Background(_niceness) as child:
            assert child.result() == (mine, False)
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # as it was before the block
    finally:
        gc.enable()
