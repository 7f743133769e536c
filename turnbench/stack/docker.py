"""Provider ``docker``: testcontainers' OpenSearch and PostgreSQL modules with the pinned images, ephemeral and
removed on exit; for ``stack up``, the long-lived stack of compose/docker-compose.yml."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from turnbench.errors import BadInput, StackStartError
from turnbench.stack import pins
from turnbench.stack.external import describe
from turnbench.stack.info import StackInfo
from turnbench.stack.provider import Provider


def engine_problem(timeout: float = 3.0) -> str | None:
    """None when a Docker engine answers a ping, else why not (one line)."""
    host = os.environ.get("DOCKER_HOST")
    if not host and not Path("/var/run/docker.sock").exists():
        return "DOCKER_HOST unset and /var/run/docker.sock absent"
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
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else 'no answer'}"
    return None


# The containers' configuration, kept as plain values so it can be checked without an engine.
OPENSEARCH_ENV = {
    "discovery.type": "single-node",
    # OpenSearch >= 2.12 demands an admin password unless the security plugin is off; the stack is loopback-only.
    "DISABLE_SECURITY_PLUGIN": "true",
    "DISABLE_INSTALL_DEMO_CONFIG": "true",
    "cluster.routing.allocation.disk.threshold_enabled": "false",
}
POSTGRES_ENV = {"POSTGRES_USER": "turnbench", "POSTGRES_PASSWORD": "turnbench", "POSTGRES_DB": "turnbench"}


def container_plan(heap: str = "1g") -> dict[str, Any]:
    """What the docker provider runs: images (the pins), environment, ports. Also what compose/ pins."""
    return {
        "opensearch": {
            "image": pins.OPENSEARCH_IMAGE,
            "env": {**OPENSEARCH_ENV, "OPENSEARCH_JAVA_OPTS": f"-Xms{heap} -Xmx{heap}"},
            "port": 9200,
        },
        "postgres": {"image": pins.POSTGRES_IMAGE, "env": dict(POSTGRES_ENV), "port": 5432},
    }


class DockerStack(Provider):
    """testcontainers' OpenSearch and PostgreSQL with the pinned images, removed on ``stop``; detached, the
    compose stack, removed by ``down``."""

    name: ClassVar[str] = "docker"

    def __init__(self, *, heap: str | None = None, timeout: float | None = None, **unknown: Any) -> None:
        if unknown:
            raise BadInput(f"unknown option(s) for the docker provider: {', '.join(sorted(unknown))}")
        self.plan = container_plan(heap or os.environ.get("TURNBENCH_OPENSEARCH_HEAP") or "1g")
        self.containers: list[Any] = []
        self.compose: dict[str, Any] | None = None
        self.timeout = 300.0 if timeout is None else float(timeout)

    @classmethod
    def problem(cls, *, detached: bool = False) -> str | None:
        return engine_problem()

    @classmethod
    def unusable(cls, problem: str) -> str:
        return f"no Docker engine answers ({problem}): start Docker, or use --provider embedded"

    def _start(self, detached: bool) -> StackInfo:
        if detached:
            info = compose_up(self.timeout)
            self.compose = dict(info.details)
            return info
        from testcontainers.community.opensearch import OpenSearchContainer
        from testcontainers.community.postgres import PostgresContainer

        o, p = self.plan["opensearch"], self.plan["postgres"]
        opensearch = OpenSearchContainer(image=o["image"], port=o["port"], security_enabled=False)
        for key, value in sorted(o["env"].items()):
            opensearch.with_env(key, value)
        postgres = PostgresContainer(
            image=p["image"], port=p["port"], username=p["env"]["POSTGRES_USER"],
            password=p["env"]["POSTGRES_PASSWORD"], dbname=p["env"]["POSTGRES_DB"], driver=None,
        )
        for container in (postgres, opensearch):
            try:
                container.start()
            except Exception as exc:
                raise StackStartError(f"{container.image} did not start: {str(exc).splitlines()[0][:200]}") from None
            self.containers.append(container)
        url = f"http://{opensearch.get_container_host_ip()}:{opensearch.get_exposed_port(o['port'])}"
        dsn = (
            f"host={postgres.get_container_host_ip()} port={postgres.get_exposed_port(p['port'])} "
            f"user={p['env']['POSTGRES_USER']} password={p['env']['POSTGRES_PASSWORD']} "
            f"dbname={p['env']['POSTGRES_DB']}"
        )
        details = {
            "containers": [{"image": c.image, "id": c.get_wrapped_container().id} for c in self.containers],
            "opensearch": {"heap": o["env"]["OPENSEARCH_JAVA_OPTS"]},
        }
        return describe("docker", url, dsn, details)

    def stop(self) -> None:
        for container in reversed(self.containers):
            try:
                container.stop()
            except Exception:  # already gone, or the engine went away: nothing more to remove
                pass
        self.containers = []
        if self.compose is not None:
            compose_down(self.compose)
            self.compose = None

    @classmethod
    def down(cls, details: Mapping[str, Any]) -> None:
        compose_down(details)


# -- compose: the long-lived stack of `turnbench stack up --provider docker` (`make stack` with Docker) ------
COMPOSE_PROJECT = "turnbench"


def compose_file() -> Path:
    """compose/docker-compose.yml of the source tree (the docker stack is run from a checkout)."""
    for base in (Path.cwd(), Path(__file__).resolve().parents[2]):
        candidate = base / "compose" / "docker-compose.yml"
        if candidate.is_file():
            return candidate
    raise StackStartError("compose/docker-compose.yml not found: run from the turnbench checkout")


def compose_up(timeout: float = 300.0) -> StackInfo:
    """Start the compose stack detached, wait for its health checks, and describe it with container ids."""
    path = compose_file()
    base = ["docker", "compose", "-f", str(path), "-p", COMPOSE_PROJECT]
    out = subprocess.run([*base, "up", "-d", "--wait", "--wait-timeout", str(int(timeout))],
                         capture_output=True, text=True)
    if out.returncode != 0:
        ids = subprocess.run([*base, "ps", "-aq"], capture_output=True, text=True).stdout.split()
        if ids:
            subprocess.run(["docker", "rm", "-f", "-v", *ids], capture_output=True)
        last = (out.stderr or out.stdout).strip().splitlines()
        raise StackStartError(f"docker compose up failed: {last[-1] if last else out.returncode}")
    ids = sorted(subprocess.run([*base, "ps", "-q"], capture_output=True, text=True).stdout.split())
    os_port = os.environ.get("TURNBENCH_OPENSEARCH_PORT", "9200")
    pg_port = os.environ.get("TURNBENCH_POSTGRES_PORT", "5432")
    url = f"http://127.0.0.1:{os_port}"
    dsn = f"host=127.0.0.1 port={pg_port} user=turnbench password=turnbench dbname=turnbench"
    return describe("docker", url, dsn, {"compose_file": str(path), "containers": ids, "project": COMPOSE_PROJECT})


def compose_down(details: Mapping[str, Any]) -> None:
    """Remove exactly the recorded containers (and their anonymous volumes), then the project's network."""
    ids = list(details.get("containers", []))
    if ids:
        subprocess.run(["docker", "rm", "-f", "-v", *ids], capture_output=True, text=True)
    subprocess.run(["docker", "network", "rm", f"{details.get('project', COMPOSE_PROJECT)}_default"],
                   capture_output=True, text=True)
