"""turnbench.stack.jars: the lock's jars in the store, verified on every use; Maven only as a fallback transport;
the flat classpath's checks."""

from __future__ import annotations

import hashlib
import io
import os
import zipfile

import pytest

from turnbench.errors import ArtifactMismatch, FetchFailed, StackStartError
from turnbench.stack import fetch, jarlock, jars
from turnbench.stack.jarlock import Entry, Inner, Lock


def _entry(name: str, version: str, body: bytes, *, kind: str = "jar", use: str = "node",
           unpack: tuple[Inner, ...] = ()) -> Entry:
    return Entry(group="org.example", artifact=name, version=version, classifier="", type=kind,
                 file=f"{name}-{version}.{kind}", sha256=hashlib.sha256(body).hexdigest(), size=len(body), use=use,
                 unpack=unpack)


def serve_lock(files, monkeypatch, bodies: dict[tuple[str, str], bytes], extra: tuple[Entry, ...] = ()) -> Lock:
    """A lock of ``bodies`` ((artifact, version) → bytes) served by ``files`` as a Maven repository."""
    entries = [_entry(a, v, b) for (a, v), b in sorted(bodies.items())] + list(extra)
    for entry, body in zip(entries, [*(b for _, b in sorted(bodies.items())), *(None for _ in extra)], strict=True):
        if body is not None:
            files.routes[f"/{entry.maven_path()}"] = body
    monkeypatch.setenv("TURNBENCH_MAVEN_REPOSITORY", files.url)
    return Lock(pom_sha256="0" * 64, repository=jarlock.CENTRAL, entries=tuple(entries))


def test_the_node_jars_are_fetched_from_the_repository_and_returned_in_name_order(files, monkeypatch, tmp_path):
    lock = serve_lock(files, monkeypatch, {("zeta", "1.0"): b"z" * 300, ("alpha", "2.0"): b"a" * 200})
    paths, report = jars.ensure(lock, "node", tmp_path / "store")
    assert [p.name for p in paths] == ["alpha-2.0.jar", "zeta-1.0.jar"]
    assert report.fetched == ("alpha-2.0.jar", "zeta-1.0.jar") and paths[1].read_bytes() == b"z" * 300


def test_a_tampered_jar_in_the_cache_is_refused_by_hash_and_fetched_again(files, monkeypatch, tmp_path):
    lock = serve_lock(files, monkeypatch, {("lucene-core", "9.12.3"): os.urandom(4096)})
    store = tmp_path / "store"
    (path,), _ = jars.ensure(lock, "node", store)
    original = path.read_bytes()
    path.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))  # one bit flipped, same size
    (again,), report = jars.ensure(lock, "node", store)
    assert report.replaced == ("lucene-core-9.12.3.jar",) and again.read_bytes() == original
    assert files.hits[f"/{lock.entries[0].maven_path()}"] == 2


def test_offline_with_an_empty_cache_says_make_jars(files, monkeypatch, tmp_path):
    lock = serve_lock(files, monkeypatch, {("a", "1"): b"a"})
    with pytest.raises(FetchFailed, match=r"not in the cache .*: fetch them first \(`make jars`\)"):
        jars.ensure(lock, "node", tmp_path / "store", offline=True)
    assert files.hits == {}


def test_the_jars_of_a_zip_entry_are_unpacked_verified(files, monkeypatch, tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("plugin-descriptor.properties", "x")
        zf.writestr("knn-2.19.6.0.jar", b"knn classes")
    body = buf.getvalue()
    inner = (Inner("knn-2.19.6.0.jar", hashlib.sha256(b"knn classes").hexdigest(), 11),)
    plugin = _entry("knn-plugin", "2.19.6.0", body, kind="zip", unpack=inner)
    lock = serve_lock(files, monkeypatch, {("core", "1"): b"c"}, extra=(plugin,))
    files.routes[f"/{plugin.maven_path()}"] = body
    paths, _ = jars.ensure(lock, "node", tmp_path / "store")
    assert [p.name for p in paths] == ["core-1.jar", "knn-2.19.6.0.jar"]
    assert paths[1].read_bytes() == b"knn classes"
    bad = (Inner("knn-2.19.6.0.jar", "0" * 64, 11),)
    lock = Lock(lock.pom_sha256, lock.repository, (lock.entries[0], _entry("knn-plugin", "2.19.6.0", body,
                                                                             kind="zip", unpack=bad)))
    with pytest.raises(ArtifactMismatch, match="knn-2.19.6.0.jar from the given source: 11 bytes with sha256"):
        jars.ensure(lock, "node", tmp_path / "store2")


def test_unreachable_repository_without_maven_is_one_line_and_leaves_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(jars.shutil, "which", lambda name: None)
    lock = Lock("0" * 64, jarlock.CENTRAL, (_entry("a", "1", b"a"),))
    with pytest.raises(FetchFailed) as err:
        jars.ensure(lock, "node", tmp_path / "store")
    message = str(err.value)
    assert message.startswith("could not fetch http://127.0.0.1:9/org/example/a/1/a-1.jar: ") and "\n" not in message
    assert "is http://127.0.0.1:9 reachable? set TURNBENCH_MAVEN_REPOSITORY to a mirror, or install Maven" in message
    assert not any(p.is_file() for p in (tmp_path / "store").rglob("*"))


def test_maven_is_the_fallback_and_its_failure_is_one_line(monkeypatch, tmp_path):
    if not jars.shutil.which("mvn"):
        pytest.skip("Maven is not installed here")
    settings = tmp_path / "settings.xml"
    # every Maven download goes to a loopback port where nothing listens
    settings.write_text("<settings><mirrors><mirror><id>nowhere</id><mirrorOf>*</mirrorOf>"
                        "<url>http://127.0.0.1:9/</url></mirror></mirrors></settings>")
    lock = Lock("0" * 64, jarlock.CENTRAL, (_entry("a", "1", b"a"),))
    with pytest.raises(FetchFailed) as err:
        jars.ensure(lock, "node", tmp_path / "store",
                    maven_args=("-s", str(settings), f"-Dmaven.repo.local={tmp_path / 'm2'}"))
    message = str(err.value)
    assert "\n" not in message and len(message) <= 300
    assert message.startswith("could not fetch http://127.0.0.1:9/") and "Maven could not fetch them either" in message
    assert not any(p.is_file() for p in (tmp_path / "store").rglob("*"))


def test_maven_fetched_files_are_verified_against_the_lock(monkeypatch, tmp_path):
    """A fake mvn that 'copies' a jar with other bytes than the lock pins: refused, nothing kept."""
    mvn = tmp_path / "mvn"
    mvn.write_text('#!/bin/sh\nfor a in "$@"; do case "$a" in -DoutputDirectory=*) d="${a#*=}";; esac; done\n'
                   'mkdir -p "$d" && printf b > "$d/a-1.jar"\n')
    mvn.chmod(0o755)
    lock = Lock("0" * 64, jarlock.CENTRAL, (_entry("a", "1", b"a"),))
    with pytest.raises(ArtifactMismatch, match="a-1.jar from the given source: 1 bytes with sha256"):
        jars.ensure(lock, "node", tmp_path / "store", mvn=str(mvn))
    assert not any(p.is_file() for p in (tmp_path / "store").rglob("*"))
    mvn.write_text(mvn.read_text().replace("printf b", "printf a"))
    (path,), _ = jars.ensure(lock, "node", tmp_path / "store", mvn=str(mvn))
    assert path.read_bytes() == b"a"


def test_a_lock_must_pin_one_compiler():
    lock = jarlock.read_lock()
    assert jars.compiler(lock).file == "ecj-3.46.0.jar"
    with pytest.raises(StackStartError, match="exactly one Eclipse compiler"):
        jars.compiler(Lock(lock.pom_sha256, lock.repository, lock.used_for("node")))


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


def test_store_paths_are_keyed_by_content(tmp_path):
    """Two locks pinning other bytes under one name never share a file."""
    a = fetch.Pinned("x-1.jar", "a" * 64, 1, None)
    b = fetch.Pinned("x-1.jar", "b" * 64, 1, None)
    assert a.path(tmp_path) != b.path(tmp_path) and a.path(tmp_path).name == b.path(tmp_path).name
