"""A second stage, as declared: what an arm file's ``[rerank]`` table (or an engine's ``rerank`` attribute) says,
checked before any query is sent (docs/arms.md, "A rerank stage").

    [rerank]
    scorer = "minilm-l6-v2-int8"      # a turnbench encoder (bi-encoder cosine), or "cross-encoder"
    top = 20                          # how many of the first stage's passages are rescored, 1..the arm's depth
    model = "ms-marco.onnx"           # cross-encoder only: an ONNX model file, relative to the declaring file
    tokenizer = "tokenizer.json"      # cross-encoder only: its tokenizers tokenizer.json

The declaration is confined data like the rest of an arm: a scorer turnbench knows, a whole number, and — for a
cross-encoder — two files that exist and can be read, pinned by their sha256 in the results (never by their path:
a path is not a claim). A file that is absent or unreadable is refused in one line naming the declaring file.
How a stage runs is :mod:`turnbench.engines.rerank`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.errors import BadInput

CROSS_ENCODER = "cross-encoder"
KEYS = ("scorer", "top", "model", "tokenizer")
FILE_KEYS = ("model", "tokenizer")


@dataclass(frozen=True)
class PinnedFile:
    """A file a stage reads, where it is and what its bytes are (the name and hash are what a claim records)."""

    path: Path
    sha256: str

    def config(self) -> dict[str, str]:
        return {"file": self.path.name, "sha256": self.sha256}


@dataclass(frozen=True)
class RerankSpec:
    """A declared rerank stage: ``scorer`` (an encoder id, or ``cross-encoder`` with its two files) over the first
    stage's ``top`` passages."""

    scorer: str
    top: int
    model: PinnedFile | None = None
    tokenizer: PinnedFile | None = None

    def config(self) -> dict[str, Any]:
        """What the declaration says, as a results file records it (the scorer's own provenance is added when the
        stage runs)."""
        out: dict[str, Any] = {"scorer": self.scorer, "top": self.top}
        if self.model is not None and self.tokenizer is not None:
            out.update({"model": self.model.config(), "tokenizer": self.tokenizer.config()})
        return out


def _pinned(value: Any, key: str, base: Path | None, where: str) -> PinnedFile:
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{where}: [rerank] {key} must be the path of a file")
    path = Path(value).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    try:
        sha = canonical.sha256_file(path)
    except FileNotFoundError:
        raise BadInput(f"{where}: [rerank] {key} {value!r}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{where}: [rerank] {key} {value!r} is a directory, not a file") from None
    except OSError as exc:
        raise BadInput(f"{where}: [rerank] {key} {value!r} cannot be read ({exc.strerror})") from None
    return PinnedFile(path, sha)


def parse_rerank(raw: Any, where: str, *, depth: int, base: Path | None) -> RerankSpec:
    """The stage ``raw`` declares (a ``[rerank]`` table or an engine's ``rerank`` mapping), every key checked; paths
    relative to ``base`` (the declaring file's directory). BadInput naming ``where`` otherwise."""
    from turnbench.engines.encoders import names

    if not isinstance(raw, Mapping):
        raise BadInput(f"{where}: [rerank] must be a table of {', '.join(KEYS)}")
    unknown = sorted(set(map(str, raw)) - set(KEYS))
    if unknown:
        raise BadInput(f"{where}: [rerank] has unknown key(s) {', '.join(unknown)}; it takes {', '.join(KEYS)}")
    scorer, top = raw.get("scorer"), raw.get("top")
    known = [*names(), CROSS_ENCODER]
    if not isinstance(scorer, str) or scorer not in known:
        raise BadInput(f"{where}: [rerank] scorer {scorer!r} is not one of {', '.join(known)}")
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= depth:
        raise BadInput(f"{where}: [rerank] top must be a whole number from 1 to the depth ({depth}), not {top!r}")
    given = [k for k in FILE_KEYS if k in raw]
    if scorer != CROSS_ENCODER:
        if given:
            raise BadInput(f"{where}: [rerank] {given[0]} belongs to a cross-encoder; an encoder scorer brings its "
                           "own pinned files")
        return RerankSpec(scorer, top)
    missing = [k for k in FILE_KEYS if k not in raw]
    if missing:
        raise BadInput(f"{where}: [rerank] a cross-encoder needs {' and '.join(missing)} (the ONNX model and its "
                       "tokenizer.json)")
    return RerankSpec(scorer, top, _pinned(raw["model"], "model", base, where),
                      _pinned(raw["tokenizer"], "tokenizer", base, where))
