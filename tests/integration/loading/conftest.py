"""The tiny hand-written corpora the load tests share (tests.integration.tinycorpus)."""

from __future__ import annotations

import pytest

from tests.integration.tinycorpus import write_tiny_corpus
from turnbench.corpus.format import open_corpus


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return open_corpus(write_tiny_corpus(tmp_path_factory.mktemp("tiny") / "corpus"))


@pytest.fixture(scope="module")
def tiny_other(tmp_path_factory):
    return open_corpus(write_tiny_corpus(tmp_path_factory.mktemp("tiny1") / "corpus", variant=1))
