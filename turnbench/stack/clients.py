"""Clients for a stack's two endpoints, and the one place a server's failure mid-way becomes a refusal.

Every stage that talks to the servers (load, the retrieval arms, the answer engine) opens its clients here
and runs inside :func:`stack_errors`, so a server that stops answering is one line and exit 3, never a
traceback.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from turnbench.errors import StackStateError
from turnbench.stack.info import StackInfo
from turnbench.stack.net import redact_url

if TYPE_CHECKING:
    import psycopg
    from opensearchpy import OpenSearch

# force-merge blocks until it is done, so the client waits far longer than a search ever takes
CLIENT_TIMEOUT_S = 300


def opensearch_client(stack: StackInfo) -> OpenSearch:
    from opensearchpy import OpenSearch

    return OpenSearch(hosts=[stack.opensearch_url], timeout=CLIENT_TIMEOUT_S, max_retries=0, http_compress=False)


def search_client(stack: StackInfo) -> OpenSearch:
    """What a run searches with: on an ``http://`` stack the few calls it makes sent by urllib3 alone
    (``stack.lightclient``: opensearch-py's import was the largest part of a short run's own time), else
    ``opensearch_client``. Typed as the client it stands in for; it answers only what a run calls."""
    if not stack.opensearch_url.lower().startswith("http://"):
        return opensearch_client(stack)
    from turnbench.stack.lightclient import LightClient

    return LightClient(stack.opensearch_url, CLIENT_TIMEOUT_S)  # type: ignore[return-value]


def postgres_connect(stack: StackInfo) -> psycopg.Connection:
    import psycopg

    return psycopg.connect(stack.postgres_dsn)


@contextlib.contextmanager
def stack_errors(stack: StackInfo) -> Iterator[None]:
    """Any failure of either server's client mid-way — a server that stops answering, a request it refuses, a
    value it cannot store — becomes a one-line refusal naming the server, never a traceback."""
    try:
        yield
    except Exception as exc:
        refusal = _refusal(stack, exc)
        if refusal is None:
            raise
        raise refusal from None


def _refusal(stack: StackInfo, exc: Exception) -> StackStateError | None:
    """``exc`` as a refusal, when a client raised it. A client's exceptions are looked up only once its module is
    imported (none of them can exist before), so a command that never opens a PostgreSQL connection never imports
    psycopg for this."""
    light = loaded_exceptions("turnbench.stack.lightclient", "ConnectionError", "TransportError")
    if light and isinstance(exc, light[1]):
        return _opensearch_refusal(stack, exc, unanswered=isinstance(exc, light[0]))
    found = loaded_exceptions("opensearchpy.exceptions", "ConnectionError", "TransportError", "OpenSearchException")
    if found:
        unanswered, refused, other = found
        if isinstance(exc, refused):
            return _opensearch_refusal(stack, exc, unanswered=isinstance(exc, unanswered))
        if isinstance(exc, other):
            return StackStateError(f"OpenSearch client error: {type(exc).__name__}: {_first_line(exc)}")
    found = loaded_exceptions("psycopg", "OperationalError", "Error")
    if found and isinstance(exc, found[1]):
        if isinstance(exc, found[0]):
            return StackStateError(f"PostgreSQL does not answer: {_first_line(exc)}")
        return StackStateError(f"PostgreSQL refused a request: {type(exc).__name__}: {_first_line(exc)}")
    return None


def _opensearch_refusal(stack: StackInfo, exc: Exception, *, unanswered: bool) -> StackStateError:
    said = "does not answer" if unanswered else "refused a request"
    return StackStateError(redact_url(f"OpenSearch at {stack.opensearch_url} {said}: {_first_line(exc)}"))


def loaded_exceptions(module: str, *names: str) -> tuple[type[BaseException], ...]:
    """The exception classes ``names`` of ``module`` once it is imported, else () — also while another thread is
    still importing it (a run's inventory thread may be): what has not been defined yet cannot have been raised."""
    found = [getattr(sys.modules.get(module), name, None) for name in names]
    classes = tuple(c for c in found if isinstance(c, type) and issubclass(c, BaseException))
    return classes if len(classes) == len(names) else ()


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
