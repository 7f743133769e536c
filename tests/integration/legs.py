"""Which provider the integration suite runs on (its "leg"): TURNBENCH_TEST_PROVIDER, ``embedded`` by default.

CI runs the suite once per leg. A test about one provider's own life cycle (its processes, its containers) runs
on that provider's leg only and says so when skipped elsewhere; everything else runs on every leg.
"""

from __future__ import annotations

import os

import pytest

LEG = os.environ.get("TURNBENCH_TEST_PROVIDER", "embedded")


def only_on(provider: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(LEG != provider, reason=f"about the {provider} provider itself: runs on the "
                                                      f"{provider} leg (TURNBENCH_TEST_PROVIDER={provider})")
