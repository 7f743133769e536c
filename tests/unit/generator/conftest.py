"""A small generated corpus shared by the generator tests (generated once per session, copied per test)."""

from __future__ import annotations

import pytest

from turnbench.generator.config import GeneratorConfig
from turnbench.generator.generate import generate

# series titles, so every aggregation rule is asked (R6 reads titles); the default, opaque titles, has its own tests
SMALL = GeneratorConfig(seed=11, meetings=40, words_per_meeting=600, titles="series")


@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("gen") / "corpus"
    generate(SMALL, root)
    return root


@pytest.fixture
def corpus_copy(generated, tmp_path):
    from tests.unit.generator.helpers import copy_corpus

    return copy_corpus(generated, tmp_path / "corpus")
