"""`turnbench generate` and `turnbench validate` through the CLI: exit codes, refusals, no partial corpus."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.unit.generator.helpers import REPO, tree_bytes
from turnbench.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("args, message", [
    (("--seed", "-1"), "seed must be an integer from 0"),
    (("--seed", str(2**31)), "seed must be an integer from 0"),
    (("--meetings", "3"), "meetings must be an integer from 8"),
    (("--meetings", "20001"), "meetings must be an integer from 8"),
    (("--words-per-meeting", "10"), "words per meeting must be an integer"),
    (("--near-duplicate-rate", "1.5"), "near-duplicate rate must be between 0 and 1"),
    (("--workers", "0"), "workers must be an integer from 1"),
])
def test_out_of_range_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, message):
    out = tmp_path / "out"
    result = run("generate", "--meetings", "10", *args, "--out", out) if "--meetings" not in args else \
        run("generate", *args, "--out", out)
    assert result.exit_code == 2
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no staged leftovers either


def test_unknown_option_is_a_usage_error(tmp_path):
    result = run("generate", "--sed", "1", "--out", tmp_path / "x")
    assert result.exit_code == 2
    assert "No such option" in result.output
    assert not (tmp_path / "x").exists()


def test_non_empty_output_directory_is_refused_untouched(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = run("generate", "--meetings", "10", "--out", out)
    assert result.exit_code == 2
    assert "not empty" in result.output
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_generate_then_validate_passes(tmp_path):
    out = tmp_path / "c"
    result = run("generate", "--seed", "5", "--meetings", "16", "--words-per-meeting", "500", "--out", out)
    assert result.exit_code == 0, result.output
    assert "synthetic-s5-m16-w500: 16 meetings" in result.output
    result = run("validate", out)
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert sum(line.startswith("PASS") for line in lines) >= 10
    assert lines[-1].startswith("all 21 applicable checks pass")


def test_validate_refuses_missing_or_extra_files_with_exit_3(tmp_path):
    out = tmp_path / "c"
    assert run("generate", "--seed", "5", "--meetings", "16", "--words-per-meeting", "500", "--out", out).exit_code == 0
    (out / "notes.txt").write_text("extra")
    result = run("validate", out)
    assert result.exit_code == 3 and "not in the manifest: notes.txt" in result.output
    (out / "notes.txt").unlink()
    (out / "queries.jsonl").unlink()
    result = run("validate", out)
    assert result.exit_code == 3 and "missing file(s)" in result.output
    assert run("validate", tmp_path / "nowhere").exit_code == 3


def _drifted_manifest(tmp_path, faker_version="0.0.1", break_file=None):
    m = json.loads((REPO / "fixtures" / "small" / "manifest.json").read_bytes())
    m["producer"]["libraries"]["faker"] = faker_version
    if break_file:
        m["files"][break_file] = "0" * 64
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps(m))
    return path


def test_from_manifest_refuses_version_drift_naming_both_versions(tmp_path):
    import faker

    path = _drifted_manifest(tmp_path)
    result = run("generate", "--from-manifest", path, "--out", tmp_path / "r")
    assert result.exit_code == 3
    assert "Faker recorded 0.0.1, installed " + faker.VERSION in result.output
    assert "--allow-version-drift" in result.output
    assert not (tmp_path / "r").exists()


def test_allowed_version_drift_reports_which_files_differ(tmp_path):
    path = _drifted_manifest(tmp_path, break_file="queries.jsonl")
    result = run("generate", "--from-manifest", path, "--allow-version-drift", "--out", tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert "version drift: Faker recorded 0.0.1" in result.output
    assert "differs from" in result.output and "in 1 file(s): queries.jsonl" in result.output


def test_from_manifest_regenerates_the_fixture(tmp_path):
    result = run("generate", "--from-manifest", REPO / "fixtures" / "small" / "manifest.json", "--out", tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert "identical to" in result.output
    assert tree_bytes(tmp_path / "r") == tree_bytes(REPO / "fixtures" / "small")


def test_from_manifest_rejects_seed_options_and_foreign_manifests(tmp_path):
    fx = REPO / "fixtures" / "small" / "manifest.json"
    result = run("generate", "--from-manifest", fx, "--seed", "3", "--out", tmp_path / "r")
    assert result.exit_code == 2 and "drop --seed" in result.output
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"producer": {"name": "qmsum-import"}}))
    result = run("generate", "--from-manifest", foreign, "--out", tmp_path / "r")
    assert result.exit_code == 2 and "not a manifest written by turnbench.generator" in result.output


def test_a_failure_mid_generation_leaves_no_corpus(tmp_path, monkeypatch):
    from turnbench.generator import generate as gen
    from turnbench.generator.config import GeneratorConfig

    real = gen.render_meeting
    calls = []

    def failing(mp):
        calls.append(mp.id)
        if len(calls) == 5:
            raise OSError("disk full (injected)")
        return real(mp)

    monkeypatch.setattr(gen, "render_meeting", failing)
    with pytest.raises(OSError, match="injected"):
        gen.generate(GeneratorConfig(seed=1, meetings=10, words_per_meeting=400), tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_allow_version_drift_without_a_manifest_is_a_usage_error(tmp_path):
    result = run("generate", "--meetings", "10", "--allow-version-drift", "--out", tmp_path / "x")
    assert result.exit_code == 2 and "only applies with --from-manifest" in result.output
    assert not (tmp_path / "x").exists()
