"""The stack's life cycle with real processes: failures leave nothing running, signals tear down, and
`turnbench stack up | status | down` records and stops exactly what it started. Each test starts its own
stack (not the session one) because each ends it in a different way."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.childproc import interruptible
from tests.integration.legs import only_on
from turnbench.cli import main
from turnbench.errors import StackStartError
from turnbench.processes import is_running
from turnbench.stack import open_stack, pins

pytestmark = [pytest.mark.integration, only_on("embedded")]


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")


@pytest.fixture
def workdir():
    """A parent for the stack's private directory that the PostgreSQL user can reach (pytest's tmp_path is 0700)."""
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="turnbench-test-"))
    path.chmod(0o711)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _gone(pids) -> bool:
    return all(not is_running(pid) for pid in pids)


def test_node_that_never_turns_healthy_leaves_nothing_running(workdir):
    with pytest.raises(StackStartError) as err:
        with open_stack("embedded", timeout=0.3, workdir=workdir):
            pytest.fail("the stack must not open")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("OpenSearch did not turn yellow within 0.3 s; log kept at ")
    assert len(err.value.started_pids) == 2  # the JVM and postgres were both running when it gave up
    assert _gone(err.value.started_pids)
    assert list(workdir.iterdir()) == []  # the private directory went with them
    Path(message.rsplit("log kept at ", 1)[1]).unlink()


def test_a_plugin_class_that_does_not_load_fails_loudly(workdir, monkeypatch):
    bogus = pins.OPENSEARCH_PLUGINS + (("nowhere", "org.opensearch.NoSuchPlugin"),)
    monkeypatch.setattr(pins, "OPENSEARCH_PLUGINS", bogus)
    with pytest.raises(StackStartError, match="OpenSearch did not start: a plugin class did not load") as err:
        with open_stack("embedded", workdir=workdir):
            pytest.fail("the stack must not open")
    assert "org.opensearch.NoSuchPlugin" in "\n".join(err.value.log_tail)
    assert _gone(err.value.started_pids)
    Path(str(err.value).rsplit("log kept at ", 1)[1]).unlink()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_signal_tears_the_stack_down(workdir, sig):
    """SIGTERM and SIGINT run the context manager's teardown; after SIGKILL the watchdog does it."""
    script = textwrap.dedent(
        """
        import json, sys, time
        from turnbench.stack import open_stack
        with open_stack("embedded", workdir=sys.argv[1]) as info:
            print(json.dumps(info.to_json()), flush=True)
            time.sleep(600)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(workdir)], stdout=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)
    try:
        info = json.loads(proc.stdout.readline())
        pids = [p["pid"] for p in info["details"]["processes"]]
        assert len(pids) == 2 and not _gone(pids)
        proc.send_signal(sig)
        proc.wait(timeout=30)
        # after SIGTERM/SIGINT the teardown has finished when the process has exited: no waiting
        deadline = time.monotonic() + (20 if sig == signal.SIGKILL else 0)
        while not (_gone(pids) and not any(workdir.iterdir())) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        proc.kill()
        proc.wait()
    assert _gone(pids)
    assert list(workdir.iterdir()) == []


def test_cli_up_status_down(tmp_path):
    runner = CliRunner()
    up = runner.invoke(main, ["stack", "up", "--provider", "embedded", "--heap", "512m"],
                       env={"TURNBENCH_VERBOSE": "1"})  # the provider note is a --verbose one
    assert up.exit_code == 0, up.stderr
    recorded = json.loads(up.stdout)
    pids = [p["pid"] for p in recorded["details"]["processes"]]
    try:
        assert "stack provider embedded: asked for" in up.stderr
        status = runner.invoke(main, ["stack", "status", "--json"])
        assert status.exit_code == 0
        live = json.loads(status.stdout)
        for key in ("provider", "opensearch_url", "postgres_dsn", "opensearch_version", "lucene_version",
                    "postgres_version"):
            assert live[key] == recorded[key]
        assert live["opensearch_version"] == pins.OPENSEARCH_VERSION
        assert recorded["details"]["opensearch"]["heap"] == "512m"

        again = runner.invoke(main, ["stack", "up", "--provider", "embedded"])
        assert again.exit_code == 3 and "already recorded" in again.stderr

        from turnbench.stack import current_stack

        assert current_stack().opensearch_url == recorded["opensearch_url"]
    finally:
        t0 = time.monotonic()
        down = runner.invoke(main, ["stack", "down"])
        elapsed = time.monotonic() - t0
    assert down.exit_code == 0
    assert _gone(pids)
    assert not Path(recorded["details"]["workdir"]).exists()
    assert elapsed < 10
    assert runner.invoke(main, ["stack", "status"]).exit_code == 1


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM, signal.SIGKILL])
def test_a_stack_up_killed_mid_start_leaves_nothing_stack_down_cannot_stop(tmp_path, sig):
    """Killed while the servers boot: SIGHUP and SIGTERM tear down at once; after SIGKILL the watchdog stops the
    servers and `stack down` clears the record it left, which names every process with its identity."""
    import os

    env = {**os.environ, "TURNBENCH_STATE_DIR": str(tmp_path / "state"),
           "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"}
    state_file = tmp_path / "state" / "stack.json"
    up = subprocess.Popen([sys.executable, "-c", "from turnbench.cli import main; main()", "stack", "up",
                           "--provider", "embedded"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    procs: list[dict] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(procs) < 2:
        try:
            recorded = json.loads(state_file.read_text())
            procs = recorded["details"].get("processes", [])
            assert recorded["status"] == "starting"
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    assert len(procs) == 2, "the start never recorded both servers"
    workdir = Path(recorded["details"]["workdir"])
    up.send_signal(sig)
    up.wait(timeout=60)
    pids = [p["pid"] for p in procs]
    deadline = time.monotonic() + (20 if sig == signal.SIGKILL else 0)
    while not _gone(pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _gone(pids)
    if sig == signal.SIGKILL:
        down = subprocess.run([sys.executable, "-c", "from turnbench.cli import main; main()", "stack", "down"],
                              env=env, capture_output=True, text=True, timeout=60)
        assert down.returncode == 0, down.stderr
    else:
        assert up.returncode == 128 + sig
    assert not state_file.exists()
    assert not workdir.exists()


def test_two_simultaneous_stack_ups_give_one_stack_and_a_load_waits_for_no_bench(tmp_path):
    """One state directory, two `stack up` at once: the lock taken before anything starts lets one through and
    refuses the other in one line (exit 3), so exactly one stack runs and `stack down` stops it. While a command
    holds the recorded stack for a bench, a `load` (which would swap the index under it) is refused."""
    import fcntl
    import os

    env = {**os.environ, "TURNBENCH_STATE_DIR": str(tmp_path / "state"),
           "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"}
    cmd = [sys.executable, "-c", "from turnbench.cli import main; main()", "stack", "up", "--provider", "embedded",
           "--heap", "512m"]
    ups = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [(p.wait(timeout=300), *p.communicate()) for p in ups]
    codes = sorted(code for code, _, _ in outs)
    try:
        assert codes == [0, 3], outs
        refused = next(err for code, _, err in outs if code == 3)
        assert len(refused.strip().splitlines()) == 1 and ("already recorded" in refused or "at work on" in refused)
        recorded = json.loads(next(out for code, out, _ in outs if code == 0))
        # a bench holding the recorded stack (as open_stack does for one): a load is refused, nothing started
        fd = os.open(tmp_path / "state" / "stack.use", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            load = subprocess.run([*cmd[:3], "load", "--corpus", str(Path(__file__).parents[3] / "fixtures/small")],
                                  env=env, capture_output=True, text=True, timeout=120)
        finally:
            os.close(fd)
        assert load.returncode == 3 and "is using the stack" in load.stderr, load.stderr
        assert len(load.stderr.strip().splitlines()) == 1
    finally:
        down = subprocess.run([*cmd[:3], "stack", "down"], env=env, capture_output=True, text=True, timeout=120)
    assert down.returncode == 0, down.stderr
    assert _gone([p["pid"] for p in recorded["details"]["processes"]])
