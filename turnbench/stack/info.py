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

    @property
    def postgres_major(self) -> str:
        """The major version: what the pin fixes. "15.18 (Debian 15.18-0+deb12u1)" and "15.19" are both "15"."""
        return self.postgres_version.split(".")[0].split()[0]

    def versions(self) -> dict[str, str]:
        """The server versions a claim records (docs/design.md §3 rule 1, §9): what the pins fix, so every provider and
        machine running the pinned servers writes the same bytes. The full strings are in ``full_versions``."""
        return {
            "opensearch": self.opensearch_version,
            "lucene": self.lucene_version,
            "postgresql": self.postgres_major,
        }

    def full_versions(self) -> dict[str, str]:
        """The versions exactly as the servers report them, for runinfo.json (outside the claim)."""
        return {
            "opensearch": self.opensearch_version,
            "lucene": self.lucene_version,
            "postgresql": self.postgres_version,
        }

    def runinfo(self) -> dict[str, Any]:
        """What runinfo.json records about the stack: everything that may differ between providers and machines
        running the same pins (provider, exact versions, the JVM, where binaries came from, images)."""
        details = dict(self.details)
        # images (name and id) say what ran; container ids, like pids, only which run it was: every comparison
        # would note them
        keep: dict[str, Any] = {k: details[k] for k in ("chosen_because", "images") if k in details}
        for part in ("opensearch", "postgres"):
            facts = details.get(part)
            if isinstance(facts, Mapping):
                keep[part] = {k: facts[k] for k in ("java", "java_version", "java_source", "jar_lock_sha256", "heap",
                                                    "binary_source", "binary_origin", "bin_dir", "jars_replaced",
                                                    "tree_repaired") if k in facts}
        return {"provider": self.provider, "versions": self.full_versions(), **keep}

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
