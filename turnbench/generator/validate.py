"""The corpus validator: named checks that re-derive every gold item from the text on disk.

``validate_corpus(root)`` verifies every manifest hash first (``open_corpus`` raises
CorpusIntegrityError), reads the meetings once, and runs every check in a fixed order: the generic
checks of ``turnbench.corpus.checks``, which any format-v1 corpus gets (a QMSum import included), then
the synthetic checks of ``turnbench.generator.checks``, which apply only to a corpus written by
turnbench.generator with its facts.jsonl and report "n/a" elsewhere. Nothing is taken from generator
state: facts.jsonl only says what to look for.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turnbench.corpus.checks import (
    GENERIC,
    MALFORMED,
    CheckResult,
    check_name,
    failures,
    generic_results,
    run_check,
    scan_corpus,
)
from turnbench.corpus.format import open_corpus
from turnbench.errors import CorpusIntegrityError
from turnbench.generator import PRODUCER_NAME
from turnbench.generator.checks import SYNTHETIC
from turnbench.generator.scan import scan_synthetic

__all__ = ["CHECK_NAMES", "ENCODER_CHECKS", "CheckResult", "failures", "is_synthetic", "validate_corpus"]

# Checks that run an encoder, so they live with the engines (turnbench.engines.surfaces) and `turnbench validate`
# adds them to these results: validate_corpus itself never loads a model.
ENCODER_CHECKS = ("surface_cosine",)
CHECK_NAMES = tuple(check_name(c) for c in GENERIC) + tuple(check_name(c) for c in SYNTHETIC) + ENCODER_CHECKS
NOT_SYNTHETIC = "not a turnbench.generator corpus with facts.jsonl"


def is_synthetic(manifest: Mapping[str, Any]) -> bool:
    """Whether the synthetic checks apply: the generator wrote the corpus and listed its facts.jsonl."""
    return manifest.get("producer", {}).get("name") == PRODUCER_NAME and "facts.jsonl" in manifest.get("files", {})


def validate_corpus(root: Path | str) -> list[CheckResult]:
    """Every check's result, in a fixed order. Raises CorpusIntegrityError when hashes do not match."""
    corpus = open_corpus(Path(root))
    try:
        synthetic = scan_synthetic(corpus) if is_synthetic(corpus.manifest) else None
        generic = synthetic.corpus if synthetic is not None else scan_corpus(corpus)
    except MALFORMED as exc:
        # hashes matched, so the manifest itself vouches for records that are not format v1
        raise CorpusIntegrityError(f"{root}: a record is not valid format v1 ({type(exc).__name__}: {exc})") from None
    results = generic_results(generic)
    if synthetic is not None:
        results.extend(run_check(c, synthetic) for c in SYNTHETIC)
    else:
        results.extend(CheckResult(check_name(c), "n/a", NOT_SYNTHETIC) for c in SYNTHETIC)
    return results
