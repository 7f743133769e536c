"""turnbench.stack.state and `stack down`: a record that cannot be proved turnbench's own is refused and left alone.

The attack: hand-edit .turnbench/stack.json so that `stack down` signals a process turnbench did not start (a pid
with no start time recorded) or deletes a directory it did not create (any path named turnbench-stack-*).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.errors import StackStateError
from turnbench.processes import is_running, start_ticks
from turnbench.stack import lifecycle, state
from turnbench.stack._watchdog import MARKER


def _record(details: dict[str, object], status: str = state.STARTING) -> None:
    state.write_state(state.Recorded(status, "embedded", details))


@pytest.fixture
def victim():
    proc = subprocess.Popen(["sleep", "30"])
    yield proc
    proc.kill()
    proc.wait()


def _down() -> object:
    return CliRunner().invoke(main, ["stack", "down"])


def test_a_process_recorded_without_its_start_time_is_never_signalled(victim) -> None:
    _record({"processes": [{"name": "x", "pid": victim.pid, "ticks": None, "stop_signal": 15,
                            "argv": ["sleep", "30"]}]})
    out = _down()
    assert out.exit_code == 3 and "cannot prove it started" in out.stderr
    assert is_running(victim.pid) and state.state_path().exists()  # left alone, record kept


def test_a_process_with_another_command_line_is_never_signalled(victim, tmp_path: Path) -> None:
    ticks = start_ticks(victim.pid)
    _record({"processes": [{"name": "x", "pid": victim.pid, "ticks": ticks, "stop_signal": 15,
                            "argv": ["java", "-cp", "x"]}]})
    assert _down().exit_code == 0
    assert is_running(victim.pid, ticks)


@pytest.mark.parametrize("tamper", ["no marker", "other id", "outside the root", "symlink"])
def test_a_directory_turnbench_did_not_make_is_never_deleted(tmp_path: Path, tamper: str) -> None:
    root = tmp_path / "tmp"
    root.mkdir()
    victim = root / "turnbench-stack-precious"
    victim.mkdir()
    (victim / "data.txt").write_text("keep me")
    details = {"stack_id": "abc", "workdir": str(victim), "temp_root": str(root), "processes": []}
    if tamper == "other id":
        (victim / MARKER).write_text(json.dumps({"stack_id": "xyz"}))
    elif tamper == "outside the root":
        (victim / MARKER).write_text(json.dumps({"stack_id": "abc"}))
        details["temp_root"] = str(tmp_path / "elsewhere")
    elif tamper == "symlink":
        (victim / MARKER).write_text(json.dumps({"stack_id": "abc"}))
        link = root / "turnbench-stack-link"
        link.symlink_to(victim)
        details["workdir"] = str(link)
    _record(details)
    out = _down()
    assert out.exit_code == 3 and "nothing was stopped" in out.stderr, out.stderr
    assert (victim / "data.txt").read_text() == "keep me" and state.state_path().exists()


def test_a_directory_with_its_stack_id_is_removed(tmp_path: Path) -> None:
    root = tmp_path / "tmp"
    mine = root / "turnbench-stack-mine"
    mine.mkdir(parents=True)
    (mine / MARKER).write_text(json.dumps({"stack_id": "abc"}))
    _record({"stack_id": "abc", "workdir": str(mine), "temp_root": str(root), "processes": []})
    assert _down().exit_code == 0
    assert not mine.exists() and not state.state_path().exists()


@pytest.mark.parametrize("content", ['[1, 2]', '{"format": "turnbench-stack-state/1"}', "\xff\xfe", "{"])
def test_a_state_file_turnbench_did_not_write_is_reported_and_left(content: str) -> None:
    state.state_path().parent.mkdir(parents=True, exist_ok=True)
    state.state_path().write_bytes(content.encode("latin-1"))
    out = _down()
    assert out.exit_code == 3 and "is not one turnbench wrote" in out.stderr
    assert state.state_path().read_bytes() == content.encode("latin-1")


def test_a_start_still_recorded_as_starting_says_so() -> None:
    _record({"processes": []})
    with pytest.raises(StackStateError, match="still starting, or its start was interrupted"):
        lifecycle.status()
