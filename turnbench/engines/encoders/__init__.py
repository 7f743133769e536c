"""Encoders: a pinned, offline text-embedding model behind one small interface (docs/design.md §11).

An encoder has an ``id`` (what an arm's ``[requires] encoder`` names), a dimension, a ``provenance()`` that a
results file records (model and tokenizer files with their sha256, pooling, normalisation, runtime settings) and
``encode(texts, role)``: unit-length float32 vectors, one row per text, in input order. ``role`` says what the texts
are, ``"query"`` (a question searched with) or ``"passage"`` (what is searched): an asymmetric model embeds the two
differently (bge-small prefixes its model card's retrieval instruction to a query), a symmetric one (MiniLM) alike;
either way the caller always says which, so a query can never be embedded as a passage by omission. An encoder whose
roles differ says how in its provenance. No model hub is reached at run time: the files come from pinned packages
(a wheel on PyPI, a jar on Maven Central, fetched by size and sha256). Another model is a module and a class, and
one line in ``ENCODERS``.

An encoder is an engine under test, never a judge (docs/design.md §3 rule 6).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from turnbench.errors import BadInput

if TYPE_CHECKING:
    import numpy as np

# encoder id -> "module:class"; the class is built with no arguments (its pins are its own)
ENCODERS: Mapping[str, str] = {
    "minilm-l6-v2-int8": "turnbench.engines.encoders.minilm:MiniLM",
    "bge-small-en-v15-int8": "turnbench.engines.encoders.bge:BgeSmall",
}
# what a text is to the encoder: a question searched with, or a passage searched
Role = Literal["query", "passage"]
ROLES: tuple[Role, ...] = ("query", "passage")


class Encoder(Protocol):
    """A text-embedding model, pinned and offline."""

    @property
    def id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def provenance(self) -> dict[str, Any]:
        """Everything that shapes the vectors' bytes, for a results file (claim-safe: no paths, no timings)."""
        ...

    def encode(self, texts: Sequence[str], role: Role) -> np.ndarray:
        """float32 array (len(texts), dim) of unit vectors, in input order, of texts that are all ``role``."""
        ...


def check_role(role: str) -> Role:
    """``role`` when it is one of ``ROLES``; ValueError otherwise (a caller's bug, not a user's input)."""
    for known in ROLES:
        if role == known:
            return known
    raise ValueError(f"an encoder embeds a 'query' or a 'passage', not {role!r}")


def names() -> list[str]:
    return sorted(ENCODERS)


def check_name(name: str, where: str = "") -> str:
    """``name`` when it is a known encoder; BadInput naming the known ones otherwise (no model is loaded)."""
    if name not in ENCODERS:
        prefix = f"{where}: " if where else ""
        raise BadInput(f"{prefix}unknown encoder {name!r}; known encoders: {', '.join(names())}")
    return name


_loaded: dict[str, Encoder] = {}


def get(name: str) -> Encoder:
    """The encoder ``name``, loaded once per process (a model session is costly to build)."""
    check_name(name)
    if name not in _loaded:
        module, _, cls = ENCODERS[name].partition(":")
        _loaded[name] = getattr(importlib.import_module(module), cls)()
    return _loaded[name]
