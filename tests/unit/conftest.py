"""Fixtures every unit test shares.

Every unit test runs isolated from any real stack: a private state directory, no external endpoints, and a
Docker host where nothing answers, whatever the machine has. ``small_corpus`` is the hand-built corpus of
tests.unit.harness.helpers, used by the harness and the command-line tests alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.harness.helpers import meeting, small_world, turn, turn_passages, write_corpus
from turnbench.corpus import Corpus, open_corpus
from turnbench.passages import Passage


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("TURNBENCH_OPENSEARCH_URL", raising=False)
    monkeypatch.delenv("TURNBENCH_POSTGRES_DSN", raising=False)
    # no engine can answer here, whatever the machine has
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    # nothing is fetched into (or read from) the user's cache, and a jar fetch never leaves the machine
    monkeypatch.setenv("TURNBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TURNBENCH_MAVEN_REPOSITORY", "http://127.0.0.1:9")
    for switch in ("TURNBENCH_NO_SYSTEM_JAVA", "TURNBENCH_NO_SYSTEM_POSTGRES", "TURNBENCH_PG_BIN"):
        monkeypatch.delenv(switch, raising=False)
    from turnbench.stack import fetch

    monkeypatch.setattr(fetch, "RETRY_DELAY", 0.0)


@pytest.fixture
def small_corpus(tmp_path: Path) -> tuple[Corpus, list[Passage]]:
    meetings, queries = small_world()
    # q4 names m9, which must exist as a meeting; give it turns but no passages
    m9 = meeting("m9", [turn(0, "fay", 0, 10, 10)])
    root = write_corpus(tmp_path / "corpus", [*meetings, m9], queries)
    return open_corpus(root), turn_passages(meetings)


@pytest.fixture
def files():
    """A loopback file server (tests.unit.stack.helpers.Files), stopped after the test."""
    from tests.unit.stack.helpers import Files

    server = Files()
    yield server
    server.close()
