"""Where a command may write: its outputs, resolved before anything is read, are refused (BadInput) when one
equals another, equals or lies inside an input, or lies inside a results directory or a corpus.

A results directory or a corpus is trusted only as written (its digest, its manifest's hashes): one file added or
overwritten inside it and it is refused from then on. So no output of any command may land in one — not even a
command whose inputs do not include it — and no output may overwrite what the same command reads. Paths are
compared resolved (symbolic links followed, ``..`` removed), so two spellings of one file are one file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from turnbench.errors import BadInput

# what makes a directory a results directory (claim.sha256 beside metrics.json or answers.json) or a corpus
RESULTS_MARKERS = ("claim.sha256",)
CORPUS_MARKERS = ("manifest.json",)


def resolved(path: str | os.PathLike[str]) -> Path:
    return Path(path).expanduser().resolve(strict=False)


def _kind(directory: Path) -> str | None:
    if any((directory / m).is_file() for m in RESULTS_MARKERS):
        return "results directory"
    if any((directory / m).is_file() for m in CORPUS_MARKERS):
        return "corpus"
    return None


def protected_above(path: Path) -> tuple[str, Path] | None:
    """The results directory or corpus ``path`` would be written into (``path`` itself when it is one and exists,
    or any directory above it), or None."""
    for directory in (path, *path.parents):
        if directory.is_dir():
            kind = _kind(directory)
            if kind is not None:
                return kind, directory
    return None


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


NAME_MAX, PATH_MAX = 255, 4096  # Linux's limits in bytes (pathconf says when a file system differs)


def _name_max(path: Path) -> int:
    """The longest name (bytes) the file system holding ``path``'s nearest existing directory takes."""
    for directory in path.parents:
        try:
            if directory.is_dir():
                return int(os.pathconf(directory, "PC_NAME_MAX"))
        except (OSError, ValueError):
            continue
    return NAME_MAX


def check_writable_name(what: str, given: str | os.PathLike[str]) -> None:
    """BadInput when the file system would refuse the name ``given`` itself: a name longer than it takes, a path
    longer than PATH_MAX (the kernel's ENAMETOOLONG, met by the first stat of the path, is no bug of turnbench's)."""
    path = Path(given).expanduser()
    shown = str(given) if len(str(given)) <= 80 else f"{str(given)[:60]}…"
    if len(os.fsencode(path)) >= PATH_MAX:
        raise BadInput(f"{what} {shown}: a path of {len(os.fsencode(path))} bytes, longer than the file system takes "
                       f"({PATH_MAX - 1}); name a shorter one")
    limit = _name_max(path.absolute())
    for part in path.parts:
        if len(os.fsencode(part)) > limit:
            raise BadInput(f"{what} {shown}: a name of {len(os.fsencode(part))} bytes, longer than the file system "
                           f"takes ({limit}); name a shorter one")


def check_outputs(outputs: Sequence[tuple[str, str | os.PathLike[str]]],
                  inputs: Iterable[str | os.PathLike[str]] = ()) -> list[Path]:
    """The outputs resolved, in order, after refusing any that would clobber: ``outputs`` are (option, path) pairs
    (``("--out", "compare.md")``), ``inputs`` every file or directory the command reads. A name the file system
    refuses is refused first (``check_writable_name``)."""
    for what, p in outputs:
        check_writable_name(what, p)
    outs = [(what, resolved(p)) for what, p in outputs]
    ins = [resolved(p) for p in inputs]
    seen: dict[Path, str] = {}
    for what, path in outs:
        if path in seen:
            raise BadInput(f"{what} {path} is also {seen[path]}: give each output its own path")
        seen[path] = what
        for given in ins:
            if _inside(path, given):
                where = "is" if path == given else "lies inside"
                raise BadInput(f"{what} {path} {where} {given}, which this command reads; write it elsewhere")
        above = protected_above(path)
        if above is not None:
            kind, directory = above
            raise BadInput(f"{what} {path} lies inside the {kind} {directory}: writing there would change what "
                           f"its digest vouches for; write it elsewhere")
    return [p for _, p in outs]


# a name that becomes a directory: no separator, no leading dot, no whitespace or control character (a trailing
# newline included: every check is a full match)
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def check_name(name: str, what: str) -> str:
    """``name`` when it can name a directory of its own; BadInput otherwise."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise BadInput(f"{what} {str(name)[:80]!r} cannot name a directory: use letters, digits, '.', '_' or '-' "
                       "(starting with a letter or digit, at most 100)")
    return name
