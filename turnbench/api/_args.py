"""The façade's argument checks: a wrong type is BadInput naming the argument and what it takes, never a TypeError
from deep inside. Every verb of turnbench.api checks its arguments with these before anything is done."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from turnbench.errors import BadInput

if TYPE_CHECKING:
    from turnbench.corpus.format import Corpus

PathLike = str | os.PathLike[str]


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:40] + '…'}"


def _refuse(name: str, what: str, value: Any) -> BadInput:
    return BadInput(f"{name} must be {what}, not {_shown(value)}")


def _is_path(value: object) -> TypeGuard[str | os.PathLike[str]]:
    return isinstance(value, (str, os.PathLike)) and not isinstance(os.fspath(value), bytes)


def _path(value: Any, name: str) -> Path:
    if not _is_path(value):
        raise _refuse(name, "a path (str or os.PathLike)", value)
    return Path(value)


def _paths(value: Any, name: str) -> list[Path]:
    """A list of paths (a single path is refused: it is one value, not a list)."""
    return [Path(p) for p in _list(value, name, "paths", _is_path, "a path (str or os.PathLike)")]


def _int(value: Any, name: str, *, optional: bool = False) -> Any:
    if (value is None and optional) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise _refuse(name, "a whole number" + (" or None" if optional else ""), value)


def _typed(value: Any, types: type | tuple[type, ...], name: str, what: str, *, optional: bool = False) -> Any:
    if (value is None and optional) or (isinstance(value, types) and not (types is int and isinstance(value, bool))):
        return value
    raise _refuse(name, what + (" or None" if optional else ""), value)


def _list(value: Any, name: str, what: str, item: Callable[[Any], bool] | None = None, one: str = "") -> list[Any]:
    """``value`` as a list, refused when it is no list (a string is one value, not a list of its characters) or an
    item is not ``one`` of ``what``."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise _refuse(name, f"a list of {what}", value)
    items = list(value)
    for i, x in enumerate(items):
        if item is not None and not item(x):
            raise _refuse(f"{name}[{i}]", one, x)
    return items


def _stack(value: Any, *, optional: bool = False) -> Any:
    from turnbench.stack.info import StackInfo

    return _typed(value, StackInfo, "stack", "a StackInfo (what open_stack() yields)", optional=optional)


def _corpus(corpus: Any, name: str = "corpus") -> Corpus:
    from turnbench.corpus.format import Corpus, open_corpus

    if isinstance(corpus, Corpus):
        return corpus
    return open_corpus(_path(corpus, f"{name} (a Corpus or its directory)"))


def _corpus_root(corpus: Any, name: str = "corpus") -> Path:
    """A corpus's directory, unopened (the room that reads it verifies it)."""
    from turnbench.corpus.format import Corpus

    return corpus.root if isinstance(corpus, Corpus) else _path(corpus, f"{name} (a Corpus or its directory)")


def _corpora(corpora: Any) -> list[Corpus]:
    from turnbench.corpus.format import Corpus

    items = _list(corpora, "corpora", "corpora (a Corpus or its directory)", lambda c: isinstance(c, Corpus)
                  or _is_path(c), "a Corpus or its directory")
    return [_corpus(c, f"corpora[{i}]") for i, c in enumerate(items)]
