"""Provider ``embedded``: a real OpenSearch node in a JVM turnbench starts, and a real PostgreSQL from server
binaries, both on loopback at free ports with private data directories. For machines without a Docker engine.

``EmbeddedStack.start`` owns the order of steps: check everything that can be checked before anything runs
(Java, jars, PostgreSQL binaries, ports), launch the JVM, start PostgreSQL while the JVM boots, wait for both,
check the node's plugins, then describe. Any failure stops whatever was started before the error leaves.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from turnbench import canonical
from turnbench.errors import StackStartError, TurnbenchError
from turnbench.stack import jars, pins
from turnbench.stack._proc import LOOPBACK, free_port, http_json, is_running, require_free_port, start_ticks, stop_pids, tail
from turnbench.stack.external import describe
from turnbench.stack.info import StackInfo

DEFAULT_HEAP = "1g"
DEFAULT_TIMEOUT = 180.0
PG_USER = "turnbench"
PG_DB = "turnbench"

JVM_FLAGS = (
    # the flags a distribution's jvm.options sets that change behaviour, not only speed
    "-Djava.locale.providers=SPI,COMPAT",
    "-Dfile.encoding=UTF-8",
    "-Djna.nosys=true",
    "-Dlog4j2.disable.jmx=true",
    "-Dlog4j.shutdownHookEnabled=false",
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
)

LOG4J2 = """\
status = error
appender.console.type = Console
appender.console.name = console
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d{ISO8601}][%-5p][%-25c{1.}] %marker%m%n
rootLogger.level = info
rootLogger.appenderRef.console.ref = console
"""


@dataclass(frozen=True)
class Started:
    """A process this stack started, named so that a later ``stop`` can be sure it is still the same one."""

    name: str
    pid: int
    ticks: int | None
    stop_signal: int

    def to_json(self) -> dict:
        return {"name": self.name, "pid": self.pid, "ticks": self.ticks, "stop_signal": int(self.stop_signal)}


@dataclass(frozen=True)
class PostgresBinaries:
    bin_dir: Path
    source: str  # "explicit" | "PATH" | "system package" | "pgserver"
    version: str  # postgres --version, e.g. "15.14"


def find_postgres(explicit: str | os.PathLike | None = None) -> PostgresBinaries:
    """PostgreSQL server binaries: ``explicit`` (or $TURNBENCH_PG_BIN), PATH, the system's package
    directories, then a pip-installed ``pgserver``; the pinned major first wherever there is a choice."""
    candidates: list[tuple[Path, str]] = []
    explicit = explicit or os.environ.get("TURNBENCH_PG_BIN")
    if explicit:
        candidates.append((Path(explicit), "explicit"))
    else:
        on_path = shutil.which("initdb")
        if on_path:
            # Debian links /usr/local/bin/initdb into /usr/lib/postgresql/<major>/bin: report the real place
            candidates.append((Path(on_path).resolve().parent, "PATH"))
        system = sorted(Path("/usr/lib/postgresql").glob("*/bin")) + sorted(Path("/usr").glob("pgsql-*/bin"))
        system.sort(key=lambda p: (p.parent.name.replace("pgsql-", "") != pins.POSTGRES_MAJOR, str(p)))
        candidates += [(p, "system package") for p in system]
        candidates += [(p, "pgserver") for p in _pgserver_bins()]
    usable = [(d, src) for d, src in candidates if (d / "initdb").is_file() and (d / "postgres").is_file()]
    if not usable:
        where = f"in {explicit}" if explicit else "on PATH, under /usr/lib/postgresql/*/bin, or from pgserver"
        raise StackStartError(
            f"PostgreSQL server binaries (initdb, postgres) not found {where}: "
            f"install them (Debian: apt-get install -y postgresql-{pins.POSTGRES_MAJOR}) or set TURNBENCH_PG_BIN"
        )
    found = []
    for bin_dir, source in usable:
        version = _postgres_version(bin_dir)
        if version.split(".")[0] == pins.POSTGRES_MAJOR:
            return PostgresBinaries(bin_dir=bin_dir, source=source, version=version)
        found.append(f"{version} in {bin_dir}")
    raise StackStartError(
        f"PostgreSQL {pins.POSTGRES_MAJOR} (the pinned major) not found, only {'; '.join(found)}: "
        f"install postgresql-{pins.POSTGRES_MAJOR} or set TURNBENCH_PG_BIN"
    )


def _pgserver_bins() -> list[Path]:
    """The bin directory of a pip-installed ``pgserver`` (it bundles PostgreSQL 16, so the pin check will say so)."""
    import importlib.util

    if importlib.util.find_spec("pgserver") is None:
        return []
    try:
        from pgserver._commands import POSTGRES_BIN_PATH
    except Exception:  # a layout we do not know: not a usable source
        return []
    return [Path(POSTGRES_BIN_PATH)]


def _postgres_version(bin_dir: Path) -> str:
    out = subprocess.run([str(bin_dir / "postgres"), "--version"], capture_output=True, text=True, timeout=30)
    match = re.search(r"\(PostgreSQL\)\s+(\S+)", out.stdout)
    if out.returncode != 0 or not match:
        raise StackStartError(f"{bin_dir / 'postgres'} --version failed: {(out.stderr or out.stdout).strip()[:200]}")
    return match.group(1)


def _server_user() -> tuple[int, int, str] | None:
    """(uid, gid, name) to run PostgreSQL as when we are root (initdb refuses root); None when we are not."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return entry.pw_uid, entry.pw_gid, name
    raise StackStartError("running as root and neither user 'postgres' nor 'nobody' exists to run PostgreSQL as")


def _require_reachable(path: Path, user: tuple[int, int, str]) -> None:
    """Refuse early when the server user cannot traverse to ``path`` (initdb would fail with less to go on)."""
    import stat

    for parent in path.parents:
        st = parent.stat()
        if st.st_uid == user[0]:
            ok = st.st_mode & stat.S_IXUSR
        elif st.st_gid == user[1]:
            ok = st.st_mode & stat.S_IXGRP
        else:
            ok = st.st_mode & stat.S_IXOTH
        if not ok:
            raise StackStartError(
                f"PostgreSQL runs as user {user[2]}, which cannot enter {parent}: choose a workdir it can reach "
                "(the default, the system temporary directory, can)"
            )


class EmbeddedStack:
    """One embedded OpenSearch node and one PostgreSQL server. ``start`` then ``stop``; or record and
    ``stop_recorded`` from another process (``turnbench stack down``)."""

    def __init__(
        self,
        *,
        heap: str | None = None,
        java: str | os.PathLike | None = None,
        cache: str | os.PathLike | None = None,
        mvn: str | None = None,
        maven_args: tuple[str, ...] = (),
        offline: bool = False,
        postgres_bin: str | os.PathLike | None = None,
        opensearch_port: int | None = None,
        transport_port: int | None = None,
        postgres_port: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        workdir: str | os.PathLike | None = None,
        detached: bool = False,
        **unknown: Any,
    ) -> None:
        if unknown:
            from turnbench.errors import BadInput

            raise BadInput(f"unknown option(s) for the embedded provider: {', '.join(sorted(unknown))}")
        self.heap = heap or os.environ.get("TURNBENCH_OPENSEARCH_HEAP") or DEFAULT_HEAP
        if not re.fullmatch(r"\d+[mMgG]", self.heap):
            from turnbench.errors import BadInput

            raise BadInput(f"heap must look like 512m or 1g, not {self.heap!r}")
        self.java, self.cache, self.mvn, self.maven_args, self.offline = java, cache, mvn, tuple(maven_args), offline
        self.postgres_bin = postgres_bin
        self.ports = {"http": opensearch_port, "transport": transport_port, "postgres": postgres_port}
        self.timeout = float(timeout)
        self.parent_dir = workdir
        # detached: the servers are meant to outlive this process (`stack up`), so no watchdog guards them
        self.detached = detached
        self.watchdog: subprocess.Popen | None = None
        self.root: Path | None = None
        self.started: list[Started] = []
        self.timings: dict[str, float] = {}

    # -- the sequence ---------------------------------------------------------------------------------
    def start(self) -> StackInfo:
        try:
            return self._start()
        except BaseException as exc:
            pids = tuple(p.pid for p in self.started)
            self.stop()
            if isinstance(exc, TurnbenchError):
                exc.started_pids = pids  # lets tests and callers check by pid that nothing is left
                raise
            if isinstance(exc, Exception):
                first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
                err = StackStartError(f"the embedded stack did not start: {type(exc).__name__}: {first}")
                err.started_pids = pids
                raise err from exc
            raise

    def _start(self) -> StackInfo:
        t0 = time.monotonic()
        # cheap checks first, the one that may use the network (Maven) last
        java = jars.find_java(self.java)
        pg = find_postgres(self.postgres_bin)
        user = _server_user()
        ports = {}
        for what, port in sorted(self.ports.items()):
            ports[what] = require_free_port(port, what) if port else None
        taken = {p for p in ports.values() if p}
        for what in sorted(ports):
            if ports[what] is None:
                port = free_port()
                while port in taken:
                    port = free_port()
                ports[what] = port
                taken.add(port)
        launcher = jars.prepare(
            java=java, cache=self.cache, mvn=self.mvn, maven_args=self.maven_args, offline=self.offline
        )
        self.timings["jars_s"] = time.monotonic() - t0

        self.root = Path(tempfile.mkdtemp(prefix="turnbench-stack-", dir=self.parent_dir))
        # PostgreSQL runs as another user when we are root: it must be able to traverse to its directory.
        os.chmod(self.root, 0o711)
        if user:
            _require_reachable(self.root, user)
        if not self.detached:
            self._start_watchdog()

        t_os = time.monotonic()
        node_log = self._launch_opensearch(launcher, ports["http"], ports["transport"])
        t_pg = time.monotonic()
        dsn = self._start_postgres(pg, user, ports["postgres"])
        self.timings["postgres_ready_s"] = time.monotonic() - t_pg
        url = f"http://{LOOPBACK}:{ports['http']}"
        self._wait_opensearch(url, node_log, deadline=t_os + self.timeout)
        self._check_plugins(url)
        self.timings["opensearch_ready_s"] = time.monotonic() - t_os
        self.timings["total_s"] = time.monotonic() - t0
        details = {
            "chosen_because": "",
            "workdir": str(self.root),
            "processes": [p.to_json() for p in self.started],
            "opensearch": {
                "heap": self.heap,
                "java": str(launcher.java.java),
                "java_version": launcher.java.version,
                "jar_cache": str(launcher.cache_root),
                "jars_fetched_now": launcher.fetched,
                "plugins": list(pins.plugin_classes()),
                "log": str(node_log),
                "http_port": ports["http"],
                "transport_port": ports["transport"],
            },
            "postgres": {
                "bin_dir": str(pg.bin_dir),
                "binary_source": pg.source,
                "run_as": user[2] if user else None,
                "data_dir": str(self.root / "pg" / "data"),
                "log": str(self.root / "postgres.log"),
                "port": ports["postgres"],
                "durability": "fsync=off, synchronous_commit=off (a throwaway benchmark database)",
            },
            "timings_s": {k: round(v, 3) for k, v in sorted(self.timings.items())},
        }
        return describe("embedded", url, dsn, details)

    # -- OpenSearch -----------------------------------------------------------------------------------
    def _launch_opensearch(self, launcher: jars.Launcher, http_port: int, transport_port: int) -> Path:
        home = self.root / "opensearch"
        for sub in ("config", "data", "logs", "plugins", "modules", "tmp"):
            (home / sub).mkdir(parents=True)
        settings = {
            "cluster.name": "turnbench",
            "node.name": "turnbench",
            "path.data": str(home / "data"),
            "path.logs": str(home / "logs"),
            "network.host": LOOPBACK,
            "http.port": http_port,
            "transport.port": transport_port,
            "discovery.type": "single-node",
            "cluster.routing.allocation.disk.threshold_enabled": "false",
            "action.auto_create_index": "true",
        }
        (home / "config" / "opensearch.yml").write_text(
            "".join(f"{k}: {v}\n" for k, v in sorted(settings.items()))
        )
        (home / "config" / "log4j2.properties").write_text(LOG4J2)
        node_log = self.root / "opensearch.log"
        cmd = [
            str(launcher.java.java),
            f"-Xms{self.heap}",
            f"-Xmx{self.heap}",
            *JVM_FLAGS,
            f"-Djava.io.tmpdir={home / 'tmp'}",
            "-cp",
            os.pathsep.join(str(p) for p in launcher.classpath),
            jars.LAUNCHER_CLASS,
            str(home),
            *pins.plugin_classes(),
        ]
        self._spawn("opensearch", cmd, node_log, signal.SIGTERM, cwd=home)
        return node_log

    def _wait_opensearch(self, url: str, node_log: Path, deadline: float) -> None:
        proc = self.started[0]
        while True:
            if not is_running(proc.pid, proc.ticks):
                code = _exit_code(proc.pid)
                reason = "a plugin class did not load" if code == 78 else f"the JVM exited (code {code})"
                raise self._failed(f"OpenSearch did not start: {reason}", node_log)
            try:
                health = http_json(f"{url}/_cluster/health?wait_for_status=yellow&timeout=1s", timeout=3)
                if health.get("status") in ("yellow", "green"):
                    return
            except (OSError, ValueError):
                pass
            if time.monotonic() >= deadline:
                raise self._failed(f"OpenSearch did not turn yellow within {self.timeout:g} s", node_log)
            time.sleep(0.2)

    def _check_plugins(self, url: str) -> None:
        nodes = http_json(f"{url}/_nodes/plugins", timeout=10)["nodes"]
        loaded = {p.get("classname") or p.get("name") for n in nodes.values() for p in n.get("plugins", [])}
        loaded |= {p.get("name") for n in nodes.values() for p in n.get("plugins", [])}
        missing = sorted(set(pins.plugin_classes()) - loaded)
        if missing:
            raise StackStartError(f"OpenSearch started without plugin(s) {', '.join(missing)}")

    # -- PostgreSQL -----------------------------------------------------------------------------------
    def _start_postgres(self, pg: PostgresBinaries, user: tuple[int, int, str] | None, port: int) -> str:
        import psycopg

        base = self.root / "pg"
        data, sock = base / "data", base / "run"
        for d in (base, sock):
            d.mkdir(mode=0o700)
        if user:
            for d in (base, sock):
                os.chown(d, user[0], user[1])
        as_user = {"user": user[0], "group": user[1], "extra_groups": []} if user else {}
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
        log = self.root / "postgres.log"
        cmd = [
            str(pg.bin_dir / "postgres"), "-D", str(data), "-p", str(port),
            "-c", f"listen_addresses={LOOPBACK}", "-c", f"unix_socket_directories={sock}",
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
        ]
        self._spawn("postgres", cmd, log, signal.SIGINT, cwd=base, env=env, **as_user)
        proc = self.started[-1]
        admin = f"host={LOOPBACK} port={port} user={PG_USER} dbname=postgres"
        deadline = time.monotonic() + min(self.timeout, 60.0)
        while True:
            if not is_running(proc.pid, proc.ticks):
                raise self._failed(f"PostgreSQL exited during start (code {_exit_code(proc.pid)})", log)
            try:
                with psycopg.connect(admin, connect_timeout=2, autocommit=True) as conn:
                    conn.execute(f"CREATE DATABASE {PG_DB}")
                break
            except psycopg.OperationalError:
                if time.monotonic() >= deadline:
                    raise self._failed("PostgreSQL did not accept connections within 60 s", log) from None
                time.sleep(0.1)
        return f"host={LOOPBACK} port={port} user={PG_USER} dbname={PG_DB}"

    # -- processes ------------------------------------------------------------------------------------
    def _spawn(self, name: str, cmd: list[str], log: Path, stop_signal: int, **kwargs: Any) -> None:
        with open(log, "ab") as out:
            # A session of its own: a terminal's Ctrl-C reaches only turnbench, which then stops the
            # servers in order, and a detached stack (`stack up`) outlives the command that started it.
            popen = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, **kwargs
            )
        _CHILDREN[popen.pid] = popen
        self.started.append(Started(name, popen.pid, start_ticks(popen.pid), stop_signal))
        from turnbench.stack._watchdog import PROCESSES_FILE

        canonical.write_json(self.root / PROCESSES_FILE, [p.to_json() for p in self.started])

    def _start_watchdog(self) -> None:
        import sys

        self.watchdog = subprocess.Popen(
            [sys.executable, "-m", "turnbench.stack._watchdog", str(os.getpid()), str(start_ticks(os.getpid())),
             str(self.root)],
            stdin=subprocess.DEVNULL, start_new_session=True,
        )

    def _failed(self, message: str, log: Path) -> StackStartError:
        """A one-line error naming a copy of the log that survives the teardown; the tail rides along."""
        kept = Path(tempfile.gettempdir()) / f"turnbench-failed-{log.stem}-{os.getpid()}-{int(time.time())}.log"
        try:
            shutil.copyfile(log, kept)
        except OSError:
            kept = log
        lines = tail(log, 20)
        err = StackStartError(f"{message}; log kept at {kept}")
        err.log_tail = lines
        return err

    def stop(self) -> None:
        """Stop what this stack started (JVM by SIGTERM, PostgreSQL by SIGINT: fast shutdown) and remove its
        directory. Safe to call twice and after a failed start."""
        stop_pids([(p.pid, p.ticks, p.stop_signal) for p in self.started])
        for p in self.started:
            popen = _CHILDREN.pop(p.pid, None)
            if popen is not None:
                try:
                    popen.wait(timeout=1)
                except subprocess.TimeoutExpired:
                    pass
        self.started = []
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
        if self.watchdog is not None:
            self.watchdog.terminate()
            try:
                self.watchdog.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.watchdog.kill()
                self.watchdog.wait()
            self.watchdog = None

    @staticmethod
    def stop_recorded(details: Mapping[str, Any]) -> None:
        """Stop a stack another process started, exactly by the pids (and start times) it recorded."""
        procs = [(int(p["pid"]), p.get("ticks"), int(p["stop_signal"])) for p in details.get("processes", [])]
        stop_pids(procs)
        workdir = details.get("workdir")
        if workdir and Path(workdir).name.startswith("turnbench-stack-"):
            shutil.rmtree(workdir, ignore_errors=True)


# Popen objects of the servers this process started, so their exit codes can be read and they are reaped.
_CHILDREN: dict[int, subprocess.Popen] = {}


def _exit_code(pid: int) -> int | None:
    popen = _CHILDREN.get(pid)
    if popen is None:
        return None
    try:
        return popen.wait(timeout=1)
    except subprocess.TimeoutExpired:
        return None
