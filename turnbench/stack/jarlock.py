"""jars.lock.json: every file the embedded node needs from Maven Central, pinned by size and sha256.

The lock is written from pom.xml by ``turnbench jars --update-lock`` (``make jars``), which has Maven (its
dependency plugin pinned) resolve the pom and hashes the files it resolved; everything else reads only the lock
and needs only Python. One entry per line, so a version bump reads as a diff::

    {"artifact":"lucene-core","classifier":"","file":"lucene-core-9.12.3.jar","group":"org.apache.lucene",
     "sha256":"…","size":…,"type":"jar","use":"node","version":"9.12.3"}

``use`` says where a file goes: ``node``, the node's flat classpath; ``build``, only to compile the launcher
(the Eclipse compiler, ``provided`` scope in the pom). An entry of ``type`` ``zip`` (an OpenSearch plugin zip)
also carries ``unpack``: the jars inside it, each with its own size and sha256, which are unpacked into the
store and go where ``use`` says. ``pom_sha256`` is the pom the lock was written from: a pom edited without
rewriting the lock is refused, so the jars that run are always the ones the pom names.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.errors import BadInput, Refusal
from turnbench.stack.fetch import Pinned

JAVA_DIR = Path(__file__).with_name("java")
POM = JAVA_DIR / "pom.xml"
LOCK = JAVA_DIR / "jars.lock.json"
FORMAT = "turnbench-jars-lock/1"
CENTRAL = "https://repo1.maven.org/maven2"
USES = {"compile": "node", "runtime": "node", "provided": "build"}
# pinned so that the same pom resolves to the same list whatever Maven version a maintainer has
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]*")


class LockError(Refusal):
    """The jar lock is missing, malformed, or no longer matches the pom it was written from."""


@dataclass(frozen=True)
class Inner:
    """A jar inside a zip entry."""

    file: str
    sha256: str
    size: int


@dataclass(frozen=True)
class Entry:
    group: str
    artifact: str
    version: str
    classifier: str
    type: str  # "jar" | "zip"
    file: str
    sha256: str
    size: int
    use: str  # "node" | "build"
    unpack: tuple[Inner, ...] = ()

    def maven_path(self) -> str:
        return f"{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.file}"

    def pinned(self, repository: str) -> Pinned:
        return Pinned(self.file, self.sha256, self.size, f"{repository}/{self.maven_path()}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: getattr(self, k) for k in ("artifact", "classifier", "file", "group", "sha256",
                                                              "size", "type", "use", "version")}
        if self.unpack:
            out["unpack"] = [{"file": i.file, "sha256": i.sha256, "size": i.size} for i in self.unpack]
        return out


@dataclass(frozen=True)
class Lock:
    pom_sha256: str
    repository: str
    entries: tuple[Entry, ...]

    def used_for(self, use: str) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.use == use)

    def classpath_files(self, use: str = "node") -> list[str]:
        """The names of the jars that end up on a classpath: plain jars and the jars unpacked from zips."""
        names = [e.file for e in self.used_for(use) if e.type == "jar"]
        names += [i.file for e in self.used_for(use) for i in e.unpack]
        return sorted(names)


def file_name(artifact: str, version: str, classifier: str, kind: str) -> str:
    """The name Maven's copy-dependencies gives a file, and the last part of its repository path."""
    return f"{artifact}-{version}{'-' + classifier if classifier else ''}.{kind}"


# -- reading and writing ---------------------------------------------------------------------------------------
def read_lock(path: Path = LOCK) -> Lock:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise LockError(f"{path}: cannot be read ({exc.strerror})") from None
    except ValueError as exc:
        raise LockError(f"{path}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise LockError(f"{path}: not a {FORMAT} file")
    try:
        entries = tuple(_entry(e) for e in doc["artifacts"])
        lock = Lock(pom_sha256=str(doc["pom_sha256"]), repository=str(doc["repository"]), entries=entries)
    except (KeyError, TypeError, ValueError, AttributeError, BadInput) as exc:
        raise LockError(f"{path}: malformed entry ({type(exc).__name__}: {exc})") from None
    if not re.fullmatch(r"https://[A-Za-z0-9.\-]+(/[A-Za-z0-9._~\-/]*)?", lock.repository) or not re.fullmatch(
            r"[0-9a-f]{64}", lock.pom_sha256):
        raise LockError(f"{path}: repository must be an https URL and pom_sha256 a sha256")
    files = [e.file for e in entries] + [i.file for e in entries for i in e.unpack]
    if len(set(files)) != len(files):
        raise LockError(f"{path}: a file name appears twice")
    return lock


def _entry(obj: Mapping[str, Any]) -> Entry:
    unpack = tuple(Inner(str(i["file"]), str(i["sha256"]), int(i["size"])) for i in obj.get("unpack", []))
    entry = Entry(group=str(obj["group"]), artifact=str(obj["artifact"]), version=str(obj["version"]),
                  classifier=str(obj["classifier"]), type=str(obj["type"]), file=str(obj["file"]),
                  sha256=str(obj["sha256"]), size=int(obj["size"]), use=str(obj["use"]), unpack=unpack)
    if entry.type not in ("jar", "zip") or entry.use not in set(USES.values()):
        raise ValueError(f"{entry.file}: type {entry.type!r} / use {entry.use!r}")
    if entry.file != file_name(entry.artifact, entry.version, entry.classifier, entry.type):
        raise ValueError(f"{entry.file} is not the file of {entry.group}:{entry.artifact}:{entry.version}")
    if not all(_NAME.fullmatch(p) for p in (entry.group, entry.artifact, entry.version)):
        raise ValueError(f"{entry.file}: coordinates are not plain names")
    if unpack and entry.type != "zip":
        raise ValueError(f"{entry.file}: only a zip has jars to unpack")
    entry.pinned(CENTRAL)  # checks the name, sha256 and size
    for inner in unpack:
        Pinned(inner.file, inner.sha256, inner.size, None)
    return entry


def render(lock: Lock) -> bytes:
    lines = [canonical.dumps(e.to_json()) for e in sorted(lock.entries, key=lambda e: (e.use, e.file))]
    body = (
        "{\n"
        f'"format":"{FORMAT}",\n'
        f'"pom_sha256":"{lock.pom_sha256}",\n'
        f'"repository":"{lock.repository}",\n'
        '"artifacts":[\n' + ",\n".join(lines) + "\n]\n}\n"
    )
    json.loads(body)  # the frame is written by hand, one entry per line for readable diffs: it must still parse
    return body.encode("utf-8")


def require_current(lock: Lock, pom: Path = POM) -> None:
    """Refuse a lock written from another pom: the jars would not be the ones the pom names."""
    if canonical.sha256_file(pom) != lock.pom_sha256:
        raise LockError(f"{pom.name} changed since {LOCK.name} was written from it: rewrite the lock with "
                        "`make jars` (needs Maven once) and commit both")


# -- writing the lock from the pom with Maven ------------------------------------------------------------------
def resolve(pom: Path, mvn: str, maven_args: Sequence[str] = ()) -> Lock:
    """Have Maven resolve ``pom`` and pin every file it resolved, read from Maven's local repository."""
    with tempfile.TemporaryDirectory(prefix="turnbench-lock-") as tmp:
        shutil.copyfile(pom, Path(tmp) / "pom.xml")  # Maven writes beside the pom it reads
        listing = Path(tmp) / "dependencies.txt"
        cmd = [mvn, "-B", "-q", "--strict-checksums", "-f", str(Path(tmp) / "pom.xml"), *maven_args,
               f"{DEPENDENCY_PLUGIN}:list", "-DoutputAbsoluteArtifactFilename=true", f"-DoutputFile={listing}"]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise LockError(f"Maven did not resolve {pom.name}: {exc}") from None
        if out.returncode != 0 or not listing.is_file():
            raise LockError(f"Maven could not resolve {pom.name}: {maven_error(out.stdout + out.stderr)}")
        entries = [_pin_resolved(*dep) for dep in parse_listing(listing.read_text(encoding="utf-8"))]
    return Lock(pom_sha256=canonical.sha256_file(pom), repository=CENTRAL, entries=tuple(entries))


def parse_listing(text: str) -> list[tuple[str, str, str, str, str, str, Path]]:
    """(group, artifact, type, classifier, version, scope, file) for each line of ``dependency:list`` output
    written with absolute file names: ``g:a:type[:classifier]:version:scope:/path [-- module m]``."""
    found = []
    for line in text.splitlines():
        line = re.sub(r"\s+--\s+module\s.*$", "", line.strip()).replace(" (optional)", "")
        parts = line.split(":")
        if len(parts) < 6 or not line or line.startswith("The following"):
            continue
        if parts[4] in ("compile", "runtime", "provided", "system", "test"):
            group, artifact, kind, version, scope = parts[:5]
            classifier, path = "", ":".join(parts[5:])
        else:
            group, artifact, kind, classifier, version, scope = parts[:6]
            path = ":".join(parts[6:])
        found.append((group, artifact, kind, classifier, version, scope, Path(path)))
    if not found:
        raise LockError("Maven's dependency list named no files")
    return found


def _pin_resolved(group: str, artifact: str, kind: str, classifier: str, version: str, scope: str,
                  path: Path) -> Entry:
    if scope not in USES:
        raise LockError(f"{group}:{artifact}:{version} has scope {scope}: only compile, runtime and provided "
                        "dependencies belong in the pom")
    if kind not in ("jar", "zip"):
        raise LockError(f"{group}:{artifact}:{version} is a {kind}, not a jar or zip")
    return Entry(group=group, artifact=artifact, version=version, classifier=classifier, type=kind,
                 file=file_name(artifact, version, classifier, kind), sha256=canonical.sha256_file(path),
                 size=path.stat().st_size, use=USES[scope], unpack=zip_jars(path) if kind == "zip" else ())


def zip_jars(path: Path) -> tuple[Inner, ...]:
    """The jars at the top of a plugin zip (where OpenSearch's plugin zips keep them), each pinned."""
    import hashlib
    import zipfile

    inner = []
    with zipfile.ZipFile(path) as zf:
        for info in sorted(zf.infolist(), key=lambda i: i.filename):
            if info.filename.endswith(".jar") and "/" not in info.filename:
                digest = hashlib.sha256()
                with zf.open(info) as member:
                    for block in iter(lambda: member.read(1 << 20), b""):
                        digest.update(block)
                inner.append(Inner(info.filename, digest.hexdigest(), info.file_size))
    if not inner:
        raise LockError(f"{path.name} holds no jars to unpack")
    return tuple(inner)


def maven_error(output: str) -> str:
    """The first [ERROR] line of Maven's output, without colour codes and help links."""
    errors = [ln for ln in output.splitlines() if "[ERROR]" in ln]
    first = re.sub(r"\x1b\[[0-9;]*m", "", errors[0]).strip() if errors else "no [ERROR] line"
    return re.sub(r"^\[ERROR\]\s*|\s*-> \[Help \d+\]$", "", first)[:300]
