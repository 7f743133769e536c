"""Clients for a stack's two endpoints, and the one place a server's failure mid-way becomes a refusal.

Every stage that talks to the servers (load, the retrieval arms, the answer engine) opens its clients here
and runs inside :func:`stack_errors`, so a server that stops answering is one line and exit 3, never a
traceback.
"""

from __future__ import annotations

import contextlib
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


def postgres_connect(stack: StackInfo) -> psycopg.Connection:
    import psycopg

    return psycopg.connect(stack.postgres_dsn)


@contextlib.contextmanager
def stack_errors(stack: StackInfo) -> Iterator[None]:
    """Any failure of either server's client mid-way — a server that stops answering, a request it refuses, a
    value it cannot store — becomes a one-line refusal naming the server, never a traceback."""
    import psycopg
    from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
    from opensearchpy.exceptions import OpenSearchException, TransportError

    try:
        yield
    except OpenSearchConnectionError as exc:
        raise StackStateError(redact_url(f"OpenSearch at {stack.opensearch_url} does not answer: {_first_line(exc)}")
                              ) from None
    except TransportError as exc:
        raise StackStateError(redact_url(f"OpenSearch at {stack.opensearch_url} refused a request: "
                                         f"{_first_line(exc)}")) from None
    except OpenSearchException as exc:
        raise StackStateError(f"OpenSearch client error: {type(exc).__name__}: {_first_line(exc)}") from None
    except psycopg.OperationalError as exc:
        raise StackStateError(f"PostgreSQL does not answer: {_first_line(exc)}") from None
    except psycopg.Error as exc:
        raise StackStateError(f"PostgreSQL refused a request: {type(exc).__name__}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
