"""Provider ``docker``: testcontainers' OpenSearch and PostgreSQL modules with the pinned images; ephemeral,
removed on exit. Untested on the machine turnbench is developed on (no Docker engine there)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from turnbench.errors import StackStartError
from turnbench.stack import pins


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
