"""What ``make verify`` says first about an arm: whether its vectors are the baseline's (docs/measurements.md).

When the vectors differ, every dense metric's difference follows from them; when the baseline's vectors were
computed on a CPU with other vector instruction sets, the arm is not verifiable here: said so, never passed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from turnbench.errors import BadInput, NotPublishable
from turnbench.results.directory import METRICS_JSON, RUNINFO_JSON, load_json, side_dirs
from turnbench.results.record import digest_differences, from_tree

VERIFIED, DIFFERENT, NOT_HERE = "verified", "different", "not verifiable here"


def verify_digests(name: str, baseline_dir: Path, candidate_dir: Path) -> tuple[str, list[str]]:
    """What ``make verify`` says first about one arm: whether the vectors are the baseline's. When they differ and
    the baseline's vectors were computed on a CPU with other vector instruction sets, the arm is not verifiable
    here (its metrics follow from the CPU's kernels, not from a change): said so, never passed as verified."""
    docs = [from_tree(json.loads((Path(d) / "metrics.json").read_text(encoding="utf-8")), str(d))
            for d in (baseline_dir, candidate_dir)]
    differ = digest_differences(*docs)
    if not differ:
        held = ", ".join(sorted(docs[0].provenance.embeddings)) or "none"
        return VERIFIED, [f"verify: {name}: embeddings digests equal to the baseline's (vectors: {held})"]
    isa = []
    for d in (baseline_dir, candidate_dir):
        try:
            isa.append(str(load_json(Path(d) / RUNINFO_JSON)["host"].get("cpu_vector_isa", "unrecorded")))
        except (OSError, BadInput, KeyError, TypeError, AttributeError):
            isa.append("unrecorded")
    lines = [f"verify: {name}: {line}" for line in differ]
    if isa[0] != isa[1]:
        return NOT_HERE, [*lines, f"verify: {name}: NOT VERIFIED on this CPU: the baseline's vectors come from a CPU "
                                  f"with [{isa[0]}], these from [{isa[1]}]; dense metrics follow from the CPU's "
                                  "kernels, so they are compared only between CPUs of one class"]
    return DIFFERENT, [*lines, f"verify: {name}: on a CPU of the baseline's class: metrics not compared, they follow "
                               "from the vectors"]


PUBLISHABLE = "A"
TIERS = {"A": "publishable", "B": "non-commercial: internal use only", "C": "the source's own terms: never printed"}


def publishable(paths: Sequence[Path]) -> None:
    """Refuse (NotPublishable) unless every results directory (or seed of a set) among ``paths`` was measured on a
    tier A corpus. Read before anything is compared or drawn; the comparison then verifies each directory whole."""
    for path in paths:
        for directory in side_dirs(Path(path)):
            try:
                prov = load_json(Path(directory) / METRICS_JSON)["provenance"]
                tier, corpus = str(prov.get("licence_tier", "unrecorded")), str(prov["corpus"]["id"])
            except (KeyError, TypeError, AttributeError):
                continue  # not a results document: what reads it next says so
            refuse_unpublishable(str(directory), tier, corpus)


def refuse_unpublishable(where: str, tier: str, corpus: str) -> None:
    """NotPublishable unless ``tier`` is A: the results ``where`` names (a directory, or results in memory) were
    measured on corpus ``corpus`` of that licence tier."""
    if tier != PUBLISHABLE:
        raise NotPublishable(f"{where}: corpus {corpus} is licence tier {tier} "
                             f"({TIERS.get(tier, 'unknown')}): --publishable takes tier A results only")
