"""Writing what a verb returned where the caller asked: bytes and text atomically (a temporary file renamed into
place, so a killed process leaves the old file or none, never half of one), JSON as turnbench's canonical bytes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turnbench.api._args import PathLike, _path, _typed


def write_bytes(path: PathLike, data: bytes) -> None:
    """``data`` at ``path``, atomically."""
    from turnbench import canonical

    canonical.write_bytes_atomic(_path(path, "path"), _typed(data, bytes, "data", "bytes"))


def write_text(path: PathLike, text: str) -> None:
    """``text`` at ``path`` as UTF-8, atomically."""
    write_bytes(path, _typed(text, str, "text", "text (str)").encode("utf-8"))


def write_json(path: PathLike, document: Mapping[str, Any]) -> None:
    """``document`` at ``path`` as canonical JSON, indented for people (as metrics.json is written), atomically."""
    from turnbench import canonical

    canonical.write_json(_path(path, "path"), _typed(document, Mapping, "document", "a mapping"))


def json_text(document: Mapping[str, Any], *, pretty: bool = False) -> str:
    """``document`` as canonical JSON text: one line, or indented for people (``pretty``, with a final newline)."""
    from turnbench import canonical

    _typed(document, Mapping, "document", "a mapping")
    return canonical.pretty(document).decode() if pretty else canonical.dumps(document)
