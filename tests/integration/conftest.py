"""Integration-test fixtures: one real embedded stack per test session, started only when a test asks for it.

TURNBENCH_TEST_PROVIDER picks another provider (e.g. ``external`` with TURNBENCH_OPENSEARCH_URL and
TURNBENCH_POSTGRES_DSN set) for a stack you already run; the default is ``embedded``.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def stack():
    """A StackInfo of a real OpenSearch + PostgreSQL, shared by the session and torn down at its end."""
    from turnbench.stack import open_stack

    provider = os.environ.get("TURNBENCH_TEST_PROVIDER", "embedded")
    with open_stack(provider) as info:
        yield info


def pytest_collection_modifyitems(config, items):
    """The stack is started only for tests marked integration: a test that asks for it unmarked is a mistake
    (it would start a real stack in a run that deselected integration tests)."""
    unmarked = sorted(i.nodeid for i in items if "stack" in getattr(i, "fixturenames", ()) and
                      i.get_closest_marker("integration") is None)
    if unmarked:
        raise pytest.UsageError(f"tests use the `stack` fixture without @pytest.mark.integration: {unmarked}")
