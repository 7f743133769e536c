"""turnbench.stack.jarlock: the lock in the repository agrees with the pom, and the format refuses what it must."""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET
import zipfile

import pytest

from turnbench.stack import jarlock, jars, pins
from turnbench.stack.jarlock import LockError

NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def _pom_dependencies():
    root = ET.parse(jarlock.POM).getroot()
    props = {p.tag.split("}")[1]: p.text for p in root.find("m:properties", NS)}
    for dep in root.findall("m:dependencies/m:dependency", NS):
        version = re.sub(r"\$\{([^}]+)\}", lambda m: props[m.group(1)], dep.find("m:version", NS).text)
        scope = dep.find("m:scope", NS)
        yield (dep.find("m:groupId", NS).text, dep.find("m:artifactId", NS).text, version,
               scope.text if scope is not None else "compile")


def test_the_lock_was_written_from_the_pom_beside_it():
    lock = jarlock.read_lock()
    assert lock.pom_sha256 == hashlib.sha256(jarlock.POM.read_bytes()).hexdigest(), (
        "pom.xml changed after jars.lock.json was written: run `make jars` and commit both")
    assert lock.repository == jarlock.CENTRAL


def test_every_pom_dependency_is_locked_at_its_version_and_use():
    lock = jarlock.read_lock()
    locked = {(e.group, e.artifact): e for e in lock.entries}
    for group, artifact, version, scope in _pom_dependencies():
        entry = locked.get((group, artifact))
        assert entry is not None, f"{group}:{artifact} is in the pom but not in the lock"
        assert (entry.version, entry.use) == (version, jarlock.USES[scope]), f"{group}:{artifact}"


def test_the_locked_classpath_is_one_flat_consistent_set():
    lock = jarlock.read_lock()
    names = lock.classpath_files("node")
    jars.check_classpath(names)
    assert f"opensearch-{pins.OPENSEARCH_VERSION}.jar" in names and "icu4j-77.1.jar" in names
    assert [e.file for e in lock.used_for("build")] == ["ecj-3.46.0.jar"]  # never on the node's classpath
    assert "ecj-3.46.0.jar" not in names


def test_the_lock_renders_back_to_its_own_bytes():
    assert jarlock.render(jarlock.read_lock()) == jarlock.LOCK.read_bytes()


def _write(tmp_path, **change):
    doc = json.loads(jarlock.LOCK.read_text())
    doc["artifacts"] = doc["artifacts"][:2]
    doc["artifacts"][0].update(change)
    path = tmp_path / "jars.lock.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(("change", "reason"), [
    ({"sha256": "00"}, "not a pinned file"),
    ({"file": "../../etc/passwd"}, "is not the file of"),
    ({"use": "everywhere"}, "use 'everywhere'"),
    ({"type": "war"}, "type 'war'"),
    ({"group": "org/../../x"}, "coordinates are not plain names"),
    ({"size": "many"}, "ValueError"),
    ({"unpack": [{"file": "a-1.jar", "sha256": "0" * 64, "size": 1}]}, "only a zip has jars to unpack"),
])
def test_a_malformed_entry_is_refused_naming_the_lock(tmp_path, change, reason):
    path = _write(tmp_path, **change)
    with pytest.raises(LockError, match=re.escape(reason)) as err:
        jarlock.read_lock(path)
    assert str(err.value).startswith(f"{path}: ")


@pytest.mark.parametrize("text", ["", "[]", '{"format": "other/1"}', "{not json",
                                  '{"format": "turnbench-jars-lock/1", "artifacts": [1], "pom_sha256": "", '
                                  '"repository": ""}',
                                  '{"format": "turnbench-jars-lock/1", "artifacts": [], "pom_sha256": "' + "0" * 64
                                  + '", "repository": "file:///etc"}'])
def test_a_file_that_is_not_a_lock_is_refused(tmp_path, text):
    path = tmp_path / "jars.lock.json"
    path.write_text(text)
    with pytest.raises(LockError, match=f"^{re.escape(str(path))}: "):
        jarlock.read_lock(path)


def test_a_lock_from_another_pom_is_refused(tmp_path):
    pom = tmp_path / "pom.xml"
    pom.write_bytes(jarlock.POM.read_bytes() + b"\n")
    with pytest.raises(LockError, match="pom.xml changed since jars.lock.json was written from it: rewrite"):
        jarlock.require_current(jarlock.read_lock(), pom)


def test_dependency_list_lines_parse_with_and_without_classifiers():
    text = "\n".join([
        "The following files have been resolved:",
        "   org.a:b:jar:1.0:compile:/m2/org/a/b/1.0/b-1.0.jar -- module b [auto]",
        "   com.github.luben:zstd-jni:jar:linux:1.5.5-5:runtime:/m2/z.jar",
        "   org.eclipse.jdt:ecj:jar:3.46.0:provided:/m2/ecj.jar (optional) -- module org.eclipse",
    ])
    parsed = jarlock.parse_listing(text)
    assert [(g, a, k, c, v, s, str(p)) for g, a, k, c, v, s, p in parsed] == [
        ("org.a", "b", "jar", "", "1.0", "compile", "/m2/org/a/b/1.0/b-1.0.jar"),
        ("com.github.luben", "zstd-jni", "jar", "linux", "1.5.5-5", "runtime", "/m2/z.jar"),
        ("org.eclipse.jdt", "ecj", "jar", "", "3.46.0", "provided", "/m2/ecj.jar"),
    ]
    with pytest.raises(LockError, match="named no files"):
        jarlock.parse_listing("The following files have been resolved:\n   none\n")


def test_a_plugin_zip_is_pinned_with_the_jars_inside_it(tmp_path):
    plugin = tmp_path / "opensearch-knn-2.19.6.0.zip"
    with zipfile.ZipFile(plugin, "w") as zf:
        zf.writestr("plugin-descriptor.properties", "classname=x\n")
        zf.writestr("opensearch-knn-2.19.6.0.jar", b"knn")
        zf.writestr("lib/nested-1.jar", b"not at the top")
    entry = jarlock._pin_resolved("org.opensearch.plugin", "opensearch-knn", "zip", "", "2.19.6.0", "compile", plugin)
    assert entry.type == "zip" and entry.use == "node"
    assert [(i.file, i.sha256, i.size) for i in entry.unpack] == [
        ("opensearch-knn-2.19.6.0.jar", hashlib.sha256(b"knn").hexdigest(), 3)]
    assert jarlock._entry(entry.to_json()) == entry
