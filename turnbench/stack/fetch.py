"""Pinned files fetched over HTTP(S) into the user cache, verified by size and sha256 before they get their name.

The store is content-addressed, ``<cache>/sha256/<digest>/<file>``: a cache filled from one lock never clobbers
a file another lock, another checkout or a running node relies on, because different bytes never share a path
(a shared stamp once let a Maven-filled cache and a lock-filled one overwrite each other under a running JVM).

A download streams into a temporary name beside its final one, hashed as it arrives, and is renamed into place
only when size and sha256 are the pinned ones; other bytes are removed and refused. A cached file is hashed
again whenever it is used: one whose bytes changed is removed and fetched again. A fetch killed outright leaves
only a temporary name, which the next fetch of that file sweeps once its process is gone; SIGTERM and Ctrl-C stop
the downloads in flight and remove their temporary files.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import queue
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from turnbench import canonical
from turnbench.errors import ArtifactMismatch, BadInput, FetchFailed
from turnbench.processes import is_running, start_ticks

WORKERS = 4  # measured: 4 parallel downloads fill the 76 jars in ~3 s; more only adds load on 2 cores
TIMEOUT = 60.0
ATTEMPTS = 4
RETRY_DELAY = 0.5  # seconds, doubled after each failed attempt
BLOCK = 1 << 16
USER_AGENT = "turnbench (+https://pypi.org/project/turnbench) python-urllib"
_SAFE_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+\-]{0,200}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Pinned:
    """One file as a lock pins it. ``url`` is None for a file that is not downloaded but placed from another
    source (a jar inside a pinned zip, a jar Maven fetched): it is verified the same way."""

    file: str
    sha256: str
    size: int
    url: str | None

    def __post_init__(self) -> None:
        if not _SAFE_FILE.fullmatch(self.file) or not _SHA256.fullmatch(self.sha256) or self.size < 0:
            raise BadInput(f"not a pinned file: {self.file[:80]!r} sha256 {self.sha256[:80]!r} size {self.size}")

    def path(self, store: Path) -> Path:
        return store / self.sha256 / self.file


@dataclass(frozen=True)
class Report:
    paths: tuple[Path, ...]  # in the order asked for
    fetched: tuple[str, ...]
    replaced: tuple[str, ...]  # were cached with other bytes: removed and fetched again
    bytes_fetched: int
    seconds: float


class _Stopped(FetchFailed):
    """A download given up because another failed or the command is ending."""


def store_dir(cache: Path) -> Path:
    return cache / "sha256"


def matches(path: Path, item: Pinned) -> bool:
    try:
        return path.stat().st_size == item.size and canonical.sha256_file(path) == item.sha256
    except OSError:
        return False


def ensure(items: Sequence[Pinned], store: Path, *, offline: bool = False, workers: int = WORKERS,
           what: str = "files") -> Report:
    """Every item in ``store``, verified; what is missing (or cached with other bytes) is fetched unless
    ``offline``. Refuses with ArtifactMismatch when a download's bytes are not the pinned ones, FetchFailed when
    a file cannot be fetched; either way nothing unverified is left under a final name."""
    t0 = time.monotonic()
    try:
        store.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"{store}: the user cache cannot be made there ({exc.strerror}); set TURNBENCH_CACHE_DIR to a "
                       "directory you can write") from None
    replaced, missing = [], []
    for item in items:
        path = item.path(store)
        if path.exists() and not matches(path, item):
            try:
                _remove(path)
            except OSError as exc:
                raise canonical.write_error(path, exc) from None
            replaced.append(item.file)
        if not path.exists():
            missing.append(item)
    if missing and offline:
        raise FetchFailed(f"{len(missing)} {what} not in the cache {store} (first: {missing[0].file}): "
                          "fetch them first (`make jars`)", replaced=tuple(replaced))
    no_url = [m.file for m in missing if m.url is None]
    if no_url:
        raise FetchFailed(f"{no_url[0]} is not in the cache {store} and has no URL to fetch it from")
    try:
        fetched = _download_all(missing, store, workers) if missing else 0
    except FetchFailed as exc:
        exc.replaced = tuple(replaced)  # a fallback that recovers must still say what it repaired
        raise
    return Report(paths=tuple(item.path(store) for item in items), fetched=tuple(m.file for m in missing),
                  replaced=tuple(replaced), bytes_fetched=fetched, seconds=time.monotonic() - t0)


def install(item: Pinned, source: IO[bytes], store: Path) -> Path:
    """Place ``item`` from an open binary stream (a zip member, a file another tool fetched), verified."""
    final = item.path(store)
    if matches(final, item):
        return final
    _receive(item, final, iter(lambda: source.read(BLOCK), b""), _Run(), origin="the given source")
    return final


# -- downloads -------------------------------------------------------------------------------------------------
class _Run:
    """One batch of downloads: the stop signal its threads watch, and the temporary files they are writing."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.parts: set[Path] = set()
        self.lock = threading.Lock()
        self.errors: list[BaseException] = []

    def abandon(self) -> None:
        """Stop every download and remove the temporary files in flight: the threads may be blocked reading a
        stalled connection, and a command that is ending must not wait for them (they are daemons)."""
        self.stop.set()
        with self.lock:
            for part in self.parts:
                _remove(part)


def _download_all(missing: Sequence[Pinned], store: Path, workers: int) -> int:
    run = _Run()
    todo: queue.SimpleQueue[Pinned] = queue.SimpleQueue()
    for item in missing:
        todo.put(item)

    def worker() -> None:
        while not run.stop.is_set():
            try:
                item = todo.get_nowait()
            except queue.Empty:
                return
            try:
                _download(item, store, run)
            except BaseException as exc:  # handed to the main thread, which raises it
                with run.lock:
                    run.errors.append(exc)
                run.stop.set()
                return

    threads = [threading.Thread(target=worker, name="turnbench-fetch", daemon=True)
               for _ in range(max(1, min(workers, len(missing))))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)  # a bounded wait, so SIGTERM and Ctrl-C are handled at once
    except BaseException:
        run.abandon()
        raise
    if run.errors:
        real = [e for e in run.errors if not isinstance(e, _Stopped)] or run.errors
        # a mismatch says more than a network error that may have followed it
        raise next((e for e in real if isinstance(e, ArtifactMismatch)), real[0])
    return sum(item.size for item in missing)


def _download(item: Pinned, store: Path, run: _Run) -> int:
    url = str(item.url)
    for attempt in range(ATTEMPTS):
        if run.stop.is_set():
            raise _Stopped(f"{item.file}: stopped")
        try:
            request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                _receive(item, item.path(store), iter(lambda: response.read(BLOCK), b""), run, origin=url)
            return item.size
        except urllib.error.HTTPError as exc:
            transient = exc.code >= 500 or exc.code == 429
            if not transient or attempt == ATTEMPTS - 1:
                raise FetchFailed(f"could not fetch {url}: HTTP {exc.code} {exc.reason}") from None
        except (OSError, http.client.HTTPException) as exc:  # URLError, resets, timeouts, a cut-off body
            if attempt == ATTEMPTS - 1:
                reason = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
                raise FetchFailed(f"could not fetch {url}: {reason}") from None
        run.stop.wait(RETRY_DELAY * 2 ** attempt)
    raise AssertionError("unreachable")


def _receive(item: Pinned, final: Path, blocks: Iterable[bytes], run: _Run, *, origin: str) -> None:
    """Stream ``blocks`` into a temporary file beside ``final``, hashing; rename only when the bytes are pinned.
    Errors reading ``blocks`` (the network) pass through as they are; errors writing become one line."""
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        _sweep(final.parent)
        part = final.parent / f".{final.name}.{os.getpid()}.{start_ticks(os.getpid())}.{threading.get_ident()}.part"
        with run.lock:
            if run.stop.is_set():
                raise _Stopped(f"{item.file}: stopped")
            fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            run.parts.add(part)
    except OSError as exc:
        raise canonical.write_error(final.parent, exc) from None
    digest, size = hashlib.sha256(), 0
    try:
        with os.fdopen(fd, "wb", buffering=0) as out:
            for block in blocks:
                if run.stop.is_set():
                    raise _Stopped(f"{item.file}: stopped")
                size += len(block)
                if size > item.size:
                    raise ArtifactMismatch(f"{item.file} from {origin}: more than the {item.size} bytes its lock "
                                           "pins; removed, refused")
                digest.update(block)
                try:
                    out.write(block)
                except OSError as exc:
                    raise canonical.write_error(final, exc) from None
        if size != item.size or digest.hexdigest() != item.sha256:
            raise ArtifactMismatch(f"{item.file} from {origin}: {size} bytes with sha256 {digest.hexdigest()}, "
                                   f"its lock pins {item.size} bytes with sha256 {item.sha256}; removed, refused")
        with run.lock:
            if run.stop.is_set():
                raise _Stopped(f"{item.file}: stopped")
            try:
                os.replace(part, final)
            except OSError as exc:
                raise canonical.write_error(final, exc) from None
            run.parts.discard(part)
    except BaseException:
        _remove(part)
        with run.lock:
            run.parts.discard(part)
        raise


def _sweep(directory: Path) -> None:
    """Remove temporary files of fetches whose process is gone (killed outright): never a live fetch's."""
    for part in directory.glob(".*.part"):
        fields = part.name.rsplit(".", 4)
        try:
            pid, ticks = int(fields[1]), int(fields[2])
        except (IndexError, ValueError):
            continue  # not one of ours
        if not is_running(pid, ticks):
            _remove(part)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
