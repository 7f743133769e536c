"""turnbench.stack.info: StackInfo round-trips and reports the versions a claim records."""

from __future__ import annotations

from dataclasses import replace

from tests.unit.stack.helpers import INFO
from turnbench.stack import StackInfo


def test_stack_info_round_trips_and_reports_versions():
    assert StackInfo.from_json(INFO.to_json()) == INFO
    # the claim holds what the pins fix; the exact strings (a distribution's point release) go to runinfo
    assert INFO.versions() == {"opensearch": "2.19.6", "lucene": "9.12.3", "postgresql": "15"}
    assert INFO.full_versions() == {"opensearch": "2.19.6", "lucene": "9.12.3", "postgresql": "15.18"}
    debian = replace(INFO, postgres_version="15.18 (Debian 15.18-0+deb12u1)")
    assert debian.versions() == INFO.versions() and debian.postgres_major == "15"


def test_runinfo_records_the_images_that_ran_not_which_containers():
    images = {"opensearch": {"name": "turnbench-local/opensearch:2.19.6", "id": "sha256:" + "1" * 64},
              "postgres": {"name": "postgres:15", "id": "sha256:" + "2" * 64}}
    docker = replace(INFO, provider="docker", postgres_version="15.20 (Debian 15.20-0+deb12u1)",
                     details={"containers": ["c" * 64], "images": images, "label": "org.turnbench.stack=x",
                              "opensearch": {"heap": "1g"}, "chosen_because": "asked for"})
    assert docker.runinfo() == {"provider": "docker", "chosen_because": "asked for", "images": images,
                                "opensearch": {"heap": "1g"},
                                "versions": {"opensearch": "2.19.6", "lucene": "9.12.3",
                                             "postgresql": "15.20 (Debian 15.20-0+deb12u1)"}}
    assert docker.versions() == INFO.versions()  # the claim: what the pins fix, whatever ran them
