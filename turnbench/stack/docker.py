"""Provider ``docker``: testcontainers' OpenSearch and PostgreSQL modules, ephemeral and removed on exit; for
``stack up``, the long-lived stack of compose/docker-compose.yml (:mod:`turnbench.stack.compose`).

The images are the pinned official ones unless ``--opensearch-image`` / ``--postgres-image`` (or
TURNBENCH_OPENSEARCH_IMAGE / TURNBENCH_POSTGRES_IMAGE) name others, such as the local builds of
compose/images/ (``turnbench-local/...``); the image used and its id are recorded (runinfo.json).

testcontainers is told, never left to guess: where published ports are reached comes from the engine's URL
(testcontainers otherwise takes a ``/.dockerenv`` as proof it runs inside a container and dials a bridge
gateway), and Ryuk is off (it is an image pulled from Docker Hub). What Ryuk would do is done here: every
container carries this stack's label and is registered before it starts, so ``stop`` removes a container whose
start failed, and a watchdog process removes them all if this process dies without tearing down.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlparse

from turnbench import canonical, settings
from turnbench.errors import BadInput, StackStartError
from turnbench.stack import _watchdog, pins
from turnbench.stack._watchdog import CONTAINERS_FILE, MARKER
from turnbench.stack.containers import remove_labelled
from turnbench.stack.external import describe
from turnbench.stack.images import IMAGE_OPTIONS, LOCAL_IMAGES, PINNED_IMAGES, chosen_images, image_facts
from turnbench.stack.info import StackInfo
from turnbench.stack.net import LOOPBACK, http_json
from turnbench.stack.provider import Provider

DEFAULT_SOCKET = "/var/run/docker.sock"
DEFAULT_TIMEOUT = 300.0
# Every container of one stack carries this label with the stack's token: how stop() and the watchdog find them.
STACK_LABEL = "org.turnbench.stack"
LOG_TAIL = 20


# -- the engine ---------------------------------------------------------------------------------------------
def engine_url() -> str:
    return os.environ.get("DOCKER_HOST") or f"unix://{DEFAULT_SOCKET}"


def published_host(url: str) -> str:
    """Where ports the engine at ``url`` publishes are reached from here. An engine on a local socket publishes on
    this machine: 127.0.0.1 (not ``localhost``, which may resolve to ::1 where the engine's proxy does not listen);
    an engine reached over the network publishes on its own host."""
    parsed = urlparse(url)
    if parsed.scheme in ("", "unix", "npipe", "fd"):
        return LOOPBACK
    host = parsed.hostname or LOOPBACK
    return LOOPBACK if host in ("localhost", "127.0.0.1", "::1") else host


def engine_problem(timeout: float = 3.0) -> str | None:
    """None when a Docker engine answers a ping, else what is missing, in full (one line)."""
    url = engine_url()
    if url.startswith("unix://") and not Path(url[len("unix://"):]).exists():
        return f"no Docker engine answers: {url[len('unix://'):]} does not exist (DOCKER_HOST names the engine)"
    try:
        import docker
    except ImportError:
        return "the docker Python package is not installed (pip install 'turnbench[docker]')"
    try:
        client = docker.from_env(timeout=timeout)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:  # the SDK raises several unrelated types for "nothing answers"
        text = str(exc).splitlines()[0][:160] if str(exc) else "no answer"
        return f"no Docker engine answers at {url} ({type(exc).__name__}: {text})"
    return None


def configure_testcontainers(url: str) -> None:
    """Set testcontainers' connection mode, host and Ryuk from the engine's URL, whatever its environment says
    (it reads that at import time). TC_HOST, when set, still names the host: the user said so."""
    from testcontainers.core.config import ConnectionMode, testcontainers_config

    testcontainers_config.ryuk_disabled = True
    testcontainers_config.connection_mode_override = ConnectionMode.docker_host
    said = os.environ.get("TC_HOST") or os.environ.get("TESTCONTAINERS_HOST_OVERRIDE")
    testcontainers_config.tc_host_override = said or published_host(url)


# -- what runs ----------------------------------------------------------------------------------------------
OPENSEARCH_ENV = {
    "discovery.type": "single-node",
    # OpenSearch >= 2.12 demands an admin password unless the security plugin is off; the stack is loopback-only.
    "DISABLE_SECURITY_PLUGIN": "true",
    "DISABLE_INSTALL_DEMO_CONFIG": "true",
    "cluster.routing.allocation.disk.threshold_enabled": "false",
}
POSTGRES_ENV = {
    "POSTGRES_USER": "turnbench", "POSTGRES_PASSWORD": "turnbench", "POSTGRES_DB": "turnbench",
    # the embedded provider's initdb: byte-order collation, so ORDER BY on text sorts alike on every provider
    # (the official image would otherwise initdb with en_US.utf8)
    "POSTGRES_INITDB_ARGS": "--encoding=UTF8 --locale=C",
}
HEAP = re.compile(r"\d+[mMgG]")


def container_plan(heap: str = "1g", images: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What the docker provider runs: images, environment, ports. compose/docker-compose.yml says the same."""
    images = dict(images or PINNED_IMAGES)
    return {
        "opensearch": {
            "image": images["opensearch"],
            "env": {**OPENSEARCH_ENV, "OPENSEARCH_JAVA_OPTS": f"-Xms{heap} -Xmx{heap}"},
            "port": 9200,
        },
        "postgres": {"image": images["postgres"], "env": dict(POSTGRES_ENV), "port": 5432},
    }


def dsn_for(host: str, port: int | str) -> str:
    e = POSTGRES_ENV
    return (f"host={host} port={port} user={e['POSTGRES_USER']} password={e['POSTGRES_PASSWORD']} "
            f"dbname={e['POSTGRES_DB']}")


def missing_modules(url: str) -> list[str]:
    """The pinned modules (plugin classes) the node at ``url`` lacks: an image without one is not the stack."""
    nodes = http_json(f"{url}/_nodes/plugins", timeout=10)["nodes"]
    loaded = {p.get("classname") or p.get("name") for n in nodes.values()
              for p in [*n.get("plugins", []), *n.get("modules", [])]}
    return sorted(set(pins.plugin_classes()) - loaded)


def node_java(url: str) -> dict[str, str]:
    """The JVM the node at ``url`` runs on (an image brings its own): runinfo.json's ``java_version``."""
    nodes = http_json(f"{url}/_nodes/jvm", timeout=10)["nodes"]
    jvm = next(iter(nodes.values()))["jvm"]
    return {"java": f"{jvm.get('vm_vendor', '')} {jvm.get('vm_name', '')}".strip(), "java_version": str(jvm["version"])}


class DockerStack(Provider):
    """testcontainers' OpenSearch and PostgreSQL, removed on ``stop``; detached, the compose stack, removed by
    ``down``."""

    name: ClassVar[str] = "docker"

    def __init__(self, *, heap: str | None = None, timeout: float | None = None, opensearch_image: str | None = None,
                 postgres_image: str | None = None, opensearch_port: int | None = None,
                 postgres_port: int | None = None, **unknown: Any) -> None:
        if unknown:
            raise BadInput(f"unknown option(s) for the docker provider: {', '.join(sorted(unknown))}")
        self.heap = heap or settings.text(settings.OPENSEARCH_HEAP) or "1g"
        if not HEAP.fullmatch(self.heap):
            raise BadInput(f"heap must look like 512m or 1g, not {self.heap!r}")
        self.images = chosen_images(opensearch_image, postgres_image)
        self.plan = container_plan(self.heap, self.images)
        self.ports = {"opensearch": opensearch_port, "postgres": postgres_port}
        self.timeout = DEFAULT_TIMEOUT if timeout is None else float(timeout)
        self.token = uuid.uuid4().hex
        self.containers: list[Any] = []
        self.compose: dict[str, Any] | None = None
        self.root: Path | None = None
        self.watchdog: subprocess.Popen[bytes] | None = None

    @classmethod
    def problem(cls, *, detached: bool = False) -> str | None:
        from turnbench.stack import compose

        return engine_problem() or (compose.compose_problem() if detached else None)

    @classmethod
    def unusable(cls, problem: str) -> str:
        return f"the docker provider cannot run here: {problem} (or use --provider embedded)"

    def _start(self, detached: bool) -> StackInfo:
        if detached:
            return self._start_compose()
        from testcontainers.community.opensearch import OpenSearchContainer
        from testcontainers.community.postgres import PostgresContainer

        # The modules' own waits poll for minutes even after the container has exited; both servers are waited
        # for below, at once, and an exit ends the wait with the container's last log lines.
        class OpenSearch(OpenSearchContainer):
            def _healthcheck(self) -> None:
                pass

        class Postgres(PostgresContainer):
            def _connect(self) -> None:
                pass

        url = engine_url()
        configure_testcontainers(url)
        host = published_host(url)
        # a local engine publishes on loopback only: the servers run without authentication worth the name
        bind = LOOPBACK if host == LOOPBACK else "0.0.0.0"
        self._start_watchdog()
        o, p = self.plan["opensearch"], self.plan["postgres"]
        opensearch = OpenSearch(image=o["image"], port=o["port"], security_enabled=False)
        for key, value in sorted(o["env"].items()):
            opensearch.with_env(key, value)
        postgres = Postgres(image=p["image"], port=p["port"], username=p["env"]["POSTGRES_USER"],
                            password=p["env"]["POSTGRES_PASSWORD"], dbname=p["env"]["POSTGRES_DB"], driver=None)
        postgres.with_env("POSTGRES_INITDB_ARGS", p["env"]["POSTGRES_INITDB_ARGS"])
        t0 = time.monotonic()
        started: dict[str, float] = {}
        for service, container, port in (("postgres", postgres, p["port"]), ("opensearch", opensearch, o["port"])):
            # docker-py takes (host ip, port) or (host ip,) here; testcontainers' annotation says only a port
            ports: dict[Any, Any] = container.ports
            ports[port] = (bind, self.ports[service]) if self.ports[service] else (bind,)
            container.with_kwargs(labels={STACK_LABEL: self.token})
            self._launch(service, container)
            started[service] = time.monotonic()
        ready = self._wait({"postgres": (postgres, lambda c: _postgres_answers(dsn_for(host, _host_port(c, 5432)))),
                            "opensearch": (opensearch, lambda c: _opensearch_answers(_url(host, _host_port(c, 9200))))},
                           deadline=t0 + self.timeout)
        os_url = _url(host, _host_port(opensearch.get_wrapped_container(), o["port"]))
        dsn = dsn_for(host, _host_port(postgres.get_wrapped_container(), p["port"]))
        missing = missing_modules(os_url)
        if missing:
            raise StackStartError(f"the OpenSearch image {o['image']} lacks module(s) {', '.join(missing)}")
        details = {
            "containers": [c.get_wrapped_container().id for c in self.containers],
            "images": {s: image_facts(c.get_wrapped_container().attrs) for s, c in
                       (("opensearch", opensearch), ("postgres", postgres))},
            "label": f"{STACK_LABEL}={self.token}",
            "opensearch": {"heap": self.heap, **node_java(os_url)},
            "timings_s": {**{f"{s}_ready_s": round(ready[s] - started[s], 3) for s in sorted(ready)},
                          "total_s": round(time.monotonic() - t0, 3)},
        }
        return describe("docker", os_url, dsn, details)

    def _launch(self, service: str, container: Any) -> None:
        """Create and start one container, registered first: a start that fails half-way leaves a container
        that ``stop`` must still find."""
        self.containers.append(container)
        present = _image_present(container.image)
        try:
            container.start()
        except Exception as exc:
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            if not present:
                raise StackStartError(
                    f"{service} image {container.image} is not on this engine and could not be pulled ({first}); "
                    f"`make images` builds {LOCAL_IMAGES[service]} for {IMAGE_OPTIONS[service]}") from None
            raise StackStartError(f"{service} ({container.image}) did not start: {first}",
                                  log_tail=_log_tail(container)) from None

    def _wait(self, checks: Mapping[str, tuple[Any, Callable[[Any], bool]]], deadline: float) -> dict[str, float]:
        """Wait until every server answers; when a container exits first, or time runs out, say which, with its
        last log lines."""
        ready: dict[str, float] = {}
        while len(ready) < len(checks):
            for service, (container, answers) in checks.items():
                if service in ready:
                    continue
                wrapped = container.get_wrapped_container()
                wrapped.reload()
                if wrapped.status not in ("created", "running"):
                    code = wrapped.attrs.get("State", {}).get("ExitCode")
                    tail = _log_tail(container)
                    last = next((line for line in reversed(tail) if line.strip()), "no output")
                    raise StackStartError(f"{service} ({container.image}) exited with code {code} before it answered: "
                                          f"{last[:160]}", log_tail=tail)
                try:
                    ok = answers(wrapped)
                except (KeyError, IndexError, TypeError, ValueError):  # ports not published yet
                    ok = False
                if ok:
                    ready[service] = time.monotonic()
            if len(ready) < len(checks):
                if time.monotonic() >= deadline:
                    late = sorted(set(checks) - set(ready))
                    raise StackStartError(f"{', '.join(late)} did not answer within {self.timeout:g} s",
                                          log_tail=_log_tail(checks[late[0]][0]))
                time.sleep(0.25)
        return ready

    def _start_compose(self) -> StackInfo:
        from turnbench.stack import compose

        host = published_host(engine_url())
        ports = compose.host_ports(self.ports)

        def record(details: Mapping[str, Any]) -> None:
            self.compose = dict(details)

        self.compose = compose.up(images=self.images, heap=self.heap, ports=ports, timeout=self.timeout,
                                  local=host == LOOPBACK, record=record)
        url = _url(host, ports["opensearch"])
        self.compose["opensearch"] = {**self.compose.get("opensearch", {}), **node_java(url)}
        return describe("docker", url, dsn_for(host, ports["postgres"]), self.compose)

    def _start_watchdog(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="turnbench-stack-"))
        (self.root / MARKER).write_text(json.dumps({"containers": self.token}))  # ours: the watchdog may delete it
        canonical.write_json(self.root / CONTAINERS_FILE, {"label": f"{STACK_LABEL}={self.token}"})
        self.watchdog = _watchdog.launch(self.root)

    def stop(self) -> None:
        for container in reversed(self.containers):
            try:
                container.stop()
            except Exception:  # already gone, or the engine went away: nothing more to remove
                pass
        if self.containers:
            remove_labelled(f"{STACK_LABEL}={self.token}")  # one created by a start that raised before it returned
        self.containers = []
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
        _watchdog.dismiss(self.watchdog)
        self.watchdog = None
        if self.compose is not None:
            from turnbench.stack import compose

            compose.down(self.compose)
            self.compose = None

    @classmethod
    def down(cls, details: Mapping[str, Any]) -> None:
        from turnbench.stack import compose

        compose.down(details)


def _log_tail(container: Any, n: int = LOG_TAIL) -> tuple[str, ...]:
    """The last ``n`` lines a created container wrote (stdout and stderr), or none when it was never created."""
    try:
        raw = container.get_wrapped_container().logs(tail=n)
    except Exception:  # never created (the image could not be found or pulled), or already removed
        return ()
    return tuple(raw.decode("utf-8", errors="replace").rstrip().splitlines()[-n:])


def _image_present(image: str) -> bool:
    try:
        import docker

        client = docker.from_env(timeout=30)
        try:
            client.images.get(image)
        finally:
            client.close()
    except Exception:  # not found, or the engine cannot say: the start that follows tells
        return False
    return True


def _host_port(wrapped: Any, port: int) -> int:
    """The host port a running container's ``port`` is published on (its attributes freshly reloaded)."""
    bindings = wrapped.attrs["NetworkSettings"]["Ports"][f"{port}/tcp"]
    return int(bindings[0]["HostPort"])


def _url(host: str, port: int) -> str:
    return f"http://{host}:{port}"


def _opensearch_answers(url: str) -> bool:
    try:
        health = http_json(f"{url}/_cluster/health?wait_for_status=yellow&timeout=1s", timeout=3)
    except (OSError, ValueError):
        return False
    return health.get("status") in ("yellow", "green")


def _postgres_answers(dsn: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(dsn, connect_timeout=2, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error:
        return False
    return True

