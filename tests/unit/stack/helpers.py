"""Shared builders for the stack tests: a recorded StackInfo and a fake `java` that prints a chosen version."""

from __future__ import annotations

from pathlib import Path

from turnbench.stack import StackInfo

INFO = StackInfo(
    provider="embedded",
    opensearch_url="http://127.0.0.1:1",
    postgres_dsn="host=127.0.0.1 port=1 user=turnbench dbname=turnbench",
    opensearch_version="2.19.6",
    lucene_version="9.12.3",
    postgres_version="15.18",
    details={"processes": []},
)


def fake_java(tmp_path: Path, version_line: str) -> Path:
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(0o755)
    return java


def words(n, tag="w"):
    return " ".join(f"{tag}{i}" for i in range(n))
