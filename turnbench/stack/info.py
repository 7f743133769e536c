"""StackInfo: what every provider hands the rest of turnbench — endpoints and the versions the servers report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class StackInfo:
    provider: str  # "embedded" | "docker" | "external"
    opensearch_url: str  # e.g. "http://127.0.0.1:9231"
    postgres_dsn: str  # libpq DSN usable by psycopg.connect
    opensearch_version: str  # version.number as the server reports it
    lucene_version: str
    postgres_version: str  # SHOW server_version
    # Provider facts (pids or container ids, binary sources, heap, data dirs, why chosen); not part of equality.
    details: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def versions(self) -> dict:
        """The server versions for results provenance (DESIGN §3 rule 1)."""
        return {
            "opensearch": self.opensearch_version,
            "lucene": self.lucene_version,
            "postgresql": self.postgres_version,
        }

    def to_json(self) -> dict:
        out = asdict(self)
        out["details"] = dict(self.details)
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> StackInfo:
        return cls(
            provider=obj["provider"],
            opensearch_url=obj["opensearch_url"],
            postgres_dsn=obj["postgres_dsn"],
            opensearch_version=obj["opensearch_version"],
            lucene_version=obj["lucene_version"],
            postgres_version=obj["postgres_version"],
            details=dict(obj.get("details", {})),
        )
