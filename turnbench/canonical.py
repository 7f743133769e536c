"""Canonical bytes: the one JSON writer, hashing and atomic writes (docs/design.md §3 rule 4, §4)."""

from __future__ import annotations

import contextlib
import errno
import functools
import glob
import hashlib
import json
import json.encoder
import json.scanner
import os
import re
import shutil
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# Claimed floats are rounded to this many decimals before they are written or summed again (docs/design.md §3 rule 4).
DECIMALS = 6


def q6(x: float) -> float:
    """``x`` rounded to ``DECIMALS``; ``+ 0.0`` turns -0.0 into 0.0 so a zero always prints the same."""
    return round(float(x), DECIMALS) + 0.0


def dumps(obj: Any) -> str:
    """Canonical JSON text: sorted keys, no insignificant whitespace, UTF-8 kept as is."""
    if _COMPACT is None:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return "".join(_COMPACT(obj, 0))


# a JSON string exactly as dumps writes it (UTF-8 kept), for lines written out by hand on hot paths
json_string = json.encoder.encode_basestring


def _not_json(obj: Any) -> Any:
    raise TypeError(f"Object of type {obj.__class__.__name__} is not JSON serializable")


# The C encoder json.dumps builds for these options, built once: json.dumps makes an encoder object and a C encoder
# at every call, which is most of a small record's cost (millions of binding and span lines). The same bytes and the
# same refusals (a NaN, an object JSON has no form for); only a structure that contains itself fails differently
# (RecursionError instead of ValueError), and canonical records never do.
_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)  # None where the C accelerator is absent
_COMPACT = (_MAKE_ENCODER(None, _not_json, json.encoder.encode_basestring, None, ":", ",", True, False, False)
            if _MAKE_ENCODER is not None else None)


def dumps_line(obj: Any) -> bytes:
    return (dumps(obj) + "\n").encode("utf-8")


def pretty(obj: Any) -> bytes:
    """Canonical but indented JSON, for files people read (metrics.json, manifest.json)."""
    if _COMPACT is None:
        return (json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    # json indents with its pure-Python encoder, one call per value; the compact text its C encoder writes, indented
    # by msgspec's formatter (which keeps every token as written, numbers included), is the same bytes at a fraction
    # of the cost (tests/unit/test_canonical.py holds the two to each other)
    from msgspec.json import format as indent

    return indent(dumps(obj).encode("utf-8"), indent=2) + b"\n"


def encoder_writes_repr(values: Sequence[float]) -> bool:
    """Whether msgspec's JSON encoder writes each of ``values`` exactly as ``repr`` does (``float_texts``);
    False for anything that is not numbers only (a None, a string, a bool), not the encoder's to write."""
    if not isinstance(values, array) and not set(map(type, values)) <= {float, int}:
        return False
    try:
        return _encoded_floats(values) is not None
    except OverflowError:  # a whole number too large for a float
        return False


def float_texts(values: Sequence[float]) -> list[str] | None:
    """``repr`` of each of ``values`` (floats), written by msgspec's encoder in one call (a run's million raw scores
    at a fraction of ``repr``'s cost), or None when the encoder writes any one of them otherwise (``_encoded_floats``):
    the caller then writes them by ``repr``."""
    text = _encoded_floats(values)
    if text is None:
        return None
    return text[1:-1].decode("ascii").split(",") if len(values) else []


def _encoded_floats(values: Sequence[float]) -> bytes | None:
    """``values`` as msgspec writes a JSON array of them, or None where that differs from ``repr`` for any one.
    Both write the shortest digits that read back as the same float (a tie going to the even digit); they differ
    only in form, and every difference shows in the text, found by scanning it once in C: outside 1e-4 to 1e16 the
    encoder writes an exponent without its sign (``1e16`` for ``1e+16``) or, under 1e-4, positional digits
    (``0.00001`` for ``1e-05``: four zeros after the point, which no value from 1e-4 up has); NaN and infinities it
    writes as ``null`` (tests/unit/test_canonical.py holds the two to each other)."""
    floats = values.tolist() if isinstance(values, array) and values.typecode == "d" else list(map(float, values))
    text: bytes = _float_encoder().encode(floats)
    if b"e" in text or b"n" in text or b"[0.0000" in text or b",0.0000" in text or b"-0.0000" in text:
        return None
    return text


@functools.cache
def _float_encoder() -> Any:
    import msgspec

    return msgspec.json.Encoder()


def encoded_lines(rows: Sequence[Any], floats: Sequence[float]) -> bytes:
    """``b"".join(dumps_line(r) for r in rows)`` for rows of JSON's own types (``floats``: every float they hold),
    written by msgspec's encoder in one call where that is certain to be the same bytes: its keys sorted as
    ``sort_keys`` sorts them, its strings escaped as ``dumps`` escapes them character for character
    (tests/unit/test_canonical_lines.py), every float one it writes as ``repr`` does (``encoder_writes_repr``: a NaN
    is not, which msgspec would write as null where ``dumps`` refuses it); otherwise line by line, as ``dumps`` does
    (a lone surrogate, which msgspec refuses, is refused there too)."""
    import msgspec

    if encoder_writes_repr(floats):
        try:
            return _sorted_encoder().encode_lines(rows)
        except (TypeError, ValueError, msgspec.EncodeError):
            pass
    return b"".join(map(dumps_line, rows))


@functools.cache
def _sorted_encoder() -> Any:
    import msgspec

    return msgspec.json.Encoder(order="sorted")


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


def write_bytes_atomic(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write via a temporary file in the same directory and ``os.replace``, so a reader never sees half a file.
    ``data`` may be the bytes or an iterable of pieces, written as they come (a file never held whole)."""
    path = Path(path)
    _require_directories_above(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise write_error(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(data, (bytes, bytearray, memoryview)):
                fh.write(data)
            else:
                fh.writelines(data)
        _as_if_created(Path(tmp), 0o666)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise write_error(path, exc) from None
        raise


def refuse_non_empty(path: Path, what: str = "output directory", hint: str = "choose a new directory") -> Path:
    """``path`` when it is absent or an empty directory; BadInput otherwise, so an old output is never mixed
    with a new one."""
    path = Path(path)
    _require_directories_above(path)
    try:
        taken = path.exists() and (not path.is_dir() or any(path.iterdir()))
    except OSError as exc:  # a name too long, a loop of links: the user's to fix, said in one line
        raise write_error(path, exc) from None
    if taken:
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


def _corpus_error(message: str) -> Exception:
    from turnbench.errors import CorpusIntegrityError

    return CorpusIntegrityError(message)


def read_jsonl(path: Path, error: Callable[[str], Exception] = _corpus_error) -> Iterator[Any]:
    """The JSON values of a JSON-lines file; ``error(message)`` is raised for a line that is not UTF-8 JSON
    (a corpus file is an integrity problem; a file the user hands in is bad input)."""
    for _, value in read_jsonl_numbered(path, error):
        yield value


def read_jsonl_numbered(path: Path, error: Callable[[str], Exception] = _corpus_error,
                        keep: Callable[[bytes], bool] | None = None) -> Iterator[tuple[int, Any]]:
    """(line number, value) of every non-blank line; with ``keep``, of the lines it keeps (the rest unparsed)."""
    for first, block in _blocks(path, error):
        for n, line in enumerate(block, first):
            if not line.strip() or (keep is not None and not keep(line)):
                continue
            yield n, _value(path, n, line, error)


def _blocks(path: Path, error: Callable[[str], Exception]) -> Iterator[tuple[int, list[bytes]]]:
    """The file's lines a block at a time (a megabyte or so), with the number of each block's first line."""
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror})") from None
    with fh:
        first = 1
        for block in iter(lambda: fh.readlines(1 << 20), []):
            yield first, block
            first += len(block)


def _value(path: Path, n: int, line: bytes, error: Callable[[str], Exception]) -> Any:
    try:
        return parse_json(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise error(f"{path}: line {n} is not UTF-8 text") from None
    except ValueError as exc:  # JSONDecodeError, and NaN/Infinity
        raise error(f"{path}: line {n} is not valid JSON ({exc})") from None


def read_records(path: Path, parse: Callable[[Any], T], what: str,
                 error: Callable[[str], Exception] = _corpus_error,
                 keep: Callable[[bytes], bool] | None = None,
                 fast: Callable[[list[bytes]], list[T | None]] | None = None) -> Iterator[T]:
    """``parse`` applied to every line of a JSON-lines file (that ``keep`` keeps); a line it cannot parse is
    ``error``, named by number. ``fast``, when given, reads a block of lines' bytes straight into their records,
    with None for any line it is not sure of, which is then read as above: the same records and the same refusals,
    and most lines read without a dict in between."""
    for first, block in _blocks(path, error):
        numbered = list(enumerate(block, first))
        if keep is not None:
            numbered = [(n, line) for n, line in numbered if keep(line)]
            block = [line for _, line in numbered]
        found: list[T | None] = fast(block) if fast is not None else [None] * len(block)
        if None not in found:
            yield from found  # type: ignore[misc]
            continue
        for (n, line), record in zip(numbered, found, strict=True):
            if record is not None:
                yield record
            elif line.strip():
                yield _record(path, n, _value(path, n, line, error), parse, what, error)


def _record(path: Path, n: int, value: Any, parse: Callable[[Any], T], what: str,
            error: Callable[[str], Exception]) -> T:
    try:
        if not isinstance(value, dict):
            raise TypeError(f"a JSON {type(value).__name__}, not an object")
        return parse(value)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise error(f"{path}: line {n} is not {what} ({type(exc).__name__}: {exc})") from None


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a number turnbench accepts")


# one decoder for every line: json.loads with a hook builds a new one per call, a third of a small line's cost
_DECODER = json.JSONDecoder(parse_constant=_no_constant)
_SCAN = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]  # the C scanner the decoder reads with
_SPACE = re.compile(r"[ \t\n\r]*").match  # JSON's whitespace, as the decoder skips it after a value


def _loads(text: str | bytes) -> Any:
    """``json.loads(text, parse_constant=_no_constant)``, its checks kept, with the one decoder."""
    if isinstance(text, str):
        if text.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    else:
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    # a text that is one value and JSON whitespace after it is read by the C scanner alone: the decoder's Python
    # around it was a third of a short line's cost; anything else is read by the decoder, which says why not
    try:
        value, end = _SCAN(text, 0)
        if end == len(text) or _SPACE(text, end).end() == len(text):  # type: ignore[union-attr]
            return value
    except (StopIteration, ValueError):
        pass
    return _DECODER.decode(text)


MAX_NESTING = 64  # deeper than any file turnbench reads needs; far below what would exhaust Python's stack


def nesting(value: Any) -> int:
    """How deeply ``value`` nests lists and objects (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return deepest


def parse_json(text: str | bytes, *, max_nesting: int | None = None) -> Any:
    """``json.loads`` for input turnbench did not write: NaN and Infinity refused, and a document so deeply nested
    that the parser would exhaust the stack refused too (ValueError either way); ``max_nesting`` bounds it
    further."""
    try:
        value = _loads(text)
    except RecursionError:
        raise ValueError("nested too deeply to be read") from None
    if max_nesting is not None and nesting(value) > max_nesting:
        raise ValueError(f"nested deeper than {max_nesting} levels")
    return value


# errno values that mean "this destination cannot be written" (the user's to fix) and "the disk is full"
_UNWRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR, errno.ENAMETOOLONG,
                         errno.ELOOP, errno.ENOENT})  # ENOENT while creating: a directory above cannot be made
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
OWNER = ".turnbench-owner"


def write_error(dest: Path, exc: OSError) -> Exception:
    """The one-line error for an OSError met while writing ``dest``; the OSError itself when it is neither."""
    from turnbench.errors import BadInput, DiskFull

    if exc.errno in _FULL:
        return DiskFull(f"{dest}: no space left on the device ({exc.strerror}); nothing partial was kept")
    if exc.errno in _UNWRITABLE:
        return BadInput(f"{dest}: cannot write here ({exc.strerror})")
    return exc


def _sweep_stale_stages(final: Path) -> None:
    """Remove staging directories for ``final`` left by a run that was killed outright (SIGKILL): only those
    whose recorded owner process is gone, so a run writing the same destination right now keeps its own."""
    from turnbench.processes import is_running

    for stage in final.parent.glob(f".{glob.escape(final.name)}.*.partial"):
        try:
            owner = json.loads((stage / OWNER).read_text())
            pid, ticks = int(owner["pid"]), owner.get("ticks")
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not one of ours, or not readable: leave it alone
        if not is_running(pid, ticks):
            shutil.rmtree(stage, ignore_errors=True)


def _require_directories_above(path: Path) -> None:
    """BadInput when something on the way to ``path`` exists but is not a directory (``--out notes.txt/x``)."""
    for parent in reversed(path.parents):
        try:
            a_file = parent.exists() and not parent.is_dir()
        except OSError as exc:  # a name too long, a loop of links: the user's to fix, said in one line
            raise write_error(path, exc) from None
        if a_file:
            from turnbench.errors import BadInput

            raise BadInput(f"{path}: cannot write here, {parent} is a file")


@contextlib.contextmanager
def staged_directory(final: Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``final``; rename it into place only if the block succeeds.

    A failed or interrupted write leaves nothing at ``final`` that could pass for a complete output, and the
    staging directory goes too (a SIGKILLed run's is swept by the next run writing the same destination). An
    unwritable destination is BadInput; a full disk is DiskFull; both are one line.
    """
    from turnbench.processes import start_ticks

    final = Path(final)
    _require_directories_above(final)
    if final.is_symlink():  # the staged directory is renamed into the link's place: neither replaced nor followed
        from turnbench.errors import BadInput

        raise BadInput(f"{final} is a symbolic link (to {os.readlink(final)}); a directory is written in its place: "
                       "name the link's target or a new path")
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        _sweep_stale_stages(final)
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".partial", dir=final.parent))
    except OSError as exc:
        raise write_error(final, exc) from None
    try:
        (tmp / OWNER).write_text(json.dumps({"pid": os.getpid(), "ticks": start_ticks(os.getpid())}))
        yield tmp
        (tmp / OWNER).unlink()
        _as_if_created(tmp, 0o777)
        if final.exists():
            final.rmdir()  # only an empty directory may be replaced; callers refuse a non-empty one first
        os.replace(tmp, final)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise write_error(final, exc) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
