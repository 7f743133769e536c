"""Provider ``external``: a stack someone else runs, named by flags or environment; and the version probe
every provider uses, so that providers differ in nothing but how the servers came to be."""

from __future__ import annotations

import urllib.error
from collections.abc import Mapping
from typing import Any, ClassVar

from turnbench import settings
from turnbench.errors import BadInput, StackStartError
from turnbench.stack.info import StackInfo
from turnbench.stack.net import http_json, redact_url
from turnbench.stack.provider import Provider

ENV_URL = settings.OPENSEARCH_URL.name
ENV_DSN = settings.POSTGRES_DSN.name


def probe_opensearch(url: str, timeout: float = 10.0) -> tuple[str, str]:
    """(version.number, lucene_version) as the node at ``url`` reports them."""
    try:
        root = http_json(url.rstrip("/") + "/", timeout=timeout)
        return str(root["version"]["number"]), str(root["version"]["lucene_version"])
    except (OSError, urllib.error.URLError, ValueError, KeyError, TypeError) as exc:
        raise StackStartError(redact_url(f"OpenSearch at {url} does not answer: {exc}")) from None


def probe_postgres(dsn: str, timeout: float = 10.0) -> str:
    import psycopg

    try:
        with psycopg.connect(dsn, connect_timeout=max(1, int(timeout)), autocommit=True) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            return str(row[0]) if row else ""
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StackStartError(f"PostgreSQL at {redact(dsn)} does not answer: {first}") from None


def describe(provider: str, opensearch_url: str, postgres_dsn: str, details: Mapping[str, Any],
             postgres_version: str | None = None) -> StackInfo:
    """The stack at these endpoints with the versions its servers report now; ``postgres_version`` given (what the
    stack's record says): PostgreSQL is not asked, for a command that may never open a connection to it."""
    os_version, lucene = probe_opensearch(opensearch_url)
    pg_version = probe_postgres(postgres_dsn) if postgres_version is None else postgres_version
    return StackInfo(
        provider=provider,
        opensearch_url=opensearch_url.rstrip("/"),
        postgres_dsn=postgres_dsn,
        opensearch_version=os_version,
        lucene_version=lucene,
        postgres_version=pg_version,
        details=dict(details),
    )


def endpoints(opensearch_url: str | None = None, postgres_dsn: str | None = None) -> tuple[str, str] | None:
    """Endpoints from arguments, else from the environment; None when neither names both."""
    url = opensearch_url or settings.text(settings.OPENSEARCH_URL)
    dsn = postgres_dsn or settings.text(settings.POSTGRES_DSN)
    if url and dsn:
        return url, dsn
    if url or dsn:
        missing = "--postgres-dsn / " + ENV_DSN if url else "--opensearch-url / " + ENV_URL
        raise BadInput(f"an external stack needs both endpoints; missing {missing}")
    return None


class ExternalStack(Provider):
    """A stack someone else runs: nothing is started, so nothing is stopped."""

    name: ClassVar[str] = "external"

    def __init__(self, *, opensearch_url: str | None = None, postgres_dsn: str | None = None, **_: Any) -> None:
        # other providers' options (heap, ports) mean nothing for a stack we do not start
        self.opensearch_url, self.postgres_dsn = opensearch_url, postgres_dsn

    def _start(self, detached: bool) -> StackInfo:
        given = endpoints(self.opensearch_url, self.postgres_dsn)
        if given is None:
            raise BadInput(f"provider external needs --opensearch-url and --postgres-dsn (or {ENV_URL} and {ENV_DSN})")
        url, dsn = given
        if detached and (redact(url) != url or redact(dsn) != dsn):
            raise BadInput("stack up records its endpoints in a state file, and no password is written to a file: "
                           f"give them in {ENV_URL} and {ENV_DSN} to each command instead (--provider external)")
        source = "arguments" if self.opensearch_url else "environment"
        return describe("external", url, dsn, {"endpoints_from": source})

    def stop(self) -> None:
        pass

    @classmethod
    def down(cls, details: Mapping[str, Any]) -> None:
        pass


def redact(dsn: str) -> str:
    """The DSN without its password, for messages."""
    import re

    return re.sub(r"(password=)\S+", r"\1***", redact_url(dsn))
