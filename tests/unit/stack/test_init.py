"""turnbench.stack: current_stack refuses without an answering stack; open_stack starts nothing it cannot finish."""

from __future__ import annotations

import pytest

from tests.unit.stack.helpers import INFO
from turnbench.errors import StackStartError, StackStateError
from turnbench.stack import current_stack, state


def test_current_stack_without_record_refuses():
    with pytest.raises(StackStateError, match="no stack is recorded in .*turnbench stack up"):
        current_stack()


def test_current_stack_with_a_dead_record_refuses():
    state.write_state(state.Recorded(state.UP, "embedded", INFO.details, INFO))
    with pytest.raises(StackStateError, match="the recorded embedded stack does not answer"):
        current_stack()


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
