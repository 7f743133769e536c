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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Whatever asks for the real stack is an integration test: mark it so before `-m "not integration"`
    deselects, so that a run without integration tests never starts a stack."""
    for item in items:
        if "stack" in getattr(item, "fixturenames", ()) and item.get_closest_marker("integration") is None:
            item.add_marker(pytest.mark.integration)
