"""The pinned versions are one set: pom.xml, the docker provider and the compose file agree with pins.py."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from turnbench.stack import docker, jars, pins

NS = {"m": "http://maven.apache.org/POM/4.0.0"}
REPO = Path(__file__).resolve().parents[3]


def _pom():
    return ET.parse(jars.POM).getroot()


def test_pom_pins_the_same_opensearch_version():
    assert _pom().find("m:properties/m:opensearch.version", NS).text == pins.OPENSEARCH_VERSION == "2.19.6"


def test_pom_fetches_every_plugin_module_and_log4j_core():
    artifacts = {d.find("m:artifactId", NS).text for d in _pom().findall("m:dependencies/m:dependency", NS)}
    expected = {artifact for artifact, _ in pins.OPENSEARCH_PLUGINS}
    expected |= {"opensearch", "opensearch-scripting-painless-spi", "log4j-core"}
    assert artifacts == expected


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
