"""Stack pieces that need no server: classpath checks, Java detection, selection, state, docker without engine."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.errors import BadInput, StackStartError, StackStateError
from turnbench.stack import StackInfo, current_stack, docker, external, jars, state
from turnbench.stack._proc import is_running, start_ticks, stop_pids
from turnbench.stack.provider import choose

INFO = StackInfo(
    provider="embedded",
    opensearch_url="http://127.0.0.1:1",
    postgres_dsn="host=127.0.0.1 port=1 user=turnbench dbname=turnbench",
    opensearch_version="2.19.6",
    lucene_version="9.12.3",
    postgres_version="15.18",
    details={"processes": []},
)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("TURNBENCH_OPENSEARCH_URL", raising=False)
    monkeypatch.delenv("TURNBENCH_POSTGRES_DSN", raising=False)
    # no engine can answer here, whatever the machine has
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")


def _fake_java(tmp_path: Path, version_line: str) -> Path:
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(0o755)
    return java


# -- classpath -------------------------------------------------------------------------------------------
def test_check_classpath_accepts_one_version_per_artifact():
    jars.check_classpath(["opensearch-2.19.6.jar", "log4j-api-2.25.4.jar", "log4j-core-2.25.4.jar",
                          "netty-codec-4.1.135.Final.jar", "zstd-jni-1.5.5-5.jar"])


def test_check_classpath_refuses_duplicates():
    with pytest.raises(StackStartError, match="duplicate jars on the OpenSearch classpath: guava"):
        jars.check_classpath(["opensearch-2.19.6.jar", "guava-32.1.1-jre.jar", "guava-33.0.0-jre.jar",
                              "log4j-api-2.25.4.jar", "log4j-core-2.25.4.jar"])


def test_check_classpath_refuses_mismatched_log4j():
    with pytest.raises(StackStartError, match="log4j-core"):
        jars.check_classpath(["opensearch-2.19.6.jar", "log4j-api-2.25.4.jar", "log4j-core-2.21.0.jar"])


# -- Java --------------------------------------------------------------------------------------------------
def test_java_missing_names_how_to_get_it(tmp_path):
    with pytest.raises(StackStartError, match=r"Java not found at .*apt-get install -y openjdk-17-jdk-headless"):
        jars.find_java(tmp_path / "nope" / "java")


@pytest.mark.parametrize("line", ['openjdk version "11.0.2" 2019-01-15', 'java version "1.8.0_292"'])
def test_java_too_old_is_refused(tmp_path, line):
    with pytest.raises(StackStartError, match=r"is too old: OpenSearch 2.19.6 needs 17\+"):
        jars.find_java(_fake_java(tmp_path, line))


def test_java_17_is_accepted(tmp_path):
    found = jars.find_java(_fake_java(tmp_path, 'openjdk version "17.0.15" 2025-04-15'))
    assert (found.major, found.version) == (17, "17.0.15")


def test_cli_stack_up_with_old_java_exits_3_in_one_line_and_records_nothing(tmp_path, monkeypatch):
    java = _fake_java(tmp_path, 'openjdk version "11.0.2"')
    monkeypatch.setenv("JAVA_HOME", str(java.parent.parent))
    result = CliRunner().invoke(main, ["stack", "up", "--provider", "embedded"])
    assert result.exit_code == 3
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("turnbench: StackStartError: Java 11.0.2 at ") and "too old" in lines[-1]
    assert not state.state_path().exists()


# -- PostgreSQL binaries, ports --------------------------------------------------------------------------
def test_postgres_binaries_not_found_names_the_package(tmp_path):
    from turnbench.stack.postgres import find_postgres

    (tmp_path / "empty").mkdir()
    expected = r"not found in .*empty: install them \(Debian: apt-get install -y postgresql-15\)"
    with pytest.raises(StackStartError, match=expected):
        find_postgres(tmp_path / "empty")


def test_port_taken_is_refused_before_anything_starts():
    import socket

    from turnbench.stack.embedded import EmbeddedStack

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        stack = EmbeddedStack(opensearch_port=port)
        with pytest.raises(StackStartError, match=f"http port {port} on 127.0.0.1 is taken") as err:
            stack.start()
    assert err.value.started_pids == ()
    assert stack.root is None


def test_bad_heap_is_bad_input():
    from turnbench.stack.embedded import EmbeddedStack

    with pytest.raises(BadInput, match="heap"):
        EmbeddedStack(heap="lots")


# -- Maven ---------------------------------------------------------------------------------------------------
def test_maven_unreachable_with_empty_cache_is_one_line(tmp_path):
    settings = tmp_path / "settings.xml"
    # every download goes to a loopback port where nothing listens
    settings.write_text(
        "<settings><mirrors><mirror><id>nowhere</id><mirrorOf>*</mirrorOf>"
        "<url>http://127.0.0.1:9/</url></mirror></mirrors></settings>"
    )
    from turnbench.stack import open_stack

    root = tmp_path / "cache" / "opensearch-2.19.6"
    with pytest.raises(StackStartError) as err:
        with open_stack("embedded", cache=tmp_path / "cache",
                        maven_args=("-s", str(settings), f"-Dmaven.repo.local={tmp_path / 'm2'}")):
            pytest.fail("the stack must not open")
    assert err.value.started_pids == ()
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("could not fetch the OpenSearch 2.19.6 jars with Maven and the cache")
    assert "is Maven Central reachable?" in message
    assert not (root / "lib").exists() and not (root / "jars.json").exists()


def test_offline_with_empty_cache_says_make_jars(tmp_path):
    with pytest.raises(StackStartError, match="run `make jars` first"):
        jars.ensure_jars(tmp_path / "c", offline=True)


# -- processes -------------------------------------------------------------------------------------------------
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


# -- selection, external, state --------------------------------------------------------------------------------
def test_auto_without_engine_or_record_picks_embedded_and_says_why():
    choice = choose("auto", {}, detached=False)
    assert choice.provider == "embedded"
    assert choice.why.startswith("no recorded stack answers and no Docker engine (")


def test_unknown_provider_is_bad_input():
    with pytest.raises(BadInput, match="unknown stack provider 'podman'"):
        choose("podman", {}, detached=False)


def test_docker_provider_without_engine_is_a_clear_start_error():
    expected = r"^no Docker engine answers \(.*\): start Docker, or use --provider embedded$"
    with pytest.raises(StackStartError, match=expected):
        docker.DockerStack().start()


def test_external_needs_both_endpoints(monkeypatch):
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", "http://127.0.0.1:9")
    with pytest.raises(BadInput, match="missing --postgres-dsn / TURNBENCH_POSTGRES_DSN"):
        external.endpoints()


def test_redact_hides_passwords():
    assert external.redact("host=h user=u password=s3cret dbname=d") == "host=h user=u password=*** dbname=d"
    assert external.redact("postgresql://u:s3cret@h:5432/d") == "postgresql://u:***@h:5432/d"


def test_stack_info_round_trips_and_reports_versions():
    assert StackInfo.from_json(INFO.to_json()) == INFO
    assert INFO.versions() == {"opensearch": "2.19.6", "lucene": "9.12.3", "postgresql": "15.18"}


def test_current_stack_without_record_refuses():
    with pytest.raises(StackStateError, match="no stack is recorded in .*turnbench stack up"):
        current_stack()


def test_current_stack_with_a_dead_record_refuses():
    state.write_state(INFO)
    with pytest.raises(StackStateError, match="the recorded embedded stack does not answer"):
        current_stack()


def test_cli_status_exits_1_without_a_stack_and_down_is_a_no_op():
    runner = CliRunner()
    status = runner.invoke(main, ["stack", "status", "--json"])
    assert status.exit_code == 1 and status.stdout == ""
    down = runner.invoke(main, ["stack", "down"])
    assert down.exit_code == 0 and "nothing to stop" in down.stderr


def test_cli_second_up_refuses_and_shows_the_recorded_stack():
    state.write_state(INFO)
    result = CliRunner().invoke(main, ["stack", "up"])
    assert result.exit_code == 3
    assert "already recorded" in result.stderr and "http://127.0.0.1:1" in result.stderr


# -- open_stack refusals before anything runs -----------------------------------------------------------------
def test_open_stack_without_java_starts_nothing(tmp_path):
    from turnbench.stack import open_stack

    with pytest.raises(StackStartError, match=r"^Java not found at ") as err:
        with open_stack("embedded", java=tmp_path / "no-java"):
            pytest.fail("the stack must not open")
    assert err.value.started_pids == ()


def test_open_stack_without_postgres_binaries_starts_nothing(tmp_path):
    from turnbench.stack import open_stack

    (tmp_path / "empty").mkdir()
    with pytest.raises(StackStartError, match="PostgreSQL server binaries") as err:
        with open_stack("embedded", postgres_bin=tmp_path / "empty"):
            pytest.fail("the stack must not open")
    assert err.value.started_pids == ()
    assert "\n" not in str(err.value)


def test_unknown_embedded_option_is_bad_input():
    from turnbench.stack import open_stack

    with pytest.raises(BadInput, match="unknown option\\(s\\) for the embedded provider: hepa"):
        with open_stack("embedded", hepa="1g"):
            pass


def test_cli_stack_up_without_postgres_binaries_exits_3(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("TURNBENCH_PG_BIN", str(tmp_path / "empty"))
    result = CliRunner().invoke(main, ["stack", "up", "--provider", "embedded"])
    assert result.exit_code == 3
    assert result.stderr.strip().splitlines()[-1].startswith(
        "turnbench: StackStartError: PostgreSQL server binaries (initdb, postgres) not found in ")
    assert not state.state_path().exists()


def test_cli_stack_up_on_a_taken_port_exits_3():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = CliRunner().invoke(main, ["stack", "up", "--provider", "embedded", "--postgres-port", str(port)])
    assert result.exit_code == 3
    assert result.stderr.strip().splitlines()[-1] == (
        f"turnbench: StackStartError: postgres port {port} on 127.0.0.1 is taken (Address already in use); "
        "choose another port or leave it unset")
