"""The stack commands (turnbench.cli.stack): exit codes and one-line messages, and nothing recorded on failure."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.unit.cli.helpers import one_meeting_corpus
from tests.unit.stack.helpers import INFO, fake_java
from turnbench.cli import main
from turnbench.stack import state


def test_cli_stack_up_with_old_java_exits_3_in_one_line_and_records_nothing(tmp_path, monkeypatch):
    java = fake_java(tmp_path, 'openjdk version "11.0.2"')
    monkeypatch.setenv("JAVA_HOME", str(java.parent.parent))
    result = CliRunner().invoke(main, ["stack", "up", "--provider", "embedded"])
    assert result.exit_code == 3
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("turnbench: StackStartError: Java 11.0.2 at ") and "too old" in lines[-1]
    assert not state.state_path().exists()


def test_cli_status_exits_1_without_a_stack_and_down_is_a_no_op():
    runner = CliRunner()
    status = runner.invoke(main, ["stack", "status", "--json"])
    assert status.exit_code == 1 and status.stdout == ""
    down = runner.invoke(main, ["stack", "down"])
    assert down.exit_code == 0 and "nothing to stop" in down.stderr


def test_cli_second_up_refuses_and_shows_the_recorded_stack():
    state.write_state(state.Recorded(state.UP, "embedded", INFO.details, INFO))
    result = CliRunner().invoke(main, ["stack", "up"])
    assert result.exit_code == 3
    assert "already recorded" in result.stderr and "http://127.0.0.1:1" in result.stderr


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


def test_load_and_run_refuse_a_corpus_that_does_not_match_its_manifest(tmp_path, monkeypatch):
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "no-stack"))
    root = one_meeting_corpus(tmp_path / "c")
    part = root / "meetings" / "part-0000.jsonl"
    part.write_bytes(part.read_bytes().replace(b"hello all", b"hello ALL"))
    for args in (["load", "--corpus", str(root)],
                 ["run", "--corpus", str(root), "--arm", "bm25", "--out", str(tmp_path / "o")]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 3, res.output
        assert "CorpusIntegrityError" in res.output and "meetings/part-0000.jsonl" in res.output
    assert not (tmp_path / "o").exists()


# -- turnbench jars ------------------------------------------------------------------------------------------------
def _no_maven(monkeypatch):
    import shutil

    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "mvn" else real(name, *a, **k))


def _fake_stack_files(tmp_path, monkeypatch, files):
    """A small lock served by ``files``, a pom it was written from, and a system PostgreSQL stand-in."""
    import hashlib

    from turnbench.stack import jarlock, jars, launcher, postgres
    from turnbench.stack.jarlock import Entry, Lock

    bodies = {("opensearch", "2.19.6"): b"os" * 500, ("log4j-api", "2.25.4"): b"api", ("log4j-core", "2.25.4"): b"c"}
    entries = []
    for (artifact, version), body in bodies.items():
        entry = Entry("org.example", artifact, version, "", "jar", f"{artifact}-{version}.jar",
                      hashlib.sha256(body).hexdigest(), len(body), "node")
        files.routes[f"/{entry.maven_path()}"] = body
        entries.append(entry)
    pom = tmp_path / "pom.xml"
    pom.write_text("<project/>")
    lock = tmp_path / "jars.lock.json"
    lock.write_bytes(jarlock.render(Lock(hashlib.sha256(pom.read_bytes()).hexdigest(), jarlock.CENTRAL,
                                         tuple(entries))))
    monkeypatch.setattr(jarlock, "POM", pom)
    monkeypatch.setattr(jarlock, "LOCK", lock)
    monkeypatch.setattr(launcher, "shipped", lambda compiler, classes=launcher.CLASSES: classes)
    monkeypatch.setattr(jars, "compiler", lambda lock: None)
    monkeypatch.setattr(postgres, "find_postgres", lambda **kw: postgres.PostgresBinaries(
        tmp_path / "pg" / "bin", "PATH", "15.18"))
    monkeypatch.setenv("TURNBENCH_MAVEN_REPOSITORY", files.url)
    return entries


def test_cli_jars_fetches_the_lock_then_refetches_a_tampered_jar(tmp_path, monkeypatch, files):
    entries = _fake_stack_files(tmp_path, monkeypatch, files)
    runner = CliRunner()
    first = runner.invoke(main, ["jars"])
    assert first.exit_code == 0, first.stderr
    assert "3 jars verified against jars.lock.json: 3 fetched, " in first.stdout
    assert "turnbench: the jars' store: " in first.stdout
    # the count and the time fit a laptop's 100 columns; only a line naming a path may not
    counted = next(line for line in first.stdout.splitlines() if "jars verified" in line)
    assert len(counted) <= 100
    assert "PostgreSQL 15.18 (PATH)" in first.stdout
    jar = tmp_path / "cache" / "sha256" / entries[0].sha256 / entries[0].file
    jar.write_bytes(b"so" * 500)  # same size, other bytes
    second = runner.invoke(main, ["jars"])
    assert second.exit_code == 0, second.stderr
    assert ": 1 fetched, " in second.stdout
    assert "turnbench: 1 had other bytes than the lock pins: removed and fetched again" in second.stdout
    assert jar.read_bytes() == b"os" * 500
    third = runner.invoke(main, ["jars"])
    assert ": all cached, " in third.stdout


def test_cli_jars_with_an_unreachable_repository_exits_3_in_one_line_leaving_nothing(tmp_path, monkeypatch, files):
    _fake_stack_files(tmp_path, monkeypatch, files)
    _no_maven(monkeypatch)
    monkeypatch.setenv("TURNBENCH_MAVEN_REPOSITORY", "http://127.0.0.1:9")
    result = CliRunner().invoke(main, ["jars"])
    assert result.exit_code == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("turnbench: FetchFailed: could not fetch http://127.0.0.1:9/")
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]


def test_cli_jars_refuses_bytes_the_lock_does_not_pin(tmp_path, monkeypatch, files):
    entries = _fake_stack_files(tmp_path, monkeypatch, files)
    files.routes[f"/{entries[1].maven_path()}"] = b"API"
    result = CliRunner().invoke(main, ["jars"])
    assert result.exit_code == 3
    assert result.stderr.strip().startswith("turnbench: ArtifactMismatch: log4j-api-2.25.4.jar from http://")
    assert not (tmp_path / "cache" / "sha256" / entries[1].sha256).exists() or not any(
        (tmp_path / "cache" / "sha256" / entries[1].sha256).iterdir())


def test_cli_jars_update_lock_without_maven_when_the_pom_moved_exits_3_and_keeps_the_lock(tmp_path, monkeypatch,
                                                                                           files):
    from turnbench.stack import jarlock

    _fake_stack_files(tmp_path, monkeypatch, files)
    _no_maven(monkeypatch)
    current = CliRunner().invoke(main, ["jars", "--update-lock"])
    assert current.exit_code == 0 and "jars.lock.json is current with pom.xml" in current.stderr
    before = jarlock.LOCK.read_bytes()
    jarlock.POM.write_text("<project><!-- moved --></project>")
    moved = CliRunner().invoke(main, ["jars", "--update-lock"])
    assert moved.exit_code == 3
    assert moved.stderr.strip() == ("turnbench: LockError: pom.xml changed since jars.lock.json was written and "
                                    "Maven (mvn) is not here to resolve it: install Maven, or restore the pom")
    assert jarlock.LOCK.read_bytes() == before
    stale = CliRunner().invoke(main, ["jars"])  # a lock from another pom is never used
    assert stale.exit_code == 3 and "pom.xml changed since jars.lock.json was written from it" in stale.stderr


@pytest.mark.parametrize(("env", "value", "message"), [
    ("TURNBENCH_MAVEN_REPOSITORY", "ftp://mirror.example/maven2",
     "TURNBENCH_MAVEN_REPOSITORY must be an http(s) URL of a Maven repository, not 'ftp://mirror.example/maven2'"),
    ("TURNBENCH_MAVEN_REPOSITORY", "https://mirror.example/maven 2", "must be an http(s) URL"),
    ("TURNBENCH_MAVEN_REPOSITORY", "file:///etc", "must be an http(s) URL"),
    ("TURNBENCH_NO_SYSTEM_JAVA", "yes", "TURNBENCH_NO_SYSTEM_JAVA must be 1 or 0, not 'yes'"),
    ("TURNBENCH_NO_SYSTEM_POSTGRES", "true", "TURNBENCH_NO_SYSTEM_POSTGRES must be 1 or 0, not 'true'"),
])
def test_cli_jars_bad_switches_exit_2_in_one_line_before_fetching(tmp_path, monkeypatch, files, env, value, message):
    _fake_stack_files(tmp_path, monkeypatch, files)
    monkeypatch.setenv(env, value)
    result = CliRunner().invoke(main, ["jars"])
    assert result.exit_code == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("turnbench: BadInput: ") and message in lines[0]
    assert files.hits == {}


def test_cli_jars_launcher_options_exclude_each_other():
    result = CliRunner().invoke(main, ["jars", "--build-launcher", "--check-launcher"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "turnbench: BadInput: --build-launcher and --check-launcher exclude each other"


def test_cli_stack_up_with_contradicting_postgres_switches_exits_2(tmp_path, monkeypatch):
    monkeypatch.setenv("TURNBENCH_NO_SYSTEM_POSTGRES", "1")
    monkeypatch.setenv("TURNBENCH_PG_BIN", str(tmp_path))
    result = CliRunner().invoke(main, ["stack", "up", "--provider", "embedded"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "turnbench: BadInput: TURNBENCH_NO_SYSTEM_POSTGRES=1 and TURNBENCH_PG_BIN contradict each other: unset one")
# -- the docker provider's options: refused in one line before anything starts, nothing recorded -------------
def _one_line_error(result, code: int) -> str:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("turnbench: ")
    return lines[-1]


@pytest.mark.parametrize("bad", ["bad image", "UPPER:1", "$(reboot)", "x" * 400, "a::b", ""])
def test_cli_a_bad_image_reference_exits_2_before_anything_starts(bad, tmp_path):
    for option in ("--opensearch-image", "--postgres-image"):
        up = CliRunner().invoke(main, ["stack", "up", "--provider", "docker", option, bad])
        line = _one_line_error(up, 2)
        assert f"'{option}'" in line and "is not a Docker image reference" in line and len(line) <= 320
        bench = CliRunner().invoke(main, ["bench", "--corpus", str(one_meeting_corpus(tmp_path / f"c{option}")),
                                          "--arm", "bm25", "--out", str(tmp_path / "o"), option, bad])
        assert "is not a Docker image reference" in _one_line_error(bench, 2)
    assert not state.state_path().exists() and not (tmp_path / "o").exists()


def test_cli_a_bad_image_in_the_environment_exits_2_naming_the_variable(monkeypatch):
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_IMAGE", "no such image!")
    line = _one_line_error(CliRunner().invoke(main, ["stack", "up", "--provider", "docker"]), 2)
    assert line.startswith("turnbench: BadInput: TURNBENCH_OPENSEARCH_IMAGE: 'no such image!' is not a Docker image")
    assert not state.state_path().exists()


@pytest.mark.parametrize("provider", ["embedded", "external"])
def test_cli_images_with_a_provider_that_runs_none_exit_2(provider):
    result = CliRunner().invoke(main, ["stack", "up", "--provider", provider,
                                       "--opensearch-image", "turnbench-local/opensearch:2.19.6"])
    assert _one_line_error(result, 2) == (
        f"turnbench: BadInput: --opensearch-image and --postgres-image are for the docker provider, not {provider}")
    assert not state.state_path().exists()


@pytest.mark.parametrize("port", ["0", "65536", "-1", "http"])
def test_cli_a_port_out_of_range_exits_2(port):
    result = CliRunner().invoke(main, ["stack", "up", "--provider", "docker", "--opensearch-port", port])
    assert "--opensearch-port" in _one_line_error(result, 2)


def test_cli_explicit_docker_without_an_engine_exits_3_naming_what_is_missing():
    line = _one_line_error(CliRunner().invoke(main, ["stack", "up", "--provider", "docker"]), 3)
    assert line.startswith("turnbench: StackStartError: the docker provider cannot run here: no Docker engine "
                           "answers: ") and line.endswith("(or use --provider embedded)")
    assert not state.state_path().exists()


def test_cli_explicit_docker_without_compose_v2_exits_3_and_auto_says_why_it_falls_back(tmp_path, monkeypatch):
    from turnbench.stack import docker

    monkeypatch.setattr(docker, "engine_problem", lambda timeout=3.0: None)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "docker").write_text("#!/bin/sh\necho \"docker: 'compose' is not a docker command.\" >&2\n"
                                              "echo \"See 'docker --help'\" >&2\nexit 1\n")
    (tmp_path / "bin" / "docker").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    missing = ("no docker compose v2 plugin (docker compose version: docker: 'compose' is not a docker command. / "
               "See 'docker --help')")
    line = _one_line_error(CliRunner().invoke(main, ["stack", "up", "--provider", "docker"]), 3)
    assert line == f"turnbench: StackStartError: the docker provider cannot run here: {missing} " \
                   "(or use --provider embedded)"
    # auto names the same reason before it starts the embedded stack (stopped here by a missing PostgreSQL)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("TURNBENCH_PG_BIN", str(tmp_path / "empty"))
    auto = CliRunner().invoke(main, ["stack", "up"], env={"TURNBENCH_VERBOSE": "1"})  # the note is a --verbose one
    assert f"turnbench: stack provider embedded: {missing}" in auto.stderr
    quiet = CliRunner().invoke(main, ["stack", "up"])
    assert len(quiet.stderr.strip().splitlines()) == 1 and "stack provider" not in quiet.stderr
    assert not state.state_path().exists()


@pytest.mark.parametrize("provider", ["docker", "external"])
def test_cli_nodes_with_a_provider_that_starts_none_exits_2(provider, tmp_path):
    for args in (["stack", "up", "--provider", provider, "--nodes", "3"],
                 ["bench", "--corpus", str(one_meeting_corpus(tmp_path / f"c-{provider}")), "--arm", "bm25",
                  "--out", str(tmp_path / "o"), "--provider", provider, "--nodes", "3"]):
        result = CliRunner().invoke(main, args)
        assert _one_line_error(result, 2) == (f"turnbench: BadInput: --nodes starts embedded nodes; the {provider} "
                                             "provider runs none (point --provider external at a cluster you run)")
    assert not state.state_path().exists() and not (tmp_path / "o").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["stack", "up", "--nodes", "0"], "--nodes"),
    (["stack", "up", "--nodes", "10"], "--nodes"),
    (["load", "--corpus", "x", "--shards", "0"], "--shards"),
    (["run", "--corpus", "x", "--arm", "bm25", "--out", "o", "--concurrency", "0"], "--concurrency"),
    (["run", "--corpus", "x", "--arm", "bm25", "--out", "o", "--concurrency", "33"], "--concurrency"),
])
def test_cli_topology_and_concurrency_out_of_range_exit_2(args, message):
    result = CliRunner().invoke(main, args)
    assert message in _one_line_error(result, 2)
    assert not state.state_path().exists()


def test_cli_bench_refuses_an_arm_that_cannot_run_on_several_shards_before_any_stack(tmp_path):
    arm = tmp_path / "solo.toml"
    arm.write_text('name = "solo"\nbody = \'{"query": {"match": {"content": {{query_text}}}}}\'\n'
                   '[requires]\nshards = "one"\n')
    result = CliRunner().invoke(main, ["bench", "--corpus", str(one_meeting_corpus(tmp_path / "c")), "--arm-file",
                                       str(arm), "--out", str(tmp_path / "o"), "--shards", "2",
                                       "--provider", "embedded"])
    assert "arm solo cannot run on an index of 2 shards" in _one_line_error(result, 2)
    assert not state.state_path().exists() and not (tmp_path / "o").exists()
