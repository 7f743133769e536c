"""turnbench.stack.info: StackInfo round-trips and reports the versions a claim records."""

from __future__ import annotations

from tests.unit.stack.helpers import INFO
from turnbench.stack import StackInfo


def test_stack_info_round_trips_and_reports_versions():
    assert StackInfo.from_json(INFO.to_json()) == INFO
    assert INFO.versions() == {"opensearch": "2.19.6", "lucene": "9.12.3", "postgresql": "15.18"}
