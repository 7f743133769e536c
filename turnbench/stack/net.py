"""Ports and HTTP on loopback: what a provider needs to place a server and ask it how it is."""

from __future__ import annotations

import json
import socket
import urllib.request
from typing import Any

from turnbench.errors import StackStartError

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """A port the kernel just handed out on loopback (a later bind can still race; the start then fails loudly)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def require_free_port(port: int, what: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((LOOPBACK, port))
        except OSError as exc:
            raise StackStartError(
                f"{what} port {port} on {LOOPBACK} is taken ({exc.strerror}); choose another port or leave it unset"
            ) from None
    return port


def http_json(url: str, timeout: float = 5.0, method: str = "GET", body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8"))
