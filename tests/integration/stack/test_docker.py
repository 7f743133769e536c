"""The docker provider's life cycle against a real engine (the docker leg: TURNBENCH_TEST_PROVIDER=docker, with
TURNBENCH_OPENSEARCH_IMAGE / TURNBENCH_POSTGRES_IMAGE naming images the engine has): a failed start reports the
container's last lines and removes what it made; killing OpenSearch mid-load is a one-line refusal that leaves
nothing behind; SIGKILL of the owner leaves no container; `stack up | status | down` through compose removes
exactly what it made; the claim files are byte-identical to the embedded provider's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.integration.legs import only_on
from turnbench.cli import main
from turnbench.errors import StackStartError
from turnbench.stack import docker, images, open_stack
from turnbench.stack.net import free_port, http_json

pytestmark = [pytest.mark.integration, only_on("docker")]
ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "fixtures" / "small"


@pytest.fixture
def engine():
    import docker as sdk

    client = sdk.from_env(timeout=60)
    yield client
    client.close()


def _ours(engine) -> set[str]:
    """Every container any turnbench docker stack made (they all carry the stack label)."""
    return {c.id for c in engine.containers.list(all=True, filters={"label": docker.STACK_LABEL}, ignore_removed=True)}


def _wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_a_failed_start_reports_the_containers_last_lines_and_removes_both(engine, monkeypatch):
    before = _ours(engine)
    monkeypatch.setattr(docker, "OPENSEARCH_ENV", {**docker.OPENSEARCH_ENV, "bogus.setting": "x"})
    t0 = time.monotonic()
    with pytest.raises(StackStartError) as err:
        with open_stack("docker"):
            pytest.fail("the stack must not open")
    message = str(err.value)
    assert "\n" not in message and message.startswith("opensearch (")
    assert "exited with code 1 before it answered" in message
    assert any("unknown setting [bogus.setting]" in line for line in err.value.log_tail)
    assert time.monotonic() - t0 < 120  # the exit ends the wait: no timeout ran out
    assert _ours(engine) == before  # the PostgreSQL container that did start went too


def test_a_missing_image_is_refused_naming_it_and_make_images(engine):
    before = _ours(engine)
    with pytest.raises(StackStartError, match=r"^opensearch image turnbench-local/no-such:1 is not on this engine and "
                                              r"could not be pulled \(.*\); `make images` builds "):
        with open_stack("docker", opensearch_image="turnbench-local/no-such:1"):
            pytest.fail("the stack must not open")
    assert _ours(engine) == before


def test_killing_opensearch_mid_load_is_a_one_line_refusal_and_leaves_nothing_behind(engine, tmp_path):
    before = _ours(engine)
    script = Path(sys.executable).with_name("turnbench")
    proc = subprocess.Popen([str(script), "bench", "--corpus", str(SMALL), "--arm", "bm25", "--provider", "docker",
                             "--out", str(tmp_path / "results")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "TURNBENCH_STATE_DIR": str(tmp_path / "state")})
    try:
        def opensearch_container():
            new = _ours(engine) - before
            found = [c for c in map(engine.containers.get, new) if 9200 in {int(p.split("/")[0]) for p in
                                                                            c.attrs["Config"]["ExposedPorts"]}]
            return found[0] if found else None

        assert _wait_until(lambda: opensearch_container() is not None, 120)
        target = opensearch_container()

        def loading() -> bool:
            target.reload()
            ports = target.attrs["NetworkSettings"]["Ports"].get("9200/tcp") or []
            try:  # the load creates the index, then bulk-indexes into it
                return bool(ports) and "turnbench-passages" in http_json(
                    f"http://127.0.0.1:{ports[0]['HostPort']}/_aliases", timeout=2)
            except (OSError, ValueError):
                return False

        assert _wait_until(loading, 240), "the load never began"
        target.kill()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    last = err.strip().splitlines()[-1]
    assert proc.returncode == 3, err
    assert last.startswith("turnbench: StackStateError: OpenSearch at http://127.0.0.1:") and "does not answer" in last
    assert len(last) <= 330
    assert _wait_until(lambda: _ours(engine) == before, 10)
    assert not (tmp_path / "results" / "bm25").exists()


def test_sigkill_of_the_owner_leaves_no_container(engine):
    before = _ours(engine)
    script = textwrap.dedent(
        """
        import json, time
        from turnbench.stack import open_stack
        with open_stack("docker") as info:
            print(json.dumps(info.to_json()), flush=True)
            time.sleep(600)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        info = json.loads(proc.stdout.readline())
        assert set(info["details"]["containers"]) <= _ours(engine) - before
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert _wait_until(lambda: _ours(engine) == before, 60), "the watchdog did not remove the containers"


def test_cli_up_status_down_through_compose_removes_exactly_what_up_made(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))
    networks_before = {n.id for n in engine.networks.list()}
    ports = [str(free_port()), str(free_port())]
    runner = CliRunner()
    up = runner.invoke(main, ["stack", "up", "--provider", "docker", "--opensearch-port", ports[0],
                              "--postgres-port", ports[1], "--heap", "512m"], env={"TURNBENCH_VERBOSE": "1"})
    assert up.exit_code == 0, up.stderr
    recorded = json.loads(up.stdout)
    details = recorded["details"]
    try:
        assert "turnbench: stack provider docker: asked for" in up.stderr
        assert recorded["opensearch_url"] == f"http://127.0.0.1:{ports[0]}"
        assert len(details["containers"]) == 2 and len(details["networks"]) == 1
        chosen = images.chosen_images()
        assert {s: details["images"][s]["name"] for s in ("opensearch", "postgres")} == chosen
        assert all(details["images"][s]["id"].startswith("sha256:") for s in chosen)
        assert set(details["timings_s"]) == {"opensearch_healthy_s", "postgres_healthy_s"}
        for cid in details["containers"]:
            bindings = engine.containers.get(cid).attrs["NetworkSettings"]["Ports"]
            assert {b["HostIp"] for v in bindings.values() if v for b in v} == {"127.0.0.1"}
        status = runner.invoke(main, ["stack", "status", "--json"])
        assert status.exit_code == 0
        live = json.loads(status.stdout)
        assert live["provider"] == "docker" and live["opensearch_version"] == "2.19.6"
        from turnbench.stack import StackInfo

        assert StackInfo.from_json(live).runinfo()["images"] == details["images"]
        again = runner.invoke(main, ["stack", "up", "--provider", "docker"])
        assert again.exit_code == 3 and "already recorded" in again.stderr
    finally:
        down = runner.invoke(main, ["stack", "down"])
    assert down.exit_code == 0, down.stderr
    for cid in details["containers"]:
        with pytest.raises(Exception, match="No such container|404"):
            engine.containers.get(cid)
    assert {n.id for n in engine.networks.list()} == networks_before
    assert runner.invoke(main, ["stack", "status"]).exit_code == 1


def test_claim_files_are_byte_identical_to_the_embedded_providers(stack, tmp_path):
    """The session's docker stack (reached as an external one) and a fresh embedded stack give the same claim."""
    from turnbench.pipeline.bench import BenchOptions, bench
    from turnbench.results.directory import CLAIM_FILES, runinfo_notes

    on_docker = bench(SMALL, ["bm25"], tmp_path / "docker", BenchOptions(
        provider="external", stack_options={"opensearch_url": stack.opensearch_url,
                                            "postgres_dsn": stack.postgres_dsn}))[0].out_dir
    on_embedded = bench(SMALL, ["bm25"], tmp_path / "embedded", BenchOptions(provider="embedded"))[0].out_dir
    for name in (*CLAIM_FILES, "answers.md", "claim.sha256"):
        assert (on_docker / name).read_bytes() == (on_embedded / name).read_bytes(), name
    # what differs is said beside the claim, in runinfo.json
    assert any(n.startswith("provider differs: baseline embedded") for n in runinfo_notes(on_embedded, on_docker))
