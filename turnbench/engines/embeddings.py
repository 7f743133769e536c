"""Embeddings as data: texts embedded once, cached by encoder and text hash, rounded, digested (docs/design.md §11).

The cache lives in the user cache (``~/.cache/turnbench``, ``$XDG_CACHE_HOME/turnbench`` or
``TURNBENCH_CACHE_DIR``) under ``embeddings/<encoder id>-<fingerprint>/<sha[:2]>/<sha>.f32d``: ``sha`` is the
sha256 of the text's UTF-8 bytes, the fingerprint the first 12 hex digits of the sha256 of the encoder's
provenance (model and tokenizer hashes, settings, runtime versions), so a changed model never reads another's
vectors. Questions are embedded as queries and kept apart, under ``query/`` in the same directory: an asymmetric
encoder (bge-small's retrieval instruction) gives a question another vector than the same words as a passage. A
file holds the encoder's float32 output, little-endian, exactly ``dim`` values, then the 32-byte HMAC-SHA256 of the
key and those values under the cache's own secret: an entry whose bytes do not give its digest — of another size,
tampered with, another key's vector copied under this name, or rewritten with a digest recomputed by anyone who does
not hold the secret — is removed and the text encoded again (and counted as repaired), so a cache is never trusted
beyond what it can prove. Files are written atomically.

The secret is 32 random bytes in ``embeddings/cache.key`` of the same cache (one per cache, beside the entries it
signs, so a cache kept between CI runs keeps its key, and a fresh clone encodes once, then reads), created on first
use with mode 0600. A key that is missing, not 32 bytes, not the user's, or readable by others is replaced by a new
one: every entry it signed fails its digest and is encoded again, once.

Vectors are made reproducible before they reach an index: each component is rounded to 6 decimals, kept as the
integer ``rint(x * 10**6)`` (half to even) and sent as that integer / 10**6, so last-bit differences between CPUs
rarely move a ranking. The digest is the sha256 over, in id order, each id's UTF-8 bytes, a NUL byte and its
rounded components as little-endian int32: equal digests mean equal vectors in the index.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnbench import canonical
from turnbench.engines.arms import Arm
from turnbench.engines.encoders import Encoder, Role, check_role
from turnbench.settings import cache_dir

if TYPE_CHECKING:
    import numpy as np

    from turnbench.loading.vectors import VectorSpec

DECIMALS = 6
SCALE = 10 ** DECIMALS
ROUNDING = f"each component rounded to {DECIMALS} decimals: rint(x * 1e{DECIMALS}), half to even"
DIGEST = "sha256 over ids in sorted order: id UTF-8, NUL, rounded components as int32 little-endian"
ENCODE_CHUNK = 256  # texts handed to the encoder at once: the progress bar's step


@dataclass(frozen=True)
class Embeddings:
    """Rounded vectors of some texts by one encoder, in id order."""

    encoder: dict[str, Any]  # the encoder's provenance
    ids: tuple[str, ...]
    micro: np.ndarray  # int32 (len(ids), dim): the components times 10**6
    digest: str
    cached: int = 0  # texts read from the cache
    encoded: int = 0  # texts the model ran on
    repaired: int = 0  # cache entries that failed their digest, removed and encoded again
    seconds: float = 0.0
    index: dict[str, int] = field(default_factory=dict, compare=False)

    def vector(self, item_id: str) -> list[float]:
        """The rounded vector of ``item_id`` as the index receives it."""
        return [int(x) / SCALE for x in self.micro[self.index[item_id]]]

    def provenance(self, what: str) -> dict[str, Any]:
        """What a results file records: the encoder, the rounding and the digest of these vectors."""
        return {"encoder": self.encoder, "rounding": ROUNDING, "digest": {"of": what, "count": len(self.ids),
                                                                          "method": DIGEST, "sha256": self.digest}}


def store(encoder: Encoder, root: Path | None = None) -> Path:
    fingerprint = canonical.sha256_bytes(canonical.dumps(encoder.provenance()).encode())[:12]
    return (root or cache_dir()) / "embeddings" / f"{encoder.id}-{fingerprint}"


def round_micro(vectors: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.rint(vectors.astype(np.float64) * SCALE).astype("<i4")


def digest(ids: Sequence[str], micro: np.ndarray) -> str:
    import hashlib

    h = hashlib.sha256()
    for i in sorted(range(len(ids)), key=lambda k: ids[k]):
        h.update(ids[i].encode("utf-8") + b"\0")
        h.update(micro[i].astype("<i4").tobytes())
    return h.hexdigest()


def embed(encoder: Encoder, items: Iterable[tuple[str, str]], *, role: Role, root: Path | None = None,
          progress: Callable[[int, int], None] | None = None) -> Embeddings:
    """The rounded vectors of ``(id, text)`` items (ids distinct), all ``role`` ("query" or "passage"), from the
    cache where it holds them, the rest encoded and cached. ``progress(done, total)`` is called with each chunk of
    texts encoded and the number of texts the model has to run on."""
    import numpy as np

    t0 = time.perf_counter()
    pairs = sorted(items)
    ids = tuple(i for i, _ in pairs)
    if len(set(ids)) != len(ids):
        raise ValueError("embed: two items share an id")
    directory = store(encoder, root)
    if check_role(role) == "query":
        directory = directory / "query"
    out = np.empty((len(pairs), encoder.dim), dtype=np.float32)
    keys = [canonical.sha256_bytes(text.encode("utf-8")) for _, text in pairs]
    todo: dict[str, list[int]] = {}
    repaired = 0
    secret = cache_secret((root or cache_dir()) / "embeddings")
    for n, key in enumerate(keys):
        vec, damaged = _read(directory, key, encoder.dim, secret)
        repaired += damaged
        if vec is None:
            todo.setdefault(key, []).append(n)
        else:
            out[n] = vec
    fresh = list(todo)
    for lo in range(0, len(fresh), ENCODE_CHUNK):
        chunk = fresh[lo:lo + ENCODE_CHUNK]
        vectors = encoder.encode([pairs[todo[k][0]][1] for k in chunk], role)
        for key, vec in zip(chunk, vectors, strict=True):
            _write(directory, key, vec, secret)
            out[todo[key]] = vec
        if progress is not None:
            progress(len(chunk), len(fresh))
    micro = round_micro(out)
    encoded = sum(len(v) for v in todo.values())
    return Embeddings(encoder.provenance(), ids, micro, digest(ids, micro), cached=len(pairs) - encoded,
                      encoded=len(fresh), repaired=repaired, seconds=time.perf_counter() - t0,
                      index={i: n for n, i in enumerate(ids)})


def _path(directory: Path, key: str) -> Path:
    return directory / key[:2] / f"{key}.f32d"


KEY_FILE = "cache.key"
KEY_BYTES = 32


def cache_secret(embeddings: Path) -> bytes:
    """The secret the entries under ``embeddings`` are signed with (``embeddings/cache.key``), created on first use
    with mode 0600; replaced by a new one when it is missing, not ``KEY_BYTES`` long, not this user's, or open to
    others (every entry the old one signed is then encoded again, once)."""
    path = embeddings / KEY_FILE
    found = _read_secret(path)
    if found is not None:
        return found
    secret = os.urandom(KEY_BYTES)
    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.tmp")
    try:
        embeddings.mkdir(parents=True, exist_ok=True)
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secret)
        try:
            os.link(tmp, path)  # a key another process made first is kept, and read back
        except FileExistsError:
            again = _read_secret(path)
            if again is not None:
                return again
            os.replace(tmp, path)  # the one there is no key: replaced
        except OSError:  # a file system without hard links: the last writer's key wins
            os.replace(tmp, path)
    except OSError as exc:
        raise canonical.write_error(path, exc) from None
    finally:
        tmp.unlink(missing_ok=True)
    return secret


def _read_secret(path: Path) -> bytes | None:
    """The key at ``path`` when it is one this user made and no one else can read; else None."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077 or st.st_uid != os.geteuid()
                or st.st_size != KEY_BYTES):
            return None
        data = os.read(fd, KEY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == KEY_BYTES else None


def _entry_digest(key: str, payload: bytes, secret: bytes) -> bytes:
    import hashlib
    import hmac

    return hmac.new(secret, key.encode("ascii") + b"\0" + payload, hashlib.sha256).digest()


def _read(directory: Path, key: str, dim: int, secret: bytes) -> tuple[np.ndarray | None, bool]:
    """The cached vector of ``key`` (None when absent), and whether an entry was there but failed its digest (it is
    removed: the caller encodes the text again)."""
    import hmac

    import numpy as np

    path = _path(directory, key)
    try:
        data = path.read_bytes()
    except OSError:
        return None, False
    payload, mark = data[:4 * dim], data[4 * dim:]
    if len(data) != 4 * dim + 32 or not hmac.compare_digest(mark, _entry_digest(key, payload, secret)):
        try:
            path.unlink()
        except OSError:
            pass
        return None, True
    return np.frombuffer(payload, dtype="<f4"), False


def _write(directory: Path, key: str, vector: np.ndarray, secret: bytes) -> None:
    path = _path(directory, key)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    payload = vector.astype("<f4").tobytes()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(payload + _entry_digest(key, payload, secret))
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise canonical.write_error(path, exc) from None


def vector_spec(encoder_name: str, field: str = "embedding", *, graph: bool = True, engine: str = "lucene",
                root: Path | None = None, graph_order: int = 0) -> VectorSpec:
    """What ``load`` needs to give the index a vector field filled by ``encoder_name`` (cached embeddings)."""
    from turnbench.engines import encoders
    from turnbench.loading.vectors import VectorSpec

    encoder = encoders.get(encoder_name)

    def run(items: Sequence[tuple[str, str]], progress: Callable[[int, int], None] | None
            ) -> tuple[Callable[[str], list[float]], dict[str, Any]]:
        found = embed(encoder, items, role="passage", root=root, progress=progress)
        return found.vector, found.provenance("passages")

    return VectorSpec(field=field, encoder=encoder.id, dim=encoder.dim, embed=run, graph=graph, engine=engine,
                      graph_order=graph_order)


def spec_for_arms(arms: Sequence[Arm], *, engine: str = "lucene", graph_order: int = 0) -> VectorSpec | None:
    """The vector field the arms need (None when none needs one), with a graph when one of them (or the arm one
    approximates) searches it; arms needing different fields or encoders are refused."""
    from turnbench.errors import BadInput

    needed = sorted({(a.vector_field, a.encoder) for a in arms if a.vector_field and a.encoder})
    if len(needed) > 1:
        raise BadInput("the arms need different vector fields or encoders "
                       f"({'; '.join(f'{f} by {e}' for f, e in needed)}): one index holds one; bench them apart")
    graph = any(a.needs_graph for a in arms)
    return (vector_spec(needed[0][1], needed[0][0], graph=graph, engine=engine, graph_order=graph_order)
            if needed else None)
