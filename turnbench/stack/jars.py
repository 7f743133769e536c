"""The OpenSearch jars the embedded node runs: the lock's files in the user cache, fetched once, verified always.

jars.lock.json (turnbench.stack.jarlock) pins every jar by size and sha256. ``prepare`` puts each in the
content-addressed store (turnbench.stack.fetch) — fetched over HTTPS from Maven Central, or the mirror in
TURNBENCH_MAVEN_REPOSITORY, when missing — unpacks the jars of zip entries, hashes every file against the lock
on every start (0.1 to 0.3 s for 65 MB; a file with other bytes is removed and fetched again), and
hands back the classpath with the shipped launcher classes first.

Maven is an optional fallback transport: when the repository cannot be reached from Python but ``mvn`` is
installed (with its settings' mirrors and proxies), Maven copies the pom's dependencies and each file is
verified against the lock the same way; Maven never decides which bytes run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from turnbench import canonical, settings
from turnbench.errors import FetchFailed, StackStartError
from turnbench.stack import fetch, jarlock, launcher, pins
from turnbench.stack.jarlock import Entry, Lock
from turnbench.stack.jdk import Java, find_java

LAUNCHER_CLASS = launcher.MAIN_CLASS


@dataclass(frozen=True)
class Launcher:
    java: Java
    classpath: tuple[Path, ...]  # the launcher classes, then the jars in file-name order
    store: Path
    lock_sha256: str
    fetched: tuple[str, ...]  # files this call fetched (empty: all were cached)
    replaced: tuple[str, ...]  # cached with other bytes than the lock pins: removed and fetched again
    seconds: float


def cache_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit)
    return settings.cache_dir()


def current_lock() -> Lock:
    lock = jarlock.read_lock(jarlock.LOCK)
    jarlock.require_current(lock, jarlock.POM)
    return lock


def prepare(
    *,
    java: Java | str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | None = None,
    mvn: str | None = None,
    maven_args: tuple[str, ...] = (),
    offline: bool = False,
) -> Launcher:
    """Java found, every node jar in the cache and verified (fetched when missing, unless ``offline``), the
    shipped launcher checked against its sources: the classpath to start the node with."""
    t0 = time.monotonic()
    found_java = java if isinstance(java, Java) else find_java(java)
    lock = current_lock()
    store = fetch.store_dir(cache_dir(cache))
    jars, report = ensure(lock, "node", store, mvn=mvn, maven_args=maven_args, offline=offline)
    check_classpath([p.name for p in jars])
    classes = launcher.shipped(compiler(lock))
    return Launcher(java=found_java, classpath=(classes, *jars), store=store,
                    lock_sha256=canonical.sha256_file(jarlock.LOCK), fetched=report.fetched,
                    replaced=report.replaced, seconds=time.monotonic() - t0)


def ensure(lock: Lock, use: str, store: Path, *, mvn: str | None = None, maven_args: Sequence[str] = (),
           offline: bool = False) -> tuple[list[Path], fetch.Report]:
    """The files of ``lock`` used for ``use`` in ``store``, verified; the jars of zip entries unpacked. Returns
    the jars in file-name order and what the fetch did."""
    entries = lock.used_for(use)
    repository = settings.maven_repository(lock.repository)
    items = [e.pinned(repository) for e in entries]
    what = f"OpenSearch {pins.OPENSEARCH_VERSION} files"
    try:
        report = fetch.ensure(items, store, offline=offline, what=what)
    except FetchFailed as exc:
        maven = mvn or shutil.which("mvn")
        if offline or not maven:
            raise FetchFailed(f"{exc} (is {repository} reachable? set {settings.MAVEN_REPOSITORY.name} to a mirror, "
                              "or install Maven to fetch through its settings)") from None
        _with_maven(entries, items, store, maven, maven_args, first_error=str(exc))
        report = fetch.ensure(items, store, offline=True, what=what)
        report = replace(report, replaced=tuple(sorted(set(report.replaced) | set(exc.replaced))))
    jars = {e.file: e.pinned(repository).path(store) for e in entries if e.type == "jar"}
    for entry in entries:
        if entry.type == "zip":
            jars.update(unpack(entry, store))
    return [jars[name] for name in sorted(jars)], report


def unpack(entry: Entry, store: Path) -> dict[str, Path]:
    """The jars of a zip entry, each placed in the store by its own pinned sha256."""
    placed = {}
    archive = entry.pinned(jarlock.CENTRAL).path(store)
    try:
        with zipfile.ZipFile(archive) as zf:
            for inner in entry.unpack:
                item = fetch.Pinned(inner.file, inner.sha256, inner.size, None)
                if not fetch.matches(item.path(store), item):
                    with zf.open(inner.file) as member:
                        fetch.install(item, member, store)
                placed[inner.file] = item.path(store)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise FetchFailed(f"{entry.file}: {exc}") from None
    return placed


def _with_maven(entries: Sequence[Entry], items: Sequence[fetch.Pinned], store: Path, mvn: str,
                maven_args: Sequence[str], *, first_error: str) -> None:
    """Maven copies the pom's dependencies into a temporary directory; the lock's files are verified from it."""
    with tempfile.TemporaryDirectory(prefix="turnbench-maven-") as tmp:
        shutil.copyfile(jarlock.POM, Path(tmp) / "pom.xml")  # Maven writes beside the pom it reads
        cmd = [mvn, "-B", "-q", "-f", str(Path(tmp) / "pom.xml"), *maven_args,
               f"{jarlock.DEPENDENCY_PLUGIN}:copy-dependencies", f"-DoutputDirectory={Path(tmp) / 'lib'}"]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            failed = "" if out.returncode == 0 else jarlock.maven_error(out.stdout + out.stderr)
        except (OSError, subprocess.TimeoutExpired) as exc:
            failed = str(exc)
        if failed:
            raise FetchFailed(f"{first_error}; Maven could not fetch them either: {failed}"[:300])
        for entry, item in zip(entries, items, strict=True):
            copied = Path(tmp) / "lib" / entry.file
            if not fetch.matches(item.path(store), item):
                try:
                    source = open(copied, "rb")  # noqa: SIM115 - closed below
                except OSError:
                    raise FetchFailed(f"Maven did not fetch {entry.file}") from None
                with source:
                    fetch.install(item, source, store)


def compiler(lock: Lock) -> Entry:
    """The Eclipse compiler the launcher classes are built with."""
    found = [e for e in lock.used_for("build") if e.artifact == "ecj"]
    if len(found) != 1:
        raise StackStartError(f"{jarlock.LOCK.name} must pin exactly one Eclipse compiler (ecj), not {len(found)}")
    return found[0]


_JAR = re.compile(r"(?P<artifact>.+?)-(?P<version>\d[^-]*(?:-[A-Za-z0-9.]+)?)\.jar")


def check_classpath(names: list[str]) -> None:
    """Refuse a flat classpath holding two versions of one artifact, or log4j-core and -api that differ."""
    versions: dict[str, list[str]] = {}
    for name in names:
        m = _JAR.fullmatch(name)
        if not m:
            continue
        versions.setdefault(m.group("artifact"), []).append(m.group("version"))
    dupes = sorted(a for a, vs in versions.items() if len(vs) > 1)
    if dupes:
        raise StackStartError(f"duplicate jars on the OpenSearch classpath: {', '.join(dupes)}")
    core, api = versions.get("log4j-core"), versions.get("log4j-api")
    if core != api:
        raise StackStartError(f"log4j-core {core} and log4j-api {api} differ: fix log4j.version in pom.xml")
    if versions.get("opensearch") != [pins.OPENSEARCH_VERSION]:
        raise StackStartError(f"the jars hold OpenSearch {versions.get('opensearch')}, not {pins.OPENSEARCH_VERSION}")


# -- maintenance: the lock and the launcher classes --------------------------------------------------------------
def update_lock(*, mvn: str | None = None, maven_args: Sequence[str] = ()) -> Lock | None:
    """Rewrite jars.lock.json from pom.xml with Maven when the pom changed since the lock was written; the new
    lock, or None when it was current (then Maven is not needed)."""
    try:
        old: Lock | None = jarlock.read_lock(jarlock.LOCK)
    except jarlock.LockError:
        old = None
    if old is not None and old.pom_sha256 == canonical.sha256_file(jarlock.POM):
        return None
    maven = mvn or shutil.which("mvn")
    if not maven:
        raise jarlock.LockError(f"{jarlock.POM.name} changed since {jarlock.LOCK.name} was written and Maven (mvn) "
                                "is not here to resolve it: install Maven, or restore the pom")
    new = jarlock.resolve(jarlock.POM, maven, maven_args)
    check_classpath(new.classpath_files("node"))
    compiler(new)
    canonical.write_bytes_atomic(jarlock.LOCK, jarlock.render(new))
    return new


def rebuild_launcher(*, check: bool, cache: str | os.PathLike[str] | None = None) -> tuple[int, Java, Entry]:
    """Rebuild the shipped launcher classes with the pinned compiler (``check``: compare instead of writing);
    the number of files, the Java that ran the compiler, and the compiler."""
    java = find_java()
    lock = current_lock()
    store = fetch.store_dir(cache_dir(cache))
    classpath, _ = ensure(lock, "node", store)
    ecj = compiler(lock)
    ensure(lock, "build", store)
    count = launcher.rebuild(java, ecj.pinned(lock.repository).path(store), ecj, classpath, check=check)
    return count, java, ecj
