"""The one real stack of a test session (tests.integration.legs picks its provider), started only when a test asks
for it: the integration tests and the fault table's rows that need servers share it."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def stack():
    """A StackInfo of a real OpenSearch + PostgreSQL, shared by the session and torn down at its end."""
    from tests.integration.legs import LEG
    from turnbench.stack import open_stack

    with open_stack(LEG) as info:
        yield info
