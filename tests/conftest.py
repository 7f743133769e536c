"""The one real stack of a test session (tests.integration.legs picks its provider), started only when a test asks
for it: the integration tests and the fault table's rows that need servers share it."""

from __future__ import annotations

import pytest


def pytest_configure(config):
    """The session's state directory (load records and the inventories they keep, stack records) is one of its
    own, unless the environment names one: the checkout's .turnbench belongs to the developer's own stack, whose
    records a test loading into an index of the same name would otherwise replace."""
    import os
    import tempfile

    if "TURNBENCH_STATE_DIR" not in os.environ:
        config.turnbench_state = os.environ["TURNBENCH_STATE_DIR"] = tempfile.mkdtemp(prefix="turnbench-test-state-")


def pytest_unconfigure(config):
    import shutil

    made = getattr(config, "turnbench_state", None)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)


@pytest.fixture(scope="session")
def stack():
    """A StackInfo of a real OpenSearch + PostgreSQL, shared by the session and torn down at its end."""
    from tests.integration.legs import LEG
    from turnbench.stack import open_stack

    with open_stack(LEG) as info:
        yield info
