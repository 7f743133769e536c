"""turnbench.stack.jars: the flat classpath's checks, finding Java, and fetching jars when Maven cannot."""

from __future__ import annotations

import pytest

from tests.unit.stack.helpers import fake_java
from turnbench.errors import StackStartError
from turnbench.stack import jars


def test_check_classpath_accepts_one_version_per_artifact():
    jars.check_classpath(["opensearch-2.19.6.jar", "log4j-api-2.25.4.jar", "log4j-core-2.25.4.jar",
                          "netty-codec-4.1.135.Final.jar", "zstd-jni-1.5.5-5.jar"])


def test_check_classpath_refuses_duplicates():
    with pytest.raises(StackStartError, match="duplicate jars on the OpenSearch classpath: guava"):
        jars.check_classpath(["opensearch-2.19.6.jar", "guava-32.1.1-jre.jar", "guava-33.0.0-jre.jar",
                              "log4j-api-2.25.4.jar", "log4j-core-2.25.4.jar"])


def test_check_classpath_refuses_mismatched_log4j():
    with pytest.raises(StackStartError, match="log4j-core"):
        jars.check_classpath(["opensearch-2.19.6.jar", "log4j-api-2.25.4.jar", "log4j-core-2.21.0.jar"])


def test_java_missing_names_how_to_get_it(tmp_path):
    with pytest.raises(StackStartError, match=r"Java not found at .*apt-get install -y openjdk-17-jdk-headless"):
        jars.find_java(tmp_path / "nope" / "java")


@pytest.mark.parametrize("line", ['openjdk version "11.0.2" 2019-01-15', 'java version "1.8.0_292"'])
def test_java_too_old_is_refused(tmp_path, line):
    with pytest.raises(StackStartError, match=r"is too old: OpenSearch 2.19.6 needs 17\+"):
        jars.find_java(fake_java(tmp_path, line))


def test_java_17_is_accepted(tmp_path):
    found = jars.find_java(fake_java(tmp_path, 'openjdk version "17.0.15" 2025-04-15'))
    assert (found.major, found.version) == (17, "17.0.15")


def test_maven_unreachable_with_empty_cache_is_one_line(tmp_path):
    settings = tmp_path / "settings.xml"
    # every download goes to a loopback port where nothing listens
    settings.write_text(
        "<settings><mirrors><mirror><id>nowhere</id><mirrorOf>*</mirrorOf>"
        "<url>http://127.0.0.1:9/</url></mirror></mirrors></settings>"
    )
    from turnbench.stack import open_stack

    root = tmp_path / "cache" / "opensearch-2.19.6"
    with pytest.raises(StackStartError) as err:
        with open_stack("embedded", cache=tmp_path / "cache",
                        maven_args=("-s", str(settings), f"-Dmaven.repo.local={tmp_path / 'm2'}")):
            pytest.fail("the stack must not open")
    assert err.value.started_pids == ()
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("could not fetch the OpenSearch 2.19.6 jars with Maven and the cache")
    assert "is Maven Central reachable?" in message
    assert not (root / "lib").exists() and not (root / "jars.json").exists()


def test_offline_with_empty_cache_says_make_jars(tmp_path):
    with pytest.raises(StackStartError, match="run `make jars` first"):
        jars.ensure_jars(tmp_path / "c", offline=True)
