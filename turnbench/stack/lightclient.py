"""The few OpenSearch calls a run makes, sent with urllib3 alone: what ``turnbench run`` talks to the server with.

opensearch-py's import (it pulls in requests and asyncio) costs a short run more than its searches' parsing; a run
needs only these calls: the index's marker and counts, the ``_msearch`` batches, the node's plugins. They are sent
as opensearch-py's default connection (urllib3) sends them — the same bodies, the credentials of the URL as basic
auth, no retry, the client's timeout — and a failure is raised as opensearch-py raises it: a ``TransportError``
carrying the status, the error's type and the parsed body, whose text is opensearch-py's (``ConnectionError`` when
the server does not answer), so every refusal built on it reads as before. Only ``http://`` stacks: an ``https://``
one keeps opensearch-py, whose TLS settings (certificate verification, its CA bundle) are the stack's
(``turnbench.stack.clients.search_client``).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from typing import Any

MAX_CONNECTIONS = 32  # kept open per host: one per thread a run may search from (engines.MAX_CONCURRENCY)
HTTP_NAMES = {400: "RequestError", 401: "AuthenticationException", 403: "AuthorizationException",
              404: "NotFoundError", 409: "ConflictError"}  # opensearch-py's exception per status


class TransportError(Exception):
    """A request OpenSearch answered with a status >= 400, or (``ConnectionError``) one it did not answer:
    ``status_code``, ``error`` and ``info`` as opensearch-py's exception of that name carries them."""

    @property
    def status_code(self) -> int | str:
        return self.args[0]

    @property
    def error(self) -> Any:
        return self.args[1]

    @property
    def info(self) -> Any:
        return self.args[2]

    def __str__(self) -> str:  # opensearch-py's text
        cause = ""
        info = self.info
        try:
            if info and isinstance(info, dict) and "error" in info:
                error = info["error"]
                if isinstance(error, dict):
                    root = error["root_cause"][0]
                    cause = ", ".join(filter(None, [repr(root["reason"]), root.get("resource.id"),
                                                    root.get("resource.type")]))
                else:
                    cause = repr(error)
        except LookupError:
            pass
        name = HTTP_NAMES.get(self.status_code, "TransportError") if isinstance(self.status_code, int) else \
            "TransportError"
        return f"{name}({', '.join(filter(None, [str(self.status_code), repr(self.error), cause]))})"


class ConnectionError(TransportError):  # noqa: A001 - opensearch-py's name, which the messages carry
    def __str__(self) -> str:
        if self.status_code == "TIMEOUT":
            return f"ConnectionTimeout caused by - {self.info.__class__.__name__}({self.info})"
        return f"ConnectionError({self.error}) caused by: {self.info.__class__.__name__}({self.info})"


class _Indices:
    def __init__(self, client: LightClient) -> None:
        self._client = client

    def exists(self, *, index: str) -> bool:
        return self._client.request("HEAD", f"/{_quote(index)}", missing_ok=True) is not None

    def get_mapping(self, *, index: str) -> Any:
        return self._client.request("GET", f"/{_quote(index)}/_mapping")

    def get_data_stream(self, *, name: str) -> Any:
        return self._client.request("GET", f"/_data_stream/{_quote(name)}")


class _Nodes:
    def __init__(self, client: LightClient) -> None:
        self._client = client

    def info(self, *, metric: str) -> Any:
        return self._client.request("GET", f"/_nodes/{_quote(metric)}")


class LightClient:
    """What a run calls on an ``opensearchpy.OpenSearch``, with the same arguments and answers."""

    def __init__(self, url: str, timeout: float) -> None:
        import urllib3

        from turnbench.stack.net import split_credentials

        bare, auth = split_credentials(url)
        self._base = bare.rstrip("/")
        self._headers = {"Authorization": auth} if auth else {}
        self._http = urllib3.PoolManager(maxsize=MAX_CONNECTIONS, timeout=urllib3.Timeout(total=timeout),
                                         retries=False)
        self.indices, self.nodes = _Indices(self), _Nodes(self)

    def count(self, *, index: str) -> Any:
        return self.request("GET", f"/{_quote(index)}/_count")

    def search(self, *, index: str, body: Mapping[str, Any]) -> Any:
        return self.request("POST", f"/{_quote(index)}/_search", body=json.dumps(body).encode())

    def msearch(self, *, body: bytes, filter_path: str) -> Any:
        return json.loads(self.msearch_bytes(body=body, filter_path=filter_path))

    def msearch_bytes(self, *, body: bytes, filter_path: str) -> bytes:
        """``msearch``'s answer as the server sent it, for a reader that decodes it straight into its own records
        (``engines.msearch``)."""
        answer: bytes = self.request("POST", f"/_msearch?filter_path={urllib.parse.quote(filter_path, safe=',')}",
                                     body=body, content_type="application/x-ndjson", parsed=False)
        return answer

    def request(self, method: str, path: str, *, body: bytes | None = None, content_type: str = "application/json",
                missing_ok: bool = False, parsed: bool = True) -> Any:
        """The answer's JSON (its bytes unless ``parsed``; True for a HEAD), None for a 404 when ``missing_ok``;
        TransportError otherwise."""
        import urllib3

        headers = {**self._headers, **({"Content-Type": content_type} if body is not None else {})}
        try:
            resp = self._http.request(method, self._base + path, body=body, headers=headers, redirect=False)
        except urllib3.exceptions.ReadTimeoutError as exc:
            raise ConnectionError("TIMEOUT", str(exc), exc) from None
        except urllib3.exceptions.HTTPError as exc:
            raise ConnectionError("N/A", str(exc), exc) from None
        if resp.status == 404 and missing_ok:
            return None
        if not 200 <= resp.status < 300:
            raise _error(resp.status, resp.data, resp.headers.get("Content-Type"))
        if method == "HEAD":
            return True
        return json.loads(resp.data) if parsed else resp.data


def _error(status: int, raw: bytes, content_type: str | None) -> TransportError:
    """opensearch-py's exception for this answer: the parsed JSON body, and its error's type as the message."""
    message: Any = raw.decode("utf-8", "replace")
    info = None
    if raw and (content_type or "text/plain").split(";")[0].strip() == "application/json":
        try:
            info = json.loads(raw)
            message = info.get("error", message)
            if isinstance(message, dict) and "type" in message:
                message = message["type"]
        except (ValueError, TypeError, AttributeError):
            pass
    return TransportError(status, message, info)


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe=",*")
