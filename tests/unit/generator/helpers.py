"""Helpers for the generator tests: read, corrupt and re-hash a corpus directory."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.corpus.format import UNHASHED, _listing, corpus_sha256


def copy_corpus(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def rehash(root: Path) -> None:
    """Rewrite the manifest's hashes after a deliberate corruption, so a semantic check must catch it."""
    root = Path(root)
    manifest = json.loads((root / "manifest.json").read_bytes())
    files = {rel: canonical.sha256_file(root / rel) for rel in sorted(_listing(root) - UNHASHED)}
    manifest["files"] = files
    manifest["corpus_sha256"] = corpus_sha256(files)
    canonical.write_json(root / "manifest.json", manifest)


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def write_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    Path(path).write_bytes(b"".join(canonical.dumps_line(r) for r in rows))


def edit_meeting(root: Path, meeting_id: str, edit: Callable[[dict[str, Any]], None]) -> None:
    for part in sorted((Path(root) / "meetings").glob("part-*.jsonl")):
        rows = read_lines(part)
        for row in rows:
            if row["id"] == meeting_id:
                edit(row)
                write_lines(part, rows)
                return
    raise KeyError(meeting_id)


def meeting(root: Path, meeting_id: str) -> dict[str, Any]:
    for part in sorted((Path(root) / "meetings").glob("part-*.jsonl")):
        for row in read_lines(part):
            if row["id"] == meeting_id:
                return row
    raise KeyError(meeting_id)


def facts(root: Path) -> list[dict[str, Any]]:
    return read_lines(Path(root) / "facts.jsonl")


def query(root: Path, qid: str) -> dict[str, Any]:
    (q,) = [q for q in read_lines(Path(root) / "queries.jsonl") if q["id"] == qid]
    return q


def meeting_id_first(root: Path) -> str:
    return read_lines(sorted((Path(root) / "meetings").glob("*.jsonl"))[0])[0]["id"]
