"""What ``make verify`` says first about an arm: whether the byte-shaping libraries are the baseline's versions, then
whether its vectors are the baseline's (docs/measurements.md).

A baseline recorded with other library versions is refused unless told (``--allow-version-drift``): then the claim
is compared with the recorded versions set aside. When the vectors differ, every dense metric's difference follows
from them; when the baseline's vectors were computed on a CPU with other vector instruction sets, the arm is not
verifiable here: said so, never passed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from turnbench import canonical
from turnbench.errors import BadInput, NotPublishable
from turnbench.results.directory import METRICS_JSON, RUNINFO_JSON, load_json, side_dirs
from turnbench.results.record import digest_differences, from_tree, library_drift

VERIFIED, DIFFERENT, NOT_HERE = "verified", "different", "not verifiable here"
LIBRARIES = "libraries"  # provenance's record of the byte-shaping libraries' versions
CLAIM_SHA256 = "claim.sha256"
ALLOW_DRIFT = "--allow-version-drift"


def recorded_libraries(directory: Path) -> dict[str, str]:
    """The library versions a results directory's metrics.json records (empty when it records none)."""
    return dict(from_tree(load_json(Path(directory) / METRICS_JSON), str(directory)).provenance.libraries)


def version_lines(name: str, baseline: dict[str, str], now: dict[str, str], allowed: bool) -> list[str]:
    """One line per library whose version differs from the baseline's, naming it and both versions, and what
    follows: refused, or (``allowed``) compared with the versions set aside. ``name`` names the baseline (or
    several, comma-separated)."""
    return [f"verify: {name}: {line}; {consequence(allowed)}" for line in differences(baseline, now)]


def differences(baseline: dict[str, str], now: dict[str, str]) -> list[str]:
    """What differs between a baseline's recorded versions and these, one phrase per library."""
    if not baseline and now:
        return ["the baseline records no library versions (made before turnbench recorded them)"]
    return library_drift(baseline, now)


def consequence(allowed: bool) -> str:
    return ("allowed (--allow-version-drift): the claim is compared with the recorded versions set aside" if allowed
            else f"refused (pass {ALLOW_DRIFT} to compare anyway, or install constraints.txt)")


def same_but_versions(name: str, baseline: bytes, candidate: bytes) -> bool:
    """Whether two claim files are the same once the library versions are set aside: metrics.json with the
    baseline's versions put in the candidate's, claim.sha256 without its metrics.json line."""
    if name == METRICS_JSON:
        try:
            base, cand = json.loads(baseline), json.loads(candidate)
            cand["provenance"][LIBRARIES] = base["provenance"].get(LIBRARIES)
            if cand["provenance"][LIBRARIES] is None:
                del cand["provenance"][LIBRARIES]
        except (ValueError, TypeError, KeyError, AttributeError):
            return False
        return canonical.pretty(cand) == baseline
    if name == CLAIM_SHA256:
        def kept(data: bytes) -> list[bytes]:
            return [line for line in data.splitlines() if not line.endswith(b"  " + METRICS_JSON.encode())]
        return kept(baseline) == kept(candidate)
    return baseline == candidate


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
