"""Fixtures for the harness tests; the builders live in tests.unit.harness.helpers."""

from __future__ import annotations

import pytest

from tests.unit.harness.helpers import meeting, small_world, turn, turn_passages, write_corpus
from turnbench.corpus import open_corpus


@pytest.fixture
def small_corpus(tmp_path):
    meetings, queries = small_world()
    # q4 names m9, which must exist as a meeting; give it turns but no passages
    m9 = meeting("m9", [turn(0, "fay", 0, 10, 10)])
    root = write_corpus(tmp_path / "corpus", [*meetings, m9], queries)
    return open_corpus(root), turn_passages(meetings)
