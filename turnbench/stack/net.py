"""Ports and HTTP: what a provider needs to place a server and ask it how it is, and URLs that carry credentials.

An OpenSearch URL may carry basic-auth credentials (``http://user:password@host:9200``, percent-encoded as URLs
are): the clients send them as an Authorization header, and every message and file shows the URL with its password
replaced by ``***`` (``redact_url``), as a PostgreSQL DSN's is.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import urllib.parse
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


def split_credentials(url: str) -> tuple[str, str | None]:
    """``url`` without its userinfo, and the Authorization header value its userinfo stands for (None when none)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.hostname or ""
    netloc = (f"[{host}]" if ":" in host else host) + (f":{parts.port}" if parts.port else "")
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password or "")
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc)), f"Basic {token}"


_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@\s]*)(?::[^@/\s]*)?@")


def redact_url(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ``***`` (the user name kept: it is not a secret and
    says which account was used)."""
    return _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:***@", str(text))


def http_json(url: str, timeout: float = 5.0, method: str = "GET", body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    bare, auth = split_credentials(url)
    headers = {"Content-Type": "application/json", **({"Authorization": auth} if auth else {})}
    req = urllib.request.Request(bare, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8"))
