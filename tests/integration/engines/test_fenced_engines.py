"""Engine code runs fenced (turnbench.engines.fence): whatever a Python engine does — end the process, interrupt it,
fork it, leave a thread running, return a score no float holds — `turnbench bench` ends as turnbench decides: one
line and the right exit code, nothing written on a refusal, no process left, the stack's lock released.

Each case is a real `turnbench bench` process over fixtures/small, on the session's stack recorded in the test's own
state directory (so the bench holds the recorded stack's lock, as a user's does), with a tiny engine module written
into tmp_path.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from turnbench.processes import is_running

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "fixtures" / "small"
CLI = [sys.executable, "-c", "from turnbench.cli import main; main()"]

ENGINE = '''
import os, sys, threading, time

PIDS = {pids!r}


class E:
    name, version, config = "fenced", "1", {{}}

    def index(self, passages, context):
        self.ids = [p.id for p in passages]
        self.asked = 0
        {index}

    def search(self, questions, depth):
        self.asked += 1
        {search}
        return [[(p, 1.0 / (n + 1)) for n, p in enumerate(self.ids[:5])] for q in questions]


def engine():
    return E()
'''


@pytest.fixture
def recorded(stack, tmp_path):
    """A state directory recording the session's stack (as `stack up --provider external` does); a stack whose
    endpoints carry a password (the docker leg's) cannot be recorded, so its endpoints go in the environment."""
    from turnbench.stack.external import redact

    state = tmp_path / "state"
    env = {**os.environ, "TURNBENCH_STATE_DIR": str(state)}
    if redact(stack.opensearch_url) != stack.opensearch_url or redact(stack.postgres_dsn) != stack.postgres_dsn:
        return env | {"TURNBENCH_OPENSEARCH_URL": stack.opensearch_url, "TURNBENCH_POSTGRES_DSN": stack.postgres_dsn}
    done = subprocess.run([*CLI, "stack", "up", "--provider", "external", "--opensearch-url", stack.opensearch_url,
                           "--postgres-dsn", stack.postgres_dsn], capture_output=True, text=True, env=env,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return env


def _engine(tmp_path: Path, index: str = "pass", search: str = "pass") -> str:
    (tmp_path / "fenced.py").write_text(ENGINE.format(pids=str(tmp_path / "pids"), index=index, search=search))
    return f"{tmp_path / 'fenced.py'}:engine"


def _bench(env: dict[str, str], tmp_path: Path, engine: str, timeout: float = 240,
           cli: tuple[str, ...] = tuple(CLI)) -> subprocess.CompletedProcess:
    return subprocess.run([*cli, "bench", "--corpus", str(SMALL), "--engine", engine, "--answerer", "skip",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=tmp_path)


def _said(stderr: str) -> list[str]:
    """What a refusal printed, the provider and load progress notes aside."""
    return [x for x in stderr.strip().splitlines() if not x.startswith(("turnbench: stack provider", "load: "))]


def _lock_free(env: dict[str, str]) -> bool:
    fd = os.open(Path(env["TURNBENCH_STATE_DIR"]) / "stack.use", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


FORK = "pid = os.fork()\n        if pid == 0:\n            time.sleep(600)\n        open(PIDS, 'w').write(str(pid))"


@pytest.mark.parametrize(("index", "search", "said"), [
    ("pass", "raise SystemExit(0)", "engine fenced: search raised SystemExit: 0 (engine code may not end"),
    ("pass", "sys.exit()", "engine fenced: search raised SystemExit"),
    ("raise KeyboardInterrupt", "pass", "engine fenced: index raised KeyboardInterrupt"),
    ("pass", "raise GeneratorExit", "engine fenced: search raised GeneratorExit"),
    ("pass", "return [[(self.ids[0], 10 ** 400)] for q in questions]",
     "question q00001: hit 1 (m0001:00000) has score an integer of about 401 digits, beyond a float's range"),
    (FORK, "pass", "engine fenced: index forked turnbench's process (pid "),
    ("pass", "os.fork()", "engine fenced: search forked turnbench's process ("),
])
def test_engine_code_that_ends_interrupts_or_forks_the_bench_is_one_line_exit_2(recorded, tmp_path, index, search,
                                                                                 said):
    done = _bench(recorded, tmp_path, _engine(tmp_path, index, search))
    assert done.returncode == 2, done.stderr
    (line,) = _said(done.stderr)
    assert line.startswith("turnbench: EngineFailed: ") and said in line, line
    assert not (tmp_path / "out" / "fenced").exists()
    assert _lock_free(recorded)  # no fork holds the stack's lock
    if (tmp_path / "pids").exists():
        child = int((tmp_path / "pids").read_text())
        assert child > 0 and not is_running(child), f"the engine's fork {child} outlived the bench"


def _interruptible() -> None:
    # a runner started in the background of a shell without job control ignores SIGINT, and its children inherit
    # that: the bench under test starts with Ctrl-C's default, as from a terminal
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_real_signal_during_engine_code_ends_the_bench_as_a_signal_does(recorded, tmp_path):
    """SIGTERM and Ctrl-C raise SystemExit and KeyboardInterrupt inside the engine's code, as the engine's own would:
    the fence knows a signal arrived, so they end the bench as signals (143, 130), not as the engine's failure."""
    engine = _engine(tmp_path, search="open(PIDS, 'w').write('searching')\n        time.sleep(600)")
    for sig, code in ((signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, 130)):
        (tmp_path / "pids").unlink(missing_ok=True)
        # PYTHONFAULTHANDLER: a bench that does not end is made to say where it is (SIGABRT dumps every thread)
        proc = subprocess.Popen([*CLI, "bench", "--corpus", str(SMALL), "--engine", engine, "--answerer", "skip",
                                 "--out", str(tmp_path / "out")], stderr=subprocess.PIPE, text=True,
                                env={**recorded, "PYTHONFAULTHANDLER": "1"}, cwd=tmp_path,
                                preexec_fn=_interruptible)
        try:
            deadline = time.monotonic() + 120
            while not (tmp_path / "pids").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            searching = (tmp_path / "pids").exists()
            proc.send_signal(sig)
            try:
                _, err = proc.communicate(timeout=180)  # a loaded CI machine: ending is cleanup, not a search
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGABRT)
                _, err = proc.communicate(timeout=30)
                raise AssertionError(f"{sig.name} (engine searching: {searching}) did not end the bench:\n"
                                     f"{err}") from None
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == code, err
        assert "EngineFailed" not in err
        assert not (tmp_path / "out" / "fenced").exists() and _lock_free(recorded)


def test_a_thread_an_engine_leaves_is_named_and_the_process_still_exits_after_writing(recorded, tmp_path):
    engine = _engine(tmp_path, index="threading.Thread(target=time.sleep, args=(600,), name='sleeper').start()")
    t0 = time.monotonic()
    # the console script's way out (cli.entry: quick_exit), which `turnbench` takes
    done = _bench(recorded, tmp_path, engine, timeout=180,
                  cli=(sys.executable, "-c", "from turnbench.cli import entry; entry()"))
    assert done.returncode == 0, done.stderr
    assert "note: engine fenced left 1 thread(s) running (sleeper); turnbench does not wait for them" in done.stderr
    assert (tmp_path / "out" / "fenced" / "claim.sha256").is_file() and time.monotonic() - t0 < 170
    info = json.loads((tmp_path / "out" / "fenced" / "runinfo.json").read_text())
    assert info["search"]["notes"] == [
        "engine fenced left 1 thread(s) running (sleeper); turnbench does not wait for them"]


BIG = 1.7976931348623157e308


@pytest.mark.parametrize("scores", [(1e300, -1e300, 0.5), (BIG, -BIG, 0.0), (1e300, 1e300, 1e300)])
def test_huge_finite_scores_are_scored_like_any_other(recorded, tmp_path, scores):
    search = f"return [[(p, s) for p, s in zip(self.ids[:3], {scores!r})] for q in questions]"
    done = _bench(recorded, tmp_path, _engine(tmp_path, search=search))
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out" / "fenced"
    raw = (out / "run.raw.trec").read_text().splitlines()
    assert {float(x.split()[4]) for x in raw} == set(scores)
    ranked = [x.split()[2] for x in (out / "run.passages.trec").read_text().splitlines() if x.startswith("q00001 ")]
    best = sorted(range(3), key=lambda n: -scores[n])  # higher first; equal scores by rule 5 (meeting, index)
    assert ranked[0] in {f"m0001:0000{n}" for n in best if scores[n] == scores[best[0]]}


def test_the_repeat_check_takes_tied_hits_in_another_order_and_refuses_other_hits(recorded, tmp_path):
    # the 103 questions of fixtures/small, then the first 10 again: those get the same tied passages reversed
    tied = ("ids = self.ids[:5] if self.asked <= 103 else self.ids[4::-1]\n"
            "        return [[(p, 1.0) for p in ids] for q in questions]")
    done = _bench(recorded, tmp_path, _engine(tmp_path, search=tied))
    assert done.returncode == 0, done.stderr
    # another passage at the same score is another answer: refused
    other = ("ids = self.ids[:5] if self.asked <= 103 else self.ids[1:6]\n"
             "        return [[(p, 1.0) for p in ids] for q in questions]")
    (tmp_path / "b").mkdir()
    done = _bench(recorded, tmp_path / "b", _engine(tmp_path / "b", search=other))
    assert done.returncode == 3, done.stderr
    (line,) = _said(done.stderr)
    assert line.startswith("turnbench: NondeterministicRun: engine fenced: question q00001 asked twice")
