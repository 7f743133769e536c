"""Java, the OpenSearch jars and the launcher: found or fetched once, then cached per version.

The jars come from Maven Central through the pom.xml shipped beside the launcher source. They land in
``<cache>/opensearch-<version>/lib`` with a stamp naming the pom's hash, so a later start reads only the
cache and never touches the network.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from turnbench import canonical
from turnbench.errors import StackStartError
from turnbench.stack import pins

JAVA_DIR = Path(__file__).with_name("java")
POM = JAVA_DIR / "pom.xml"
LAUNCHER_SOURCE = JAVA_DIR / "TurnbenchNode.java"
LAUNCHER_CLASS = "turnbench.stack.TurnbenchNode"
JDK_HINT = "install a JDK 17+ (Debian: apt-get install -y openjdk-17-jdk-headless) or set JAVA_HOME"


@dataclass(frozen=True)
class Java:
    java: Path
    javac: Path | None
    major: int
    version: str


@dataclass(frozen=True)
class Launcher:
    java: Java
    classpath: tuple[Path, ...]
    cache_root: Path
    fetched: bool  # True when this call ran Maven (the network was used)


def cache_dir(explicit: str | os.PathLike | None = None) -> Path:
    if explicit:
        return Path(explicit)
    if os.environ.get("TURNBENCH_CACHE_DIR"):
        return Path(os.environ["TURNBENCH_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "turnbench"


def find_java(explicit: str | os.PathLike | None = None) -> Java:
    """The java to run the node with: ``explicit``, else $JAVA_HOME/bin/java, else java on PATH."""
    if explicit:
        java = Path(explicit)
    elif os.environ.get("JAVA_HOME") and (Path(os.environ["JAVA_HOME"]) / "bin" / "java").exists():
        java = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
    else:
        found = shutil.which("java")
        if not found:
            raise StackStartError(f"Java not found (no JAVA_HOME, no java on PATH): {JDK_HINT}")
        java = Path(found)
    if not java.exists():
        raise StackStartError(f"Java not found at {java}: {JDK_HINT}")
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StackStartError(f"Java at {java} does not run ({exc}): {JDK_HINT}") from None
    match = re.search(r'version "([^"]+)"', out.stderr + out.stdout)
    if out.returncode != 0 or not match:
        raise StackStartError(f"Java at {java} does not report a version: {JDK_HINT}")
    version = match.group(1)
    parts = version.split(".")
    leading = re.match(r"\d+", parts[0])
    major = int(parts[1]) if parts[0] == "1" else int(leading.group(0)) if leading else 0
    if major < pins.MIN_JAVA_MAJOR:
        raise StackStartError(
            f"Java {version} at {java} is too old: OpenSearch {pins.OPENSEARCH_VERSION} needs "
            f"{pins.MIN_JAVA_MAJOR}+; {JDK_HINT}"
        )
    beside = java.resolve().with_name("javac")
    on_path = shutil.which("javac")
    javac = beside if beside.exists() else Path(on_path) if on_path else None
    return Java(java=java, javac=javac, major=major, version=version)


def prepare(
    *,
    java: Java | str | os.PathLike | None = None,
    cache: str | os.PathLike | None = None,
    mvn: str | None = None,
    maven_args: tuple[str, ...] = (),
    offline: bool = False,
) -> Launcher:
    """Java checked, jars cached (fetching them if needed and allowed), launcher compiled: the classpath."""
    found_java = java if isinstance(java, Java) else find_java(java)
    root = cache_dir(cache) / f"opensearch-{pins.OPENSEARCH_VERSION}"
    jars, fetched = ensure_jars(root, mvn=mvn, maven_args=maven_args, offline=offline)
    classes = ensure_launcher(root, found_java)
    return Launcher(java=found_java, classpath=(classes, *jars), cache_root=root, fetched=fetched)


def _stamp(root: Path) -> Path:
    return root / "jars.json"


def cached_jars(root: Path) -> list[Path] | None:
    """The cached jar list when the cache is complete and was filled from the current pom, else None."""
    try:
        stamp = json.loads(_stamp(root).read_text())
    except (OSError, ValueError):
        return None
    if stamp.get("pom_sha256") != canonical.sha256_file(POM):
        return None
    jars = [root / "lib" / name for name in stamp.get("jars", [])]
    if not jars or not all(j.is_file() for j in jars):
        return None
    return jars


def ensure_jars(
    root: Path, *, mvn: str | None = None, maven_args: tuple[str, ...] = (), offline: bool = False
) -> tuple[list[Path], bool]:
    jars = cached_jars(root)
    if jars is not None:
        return jars, False
    if offline:
        raise StackStartError(
            f"the OpenSearch {pins.OPENSEARCH_VERSION} jars are not cached in {root}: run `make jars` first"
        )
    mvn_path = mvn or shutil.which("mvn")
    if not mvn_path or not Path(mvn_path).exists():
        raise StackStartError(
            f"Maven (mvn) not found and the jar cache {root} is empty: install Maven (apt-get install -y maven) "
            "or fill the cache with `make jars` elsewhere and copy it"
        )
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f"fetch-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        # Maven works in a copy of the pom so that nothing is written into the installed package.
        shutil.copyfile(POM, staging / "pom.xml")
        cmd = [
            mvn_path, "-B", "-q", "-f", str(staging / "pom.xml"), *maven_args,
            "dependency:copy-dependencies", f"-DoutputDirectory={staging / 'lib'}",
        ]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired:
            raise StackStartError("Maven did not finish fetching the OpenSearch jars within 15 minutes") from None
        if out.returncode != 0:
            errors = [ln for ln in (out.stdout + out.stderr).splitlines() if "[ERROR]" in ln]
            first = re.sub(r"\x1b\[[0-9;]*m", "", errors[0]).strip() if errors else f"exit {out.returncode}"
            first = re.sub(r"^\[ERROR\]\s*|\s*-> \[Help \d+\]$", "", first)
            raise StackStartError(
                f"could not fetch the OpenSearch {pins.OPENSEARCH_VERSION} jars with Maven and the cache {root} "
                f"is empty (is Maven Central reachable?): {first[:300]}"
            )
        names = sorted(p.name for p in (staging / "lib").glob("*.jar"))
        check_classpath(names)
        lib = root / "lib"
        shutil.rmtree(lib, ignore_errors=True)
        (staging / "lib").rename(lib)
        canonical.write_json(_stamp(root), {"pom_sha256": canonical.sha256_file(POM), "jars": names})
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [root / "lib" / n for n in names], True


_JAR = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d[^-]*(?:-[A-Za-z0-9.]+)?)\.jar$")


def check_classpath(names: list[str]) -> None:
    """Refuse a flat classpath holding two versions of one artifact, or log4j-core and -api that differ."""
    versions: dict[str, list[str]] = {}
    for name in names:
        m = _JAR.match(name)
        if not m:
            continue
        versions.setdefault(m.group("artifact"), []).append(m.group("version"))
    dupes = sorted(a for a, vs in versions.items() if len(vs) > 1)
    if dupes:
        raise StackStartError(f"duplicate jars on the OpenSearch classpath: {', '.join(dupes)}")
    core, api = versions.get("log4j-core"), versions.get("log4j-api")
    if core != api:
        raise StackStartError(f"log4j-core {core} and log4j-api {api} differ: fix log4j.version in {POM.name}")
    if versions.get("opensearch") != [pins.OPENSEARCH_VERSION]:
        raise StackStartError(f"the jars hold OpenSearch {versions.get('opensearch')}, not {pins.OPENSEARCH_VERSION}")


def ensure_launcher(root: Path, java: Java) -> Path:
    """The compiled launcher, in a directory named by its source hash, so an edit recompiles without Maven."""
    digest = canonical.sha256_file(LAUNCHER_SOURCE)[:16]
    classes = root / f"launcher-{digest}"
    if (classes / "turnbench" / "stack" / "TurnbenchNode.class").is_file():
        return classes
    if java.javac is None:
        raise StackStartError(f"javac not found beside {java.java} (a JRE without compiler?): {JDK_HINT}")
    staging = root / f"launcher-build-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        out = subprocess.run(
            [str(java.javac), "-d", str(staging), "-cp", str(root / "lib" / "*"), "--release",
             str(pins.MIN_JAVA_MAJOR), str(LAUNCHER_SOURCE)],
            capture_output=True, text=True, timeout=300,
        )
        if out.returncode != 0:
            first = (out.stderr or out.stdout).strip().splitlines()[:1]
            raise StackStartError(f"compiling the OpenSearch launcher failed: {first[0] if first else out.returncode}")
        shutil.rmtree(classes, ignore_errors=True)
        staging.rename(classes)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return classes
