"""turnbench.stack.docker and .compose without an engine: what runs, where it is reached, what is refused, and
that the compose file and the image build script say what the pins say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from turnbench.errors import BadInput, StackStartError
from turnbench.stack import compose, docker, images, pins
from turnbench.stack.registry import choose

REPO = Path(__file__).resolve().parents[3]
COMPOSE = (REPO / "compose" / "docker-compose.yml").read_text()
BUILD = (REPO / "compose" / "images" / "build.sh").read_text()


def test_docker_provider_without_engine_is_a_clear_start_error(tmp_path):
    expected = (r"^the docker provider cannot run here: no Docker engine answers: \S+/no-docker.sock does not exist "
                r"\(DOCKER_HOST names the engine\) \(or use --provider embedded\)$")
    with pytest.raises(StackStartError, match=expected):
        docker.DockerStack().start()


def test_docker_plan_uses_the_pinned_images_with_security_off_and_the_embedded_collation():
    plan = docker.container_plan(heap="768m")
    assert plan["opensearch"]["image"] == "opensearchproject/opensearch:2.19.6"
    assert plan["postgres"]["image"] == "postgres:15"
    env = plan["opensearch"]["env"]
    assert env["DISABLE_SECURITY_PLUGIN"] == "true"
    assert env["discovery.type"] == "single-node"
    assert env["OPENSEARCH_JAVA_OPTS"] == "-Xms768m -Xmx768m"
    assert plan["postgres"]["env"]["POSTGRES_DB"] == "turnbench"
    assert plan["postgres"]["env"]["POSTGRES_INITDB_ARGS"] == "--encoding=UTF8 --locale=C"


def test_images_come_from_the_option_else_the_environment_else_the_pins(monkeypatch):
    assert images.chosen_images() == {"opensearch": pins.OPENSEARCH_IMAGE, "postgres": pins.POSTGRES_IMAGE}
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_IMAGE", pins.LOCAL_OPENSEARCH_IMAGE)
    monkeypatch.setenv("TURNBENCH_POSTGRES_IMAGE", pins.LOCAL_POSTGRES_IMAGE)
    assert images.chosen_images() == {"opensearch": "turnbench-local/opensearch:2.19.6",
                                      "postgres": "turnbench-local/postgres:15"}
    given = images.chosen_images(postgres_image="registry.example:5000/team/pg:15.8@sha256:" + "a" * 64)
    assert given["postgres"].startswith("registry.example:5000/") and given["opensearch"].startswith("turnbench-local")
    assert docker.DockerStack(opensearch_image="sha256:" + "0" * 64).plan["opensearch"]["image"] == "sha256:" + "0" * 64


@pytest.mark.parametrize("bad", ["", " ", "Opensearch:2", "a b", "x" * 300, "image:tag:tag", "-rm", "$(reboot)",
                                 "opensearch@sha256:abc", "a/", "/a", "a:", "ünïcode"])
def test_a_bad_image_reference_is_bad_input_naming_where_it_came_from(bad, monkeypatch):
    with pytest.raises(BadInput, match=r"^--opensearch-image: .* is not a Docker image reference"):
        docker.DockerStack(opensearch_image=bad)
    if bad:
        monkeypatch.setenv("TURNBENCH_POSTGRES_IMAGE", bad)
        with pytest.raises(BadInput, match=r"^TURNBENCH_POSTGRES_IMAGE: .* is not a Docker image reference"):
            docker.DockerStack()


@pytest.mark.parametrize("heap", ["1", "1t", "-1g", "1g;rm", ""])
def test_a_bad_heap_is_bad_input(heap, monkeypatch):
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_HEAP", "1g")
    with pytest.raises(BadInput, match="heap must look like"):
        docker.DockerStack(heap=heap or " ")


@pytest.mark.parametrize(("url", "host"), [
    ("unix:///run/turnbench-docker/docker.sock", "127.0.0.1"),
    ("unix:///var/run/docker.sock", "127.0.0.1"),
    ("npipe:////./pipe/docker_engine", "127.0.0.1"),
    ("tcp://localhost:2375", "127.0.0.1"),
    ("tcp://10.1.2.3:2376", "10.1.2.3"),
    ("ssh://ci@build.example:22", "build.example"),
])
def test_where_published_ports_are_reached_follows_the_engine_url(url, host):
    assert docker.published_host(url) == host


def test_testcontainers_is_told_the_mode_and_host_even_where_it_believes_it_runs_in_a_container(monkeypatch):
    from testcontainers.core import utils
    from testcontainers.core.config import ConnectionMode, testcontainers_config
    from testcontainers.core.docker_client import DockerClient

    for attr in ("_ryuk_disabled", "connection_mode_override", "tc_host_override"):
        monkeypatch.setattr(testcontainers_config, attr, getattr(testcontainers_config, attr))
    monkeypatch.setattr(utils, "inside_container", lambda: True)  # what /.dockerenv makes it believe
    monkeypatch.delenv("TC_HOST", raising=False)
    monkeypatch.delenv("TESTCONTAINERS_HOST_OVERRIDE", raising=False)
    monkeypatch.setenv("TESTCONTAINERS_RYUK_DISABLED", "false")
    testcontainers_config.connection_mode_override = None
    testcontainers_config.tc_host_override = None
    import docker as sdk

    url = "unix:///run/turnbench-docker/docker.sock"
    client = DockerClient.__new__(DockerClient)  # its constructor asks the engine for its API version
    client.client = sdk.DockerClient(base_url=url, version="1.41")
    assert client.host() != "127.0.0.1"  # unguided: a gateway's address, or "localhost"

    docker.configure_testcontainers(url)
    assert client.get_connection_mode() == ConnectionMode.docker_host
    assert client.host() == "127.0.0.1"
    assert testcontainers_config.ryuk_disabled is True
    monkeypatch.setenv("TC_HOST", "192.0.2.7")
    docker.configure_testcontainers(url)
    assert client.host() == "192.0.2.7"


def _fake_docker(tmp_path: Path, script: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "docker").write_text("#!/bin/sh\n" + script)
    (bin_dir / "docker").chmod(0o755)
    return bin_dir


@pytest.mark.parametrize(("script", "problem"), [
    ("echo \"docker: 'compose' is not a docker command.\" >&2; echo \"See 'docker --help'\" >&2; exit 1",
     "no docker compose v2 plugin (docker compose version: docker: 'compose' is not a docker command. / "
     "See 'docker --help')"),
    ("echo 1.29.2", "no docker compose v2 plugin (docker compose version: 1.29.2)"),
    ("exit 3", "no docker compose v2 plugin (docker compose version: exit 3)"),
    ("echo 2.40.3", None),
    ("echo v5.0.0", None),
])
def test_compose_is_checked_before_anything_starts_and_named_in_full(tmp_path, monkeypatch, script, problem):
    monkeypatch.setenv("PATH", str(_fake_docker(tmp_path, script)))
    assert compose.compose_problem() == problem


def test_compose_missing_sends_auto_to_embedded_saying_why_and_refuses_an_explicit_docker(tmp_path, monkeypatch):
    monkeypatch.setattr(docker, "engine_problem", lambda timeout=3.0: None)
    monkeypatch.setenv("PATH", str(_fake_docker(tmp_path, "echo 'docker: unknown command: docker compose' >&2; "
                                                          "exit 1")))
    why = "no docker compose v2 plugin (docker compose version: docker: unknown command: docker compose)"
    assert choose("auto", {}, detached=True).why == why
    assert choose("auto", {}, detached=True).provider == "embedded"
    assert choose("auto", {}, detached=False).provider == "docker"  # testcontainers needs no compose
    with pytest.raises(StackStartError, match=re.escape(f"the docker provider cannot run here: {why}")):
        docker.DockerStack().start(detached=True)
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert compose.compose_problem() == "no docker CLI on PATH (docker compose runs as its plugin)"


def test_compose_project_follows_the_state_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "a"))
    a = compose.project_name()
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "b"))
    assert re.fullmatch(r"turnbench-[0-9a-f]{8}", a) and compose.project_name() != a


def test_engine_times_read_to_the_microsecond():
    assert compose._instant("2026-11-30T23:45:01.123456789Z").isoformat() == "2026-11-30T23:45:01.123456+00:00"
    assert compose._instant("2026-11-30T23:45:01Z").microsecond == 0
    with pytest.raises(ValueError):
        compose._instant("yesterday")


def test_compose_file_takes_the_same_image_overrides_with_the_pins_as_defaults_on_loopback_only():
    named = dict(re.findall(r"^\s+image:\s*\$\{(TURNBENCH_\w+_IMAGE):-(\S+)\}$", COMPOSE, re.M))
    assert named == {images.IMAGE_ENV["opensearch"]: pins.OPENSEARCH_IMAGE,
                     images.IMAGE_ENV["postgres"]: pins.POSTGRES_IMAGE}
    assert len(re.findall(r"^\s+pull_policy: missing$", COMPOSE, re.M)) == 2
    published = re.findall(r'^\s+- "([^"]+)"', COMPOSE, re.M)
    assert len(published) == 2 and all(p.startswith("127.0.0.1:") for p in published)
    assert COMPOSE.count("healthcheck:") == 2
    for key, value in {**docker.OPENSEARCH_ENV, **docker.POSTGRES_ENV}.items():
        assert re.search(rf'^\s+{re.escape(key)}: "?{re.escape(value)}"?$', COMPOSE, re.M), key


def test_the_image_build_says_what_the_pins_say():
    def var(name: str) -> str:
        m = re.search(rf"^{name}=(\S+)$", BUILD, re.M)
        assert m, name
        return m.group(1)

    assert var("OPENSEARCH_VERSION") == pins.OPENSEARCH_VERSION
    assert var("LUCENE_VERSION") == pins.LUCENE_VERSION
    assert var("POSTGRES_MAJOR") == pins.POSTGRES_MAJOR
    assert re.search(r"^PREFIX=\$\{TURNBENCH_IMAGE_PREFIX:-(\S+)\}$", BUILD, re.M).group(1) == pins.LOCAL_IMAGE_PREFIX
    assert '"$PREFIX/opensearch:$OPENSEARCH_VERSION"' in BUILD and '"$PREFIX/postgres:$POSTGRES_MAJOR"' in BUILD
    # every pinned module is in the distribution zip (transport-netty4), assembled by the build, or a plugin zip the
    # image installs (k-NN, neural search)
    assembled = set(re.findall(r'^\s+"[a-z-]+\|([\w.]+)\|', BUILD, re.M))
    zips = set(re.findall(r'^\s+"([a-z-]+)-[\d.]+\.zip\|', BUILD, re.M))
    installed = {cls for name, cls in pins.OPENSEARCH_PLUGINS if name in zips}
    assert installed == {"org.opensearch.knn.plugin.KNNPlugin", "org.opensearch.neuralsearch.plugin.NeuralSearch"}
    assert assembled | installed | {"org.opensearch.transport.Netty4Plugin"} == set(pins.plugin_classes())
    assert not any(name.startswith(("opensearchproject/", "postgres:")) for name in re.findall(r"-t \"(\S+)\"", BUILD))


def test_compose_ports_are_given_else_the_compose_files_variables_else_the_defaults(monkeypatch):
    assert compose.host_ports({}) == {"opensearch": 9200, "postgres": 5432}
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_PORT", "19200")
    assert compose.host_ports({"postgres": 15432}) == {"opensearch": 19200, "postgres": 15432}
    assert compose.host_ports({"opensearch": 29200})["opensearch"] == 29200
    for bad in ("0", "65536", "ninety", "9200; rm -rf /"):
        monkeypatch.setenv("TURNBENCH_OPENSEARCH_PORT", bad)
        with pytest.raises(BadInput, match=r"^TURNBENCH_OPENSEARCH_PORT: .* is not a port$"):
            compose.host_ports({})


@pytest.mark.parametrize(("args", "env", "said"), [
    (["bogus"], {}, "build.sh: unknown target bogus (base|postgres|opensearch|all)"),
    (["all", "x" * 100], {}, "build.sh: unknown target " + "x" * 40 + " (base|postgres|opensearch|all)"),
    (["all"], {"TURNBENCH_IMAGE_PREFIX": "Docker.io/x"}, "build.sh: TURNBENCH_IMAGE_PREFIX must be one lowercase "
                                                         "name component"),
    (["all"], {}, "build.sh: no Docker engine answers (DOCKER_HOST=unix://"),
])
def test_the_image_build_refuses_bad_input_in_one_line_before_anything(tmp_path, args, env, said):
    import os
    import subprocess

    out = subprocess.run([str(REPO / "compose" / "images" / "build.sh"), *args], capture_output=True, text=True,
                         env={**os.environ, **env, "TURNBENCH_IMAGE_CACHE": str(tmp_path / "cache")})
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and out.stderr.startswith(said)
    assert not (tmp_path / "cache").exists()


def test_the_engine_script_refuses_an_unknown_command_without_touching_anything():
    import subprocess

    script = REPO / ".ci" / "docker-engine.sh"
    out = subprocess.run([str(script), "restart-everything"], capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.strip() == f"usage: {script} install|start|stop|status|env|pidfile"
