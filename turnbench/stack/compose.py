"""The long-lived docker stack of ``turnbench stack up --provider docker`` (``make stack PROVIDER=docker``):
compose/docker-compose.yml run by Docker Compose v2, up when its health checks pass.

``stack down`` removes exactly what ``up`` made: the containers and networks carrying the compose project's
label, recorded by id. The project name is derived from the state directory, so two checkouts do not share one,
and ``up`` refuses a project that already has containers or networks (they would not be ours to remove).
Docker Compose v2 is a docker CLI plugin (``docker compose``); v1's ``docker-compose`` is another program and
is not accepted.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from turnbench import canonical, settings
from turnbench.errors import BadInput, StackStartError
from turnbench.stack.images import image_facts
from turnbench.stack.net import require_free_port

DEFAULT_PORTS = {"opensearch": 9200, "postgres": 5432}
# the compose file's own variables: a port they name is the default when none is given
PORT_ENV = {service: s.name for service, s in settings.PORTS.items()}
PROJECT_LABEL = "com.docker.compose.project"
SERVICE_LABEL = "com.docker.compose.service"
LOG_TAIL = 20


def compose_problem() -> str | None:
    """None when ``docker compose`` is Compose v2 or later, else what is missing, in full (one line)."""
    docker = shutil.which("docker")
    if docker is None:
        return "no docker CLI on PATH (docker compose runs as its plugin)"
    try:
        out = subprocess.run([docker, "compose", "version", "--short"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"no docker compose v2 plugin (docker compose version: {type(exc).__name__}: {exc})"
    said = " / ".join(line.strip() for line in (out.stdout + out.stderr).splitlines() if line.strip())
    version = re.match(r"v?(\d+)\.\d+", out.stdout.strip())
    if out.returncode != 0 or version is None or int(version.group(1)) < 2:
        return f"no docker compose v2 plugin (docker compose version: {said[:200] or f'exit {out.returncode}'})"
    return None


def host_ports(given: Mapping[str, int | None]) -> dict[str, int]:
    """The host port of each service: given, else its variable in the environment, else the default."""
    out = {}
    for service, default in DEFAULT_PORTS.items():
        value = given.get(service) or settings.text(settings.PORTS[service]) or default
        try:
            port = int(value)
        except ValueError:
            port = 0
        if not 0 < port < 65536:
            raise BadInput(f"{PORT_ENV[service]}: {str(value)[:20]!r} is not a port")
        out[service] = port
    return out


def compose_file() -> Path:
    """compose/docker-compose.yml of the source tree (the compose stack is run from a checkout)."""
    for base in (Path.cwd(), Path(__file__).resolve().parents[2]):
        candidate = base / "compose" / "docker-compose.yml"
        if candidate.is_file():
            return candidate
    raise StackStartError("compose/docker-compose.yml not found: run from the turnbench checkout")


def project_name() -> str:
    """One compose project per state directory: ``turnbench-`` and a digest of the directory's path."""
    from turnbench.stack import state

    return "turnbench-" + canonical.sha256_bytes(str(state.state_dir().resolve()).encode())[:8]


def up(*, images: Mapping[str, str], heap: str, ports: Mapping[str, int], timeout: float, local: bool,
       record: Callable[[Mapping[str, Any]], None]) -> dict[str, Any]:
    """``docker compose up --wait`` the stack; the details a later ``down`` needs. ``record`` is handed them as
    soon as anything exists, so that a failure from then on can still remove it. ``local``: the engine publishes
    on this machine, so a taken port is refused before anything starts."""
    path, project = compose_file(), project_name()
    for service in sorted(ports) if local else ():
        require_free_port(ports[service], service)
    there = _labelled(project)
    if there["containers"] or there["networks"]:
        raise StackStartError(f"the compose project {project} already has {len(there['containers'])} container(s) "
                              f"and {len(there['networks'])} network(s), not recorded as ours: remove them with "
                              f"`docker compose -p {project} down` first")
    env = {**os.environ,
           "TURNBENCH_OPENSEARCH_IMAGE": images["opensearch"], "TURNBENCH_POSTGRES_IMAGE": images["postgres"],
           "TURNBENCH_OPENSEARCH_HEAP": heap,
           **{PORT_ENV[s]: str(ports[s]) for s in PORT_ENV}}
    cmd = ["docker", "compose", "-f", str(path), "-p", project, "up", "-d", "--wait",
           "--wait-timeout", str(max(1, int(timeout)))]
    healthy: dict[str, float] = {}
    with tempfile.TemporaryFile("w+") as said:
        proc = subprocess.Popen(cmd, stdout=said, stderr=subprocess.STDOUT, text=True, env=env)
        try:
            # the engine keeps only the last five probes: when each service turned healthy is seen by watching
            while proc.poll() is None:
                _note_healthy(project, healthy)
                time.sleep(0.5)
        finally:
            if proc.poll() is None:  # interrupted: compose stops where it is, and what it made is recorded below
                proc.terminate()
                proc.wait()
            details: dict[str, Any] = {"compose_file": str(path), "project": project, **_labelled(project)}
            record(details)
        said.seek(0)
        output = [line.strip() for line in said.read().splitlines() if line.strip()]
    if proc.returncode != 0:
        raise StackStartError(f"docker compose up failed: {output[-1] if output else f'exit {proc.returncode}'}",
                              log_tail=_failed_tail(details["containers"]))
    facts = _inspect(details["containers"])
    details["images"] = {_service(c): image_facts(c) for c in facts}
    details["opensearch"] = {"heap": heap}
    _note_healthy(project, healthy)
    details["timings_s"] = {f"{s}_healthy_s": round(healthy[s], 3) for s in sorted(healthy)}
    record(details)
    return details


def down(details: Mapping[str, Any]) -> None:
    """Remove exactly the recorded containers (and their anonymous volumes), then the recorded networks."""
    ids = [str(i) for i in details.get("containers", [])]
    if ids:
        subprocess.run(["docker", "rm", "-f", "-v", *ids], capture_output=True, text=True)
    networks = details.get("networks")
    if networks is None and details.get("project"):  # recorded before networks were: compose's default network
        networks = [f"{details['project']}_default"]
    if networks:
        subprocess.run(["docker", "network", "rm", *[str(n) for n in networks]], capture_output=True, text=True)


def _labelled(project: str) -> dict[str, list[str]]:
    """The ids of the containers and networks carrying ``project``'s label, sorted."""
    label = f"label={PROJECT_LABEL}={project}"
    containers = subprocess.run(["docker", "ps", "-aq", "--no-trunc", "--filter", label], capture_output=True,
                                text=True)
    networks = subprocess.run(["docker", "network", "ls", "-q", "--no-trunc", "--filter", label],
                              capture_output=True, text=True)
    return {"containers": sorted(containers.stdout.split()), "networks": sorted(networks.stdout.split())}


def _inspect(ids: list[str]) -> list[dict[str, Any]]:
    if not ids:
        return []
    out = subprocess.run(["docker", "inspect", *ids], capture_output=True, text=True)
    try:
        facts = json.loads(out.stdout)
    except ValueError:
        return []
    return [c for c in facts if isinstance(c, dict)]


def _failed_tail(ids: list[str]) -> tuple[str, ...]:
    """The last log lines of the first container that is not running healthy: the one that made up fail."""
    for c in _inspect(ids):
        state = c.get("State", {})
        if state.get("Status") != "running" or state.get("Health", {}).get("Status") not in (None, "healthy"):
            logs = subprocess.run(["docker", "logs", "--tail", str(LOG_TAIL), c["Id"]], capture_output=True,
                                  text=True)
            return (f"[{_service(c)}]", *(logs.stdout + logs.stderr).rstrip().splitlines()[-LOG_TAIL:])
    return ()


def _service(container: Mapping[str, Any]) -> str:
    return str(container.get("Config", {}).get("Labels", {}).get(SERVICE_LABEL, container.get("Id", "")[:12]))


def _note_healthy(project: str, healthy: dict[str, float]) -> None:
    """Seconds from each container's start to now, for the services that have just turned healthy."""
    for c in _inspect(_labelled(project)["containers"]):
        state = c.get("State", {})
        if _service(c) not in healthy and state.get("Health", {}).get("Status") == "healthy":
            started = _instant(state["StartedAt"])
            healthy[_service(c)] = (datetime.datetime.now(datetime.UTC) - started).total_seconds()


def _instant(text: str) -> datetime.datetime:
    """An RFC 3339 time as the engine writes it (nanoseconds, Z or an offset), to the microsecond."""
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?", text)
    if m is None:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    zone = "+00:00" if m.group(3) in (None, "Z") else m.group(3)
    return datetime.datetime.fromisoformat(f"{m.group(1)}.{(m.group(2) or '0')[:6].ljust(6, '0')}{zone}")
