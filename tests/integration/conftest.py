"""Integration-test fixtures: one real stack per test session (tests/conftest.py), started only when a test asks.

TURNBENCH_TEST_PROVIDER picks the provider (tests.integration.legs): ``embedded`` (the default), ``docker``
(testcontainers against the engine DOCKER_HOST names, with the images TURNBENCH_OPENSEARCH_IMAGE /
TURNBENCH_POSTGRES_IMAGE name), or ``external`` with TURNBENCH_OPENSEARCH_URL and TURNBENCH_POSTGRES_DSN set for
a stack you already run. On the docker leg an unusable Docker ends the session at once, naming what is missing:
the leg never passes by skipping.
"""

from __future__ import annotations

import pytest

from tests.integration.legs import LEG


@pytest.fixture(scope="session", autouse=True)
def _docker_leg_needs_docker():
    if LEG == "docker":
        from turnbench.stack.docker import DockerStack

        problem = DockerStack.problem(detached=True)
        if problem is not None:
            pytest.exit(f"TURNBENCH_TEST_PROVIDER=docker, but {problem}", returncode=3)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Whatever asks for the real stack is an integration test: mark it so before `-m "not integration"`
    deselects, so that a run without integration tests never starts a stack."""
    for item in items:
        if "stack" in getattr(item, "fixturenames", ()) and item.get_closest_marker("integration") is None:
            item.add_marker(pytest.mark.integration)
