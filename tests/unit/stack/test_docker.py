"""turnbench.stack.docker: the provider without an engine says so in one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from turnbench.errors import StackStartError
from turnbench.stack import docker, pins

REPO = Path(__file__).resolve().parents[3]


def test_docker_provider_without_engine_is_a_clear_start_error():
    expected = r"^no Docker engine answers \(.*\): start Docker, or use --provider embedded$"
    with pytest.raises(StackStartError, match=expected):
        docker.DockerStack().start()


def test_docker_plan_uses_the_pinned_images_with_security_off():
    plan = docker.container_plan(heap="768m")
    assert plan["opensearch"]["image"] == "opensearchproject/opensearch:2.19.6"
    assert plan["postgres"]["image"] == "postgres:15"
    env = plan["opensearch"]["env"]
    assert env["DISABLE_SECURITY_PLUGIN"] == "true"
    assert env["discovery.type"] == "single-node"
    assert env["OPENSEARCH_JAVA_OPTS"] == "-Xms768m -Xmx768m"
    assert plan["postgres"]["env"]["POSTGRES_DB"] == "turnbench"


def test_compose_file_pins_the_same_images_on_loopback_only():
    text = (REPO / "compose" / "docker-compose.yml").read_text()
    assert sorted(re.findall(r"^\s+image:\s*(\S+)", text, re.M)) == sorted([pins.OPENSEARCH_IMAGE, pins.POSTGRES_IMAGE])
    published = re.findall(r'^\s+- "([^"]+)"', text, re.M)
    assert len(published) == 2 and all(p.startswith("127.0.0.1:") for p in published)
    assert text.count("healthcheck:") == 2
    assert 'DISABLE_SECURITY_PLUGIN: "true"' in text
