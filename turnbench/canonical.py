"""Canonical bytes: the one JSON writer, hashing and atomic writes (DESIGN §3 rule 4, §4)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

# Claimed floats are rounded to this many decimals before they are written or summed again (DESIGN §3 rule 4).
DECIMALS = 6


def q6(x: float) -> float:
    """``x`` rounded to ``DECIMALS``; ``+ 0.0`` turns -0.0 into 0.0 so a zero always prints the same."""
    return round(float(x), DECIMALS) + 0.0


def dumps(obj: Any) -> str:
    """Canonical JSON text: sorted keys, no insignificant whitespace, UTF-8 kept as is."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def dumps_line(obj: Any) -> bytes:
    return (dumps(obj) + "\n").encode("utf-8")


def pretty(obj: Any) -> bytes:
    """Canonical but indented JSON, for files people read (metrics.json, manifest.json)."""
    text = json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _as_if_created(path: Path, mode: int) -> None:
    """mkstemp/mkdtemp create owner-only entries; give the renamed result the permissions ``open``/``mkdir``
    would have, so corpora and results stay readable by the people they are shared with."""
    os.chmod(path, mode & ~_umask())


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same directory and ``os.replace``, so a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        _as_if_created(Path(tmp), 0o666)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def refuse_non_empty(path: Path, what: str = "output directory", hint: str = "choose a new directory") -> Path:
    """``path`` when it is absent or an empty directory; BadInput otherwise, so an old output is never mixed
    with a new one."""
    path = Path(path)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        from turnbench.errors import BadInput

        raise BadInput(f"{path}: {what} exists and is not empty; {hint}")
    return path


def write_json(path: Path, obj: Any) -> None:
    write_bytes_atomic(path, pretty(obj))


def write_jsonl(path: Path, rows: Iterable[Any]) -> str:
    """Write canonical JSON lines atomically; returns the file's sha256."""
    h = hashlib.sha256()
    chunks = []
    for row in rows:
        line = dumps_line(row)
        h.update(line)
        chunks.append(line)
    write_bytes_atomic(path, b"".join(chunks))
    return h.hexdigest()


def read_jsonl(path: Path) -> Iterator[Any]:
    with open(path, "rb") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                from turnbench.errors import CorpusIntegrityError

                raise CorpusIntegrityError(f"{path}: line {n} is not valid JSON ({exc.msg})") from None


@contextlib.contextmanager
def staged_directory(final: Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``final``; rename it into place only if the block succeeds.

    A failed or interrupted write leaves nothing at ``final`` that could pass for a complete output.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".partial", dir=final.parent))
    try:
        yield tmp
        _as_if_created(tmp, 0o777)
        if final.exists():
            final.rmdir()  # only an empty directory may be replaced; callers refuse a non-empty one first
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
