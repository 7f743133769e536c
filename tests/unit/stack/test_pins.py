"""The pinned versions are one set: pom.xml, the docker provider and the compose file agree with pins.py."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from turnbench.stack import jarlock, pins

NS = {"m": "http://maven.apache.org/POM/4.0.0"}
REPO = Path(__file__).resolve().parents[3]


def _pom():
    return ET.parse(jarlock.POM).getroot()


def test_pom_pins_the_same_opensearch_version():
    assert _pom().find("m:properties/m:opensearch.version", NS).text == pins.OPENSEARCH_VERSION == "2.19.6"


def test_pom_fetches_every_plugin_module_log4j_core_icu4j_and_the_launcher_compiler():
    artifacts = {d.find("m:artifactId", NS).text for d in _pom().findall("m:dependencies/m:dependency", NS)}
    expected = {artifact for artifact, _ in pins.OPENSEARCH_PLUGINS}
    expected |= {"opensearch", "opensearch-scripting-painless-spi", "log4j-core", "icu4j", "ecj"}
    assert artifacts == expected




