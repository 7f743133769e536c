"""The stack commands (turnbench.cli.stack): exit codes and one-line messages, and nothing recorded on failure."""

from __future__ import annotations

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
