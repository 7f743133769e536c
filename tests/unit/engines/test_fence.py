"""turnbench.engines.fence: engine code cannot end, interrupt or fork the process it runs in; a signal still can."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from turnbench.engines import fence
from turnbench.errors import BadInput, EngineFailed
from turnbench.processes import abandoned_alive, is_running
from turnbench.signals import terminating_raises


def _raise(exc: BaseException):
    def fn() -> None:
        raise exc
    return fn


@pytest.mark.parametrize("exc", [SystemExit(0), SystemExit("bye"), KeyboardInterrupt(), GeneratorExit(),
                                 type("Odd", (BaseException,), {})("odd"), ValueError("no")])
def test_anything_engine_code_raises_is_one_engine_failed(exc):
    with pytest.raises(EngineFailed, match=rf"^engine e: search raised {type(exc).__name__}"):
        fence.call("engine e", "search", _raise(exc))


def test_a_turnbench_error_passes_through_as_itself():
    with pytest.raises(BadInput, match="^mine$"):
        fence.call("engine e", "search", _raise(BadInput("mine")))


def test_a_real_ctrl_c_or_sigterm_during_engine_code_is_the_signal_not_the_engines_failure():
    def interrupted() -> None:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)

    with pytest.raises(KeyboardInterrupt):
        fence.call("engine e", "search", interrupted)

    def terminated() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)

    with terminating_raises(), pytest.raises(SystemExit) as caught:
        fence.call("engine e", "search", terminated)
    assert caught.value.code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handlers are given back


def test_a_fork_is_killed_and_refused_and_a_fork_that_already_ended_is_refused_too(tmp_path):
    def forks() -> None:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)

    before = fence.children(os.getpid())
    with pytest.raises(EngineFailed, match=r"index forked turnbench's process \(pid \d+: killed\)"):
        fence.call("engine e", "index", forks)
    assert not [c for c in fence.children(os.getpid()) - before if is_running(c)]

    def forks_and_returns() -> None:
        os.fork()  # the child comes back into the fence, which ends it there

    with pytest.raises(EngineFailed, match=r"forked turnbench's process"):
        fence.call("engine e", "index", forks_and_returns)
    assert fence.children(os.getpid()) - before == set()


def test_a_subprocess_of_another_program_is_the_engines_own():
    import subprocess

    for kw in ({}, {"preexec_fn": os.getpid}):  # a preexec_fn runs Python's fork hooks: still not a fork of ours
        proc = fence.call("engine e", "index", lambda kw=kw: subprocess.Popen(["sleep", "30"], **kw))
        try:
            assert proc.poll() is None
        finally:
            proc.kill()
            proc.wait()


def test_a_score_too_long_to_print_is_said_by_its_size():
    assert fence.shown(10 ** 5000) == "an integer of about 5001 digits"
    assert fence.shown("x" * 500).endswith("…") and len(fence.shown("x" * 500)) == 81


def test_threads_left_running_are_named_and_abandoned():
    before = fence.threads()
    stop = threading.Event()
    left = threading.Thread(target=stop.wait, name="left-behind")
    left.start()
    try:
        assert [t.name for t in fence.threads_left(before)] == ["left-behind"] and abandoned_alive()
    finally:
        stop.set()
        left.join()
    assert not abandoned_alive()
