"""turnbench.stack.registry: the one chooser for `auto` and the provider table."""

from __future__ import annotations

import pytest

from turnbench.errors import BadInput
from turnbench.stack.registry import choose


def test_auto_without_engine_or_record_picks_embedded_and_says_why():
    choice = choose("auto", {}, detached=False)
    assert choice.provider == "embedded"
    assert choice.why.startswith("no recorded stack answers and no Docker engine answers: ")
    assert choice.why.endswith("no-docker.sock does not exist (DOCKER_HOST names the engine)")


def test_unknown_provider_is_bad_input():
    with pytest.raises(BadInput, match="unknown stack provider 'podman'"):
        choose("podman", {}, detached=False)
