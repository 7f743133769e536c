"""Generating a corpus (turnbench/generator/generate.py): same seed and options give the same bytes whatever
--workers and PYTHONHASHSEED; the committed fixtures regenerate byte for byte from their manifests; and
`turnbench generate` through the CLI: exit codes, refusals, version drift, no partial corpus."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.unit.corpus.helpers import REPO, tree_bytes
from turnbench.cli import main
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.generate import corpus_id, generate, regenerate

CFG = GeneratorConfig(seed=3, meetings=30, words_per_meeting=700)


def test_fixture_small_regenerates_byte_identical(tmp_path):
    fixture = REPO / "fixtures" / "small"
    result = regenerate(fixture / "manifest.json", tmp_path / "small")
    assert result.drift == () and result.differing_files == ()
    assert tree_bytes(tmp_path / "small") == tree_bytes(fixture)


def test_default_manifest_regenerates_byte_identical(tmp_path):
    recorded = (REPO / "fixtures" / "default.manifest.json").read_bytes()
    result = regenerate(REPO / "fixtures" / "default.manifest.json", tmp_path / "default", workers=2)
    assert result.differing_files == ()
    assert (tmp_path / "default" / "manifest.json").read_bytes() == recorded
    assert json.loads(recorded)["producer"]["seed"] == 20261130
    assert json.loads(recorded)["counts"]["meetings"] == 200


def test_workers_do_not_change_a_byte(tmp_path):
    generate(CFG, tmp_path / "one", workers=1)
    generate(CFG, tmp_path / "three", workers=3)
    assert tree_bytes(tmp_path / "one") == tree_bytes(tmp_path / "three")


def test_workers_do_not_change_a_byte_in_another_register(tmp_path):
    cfg = GeneratorConfig.from_options(seed=3, meetings=16, register="interactive", words_per_meeting=1500)
    generate(cfg, tmp_path / "one", workers=1)
    generate(cfg, tmp_path / "two", workers=2)
    assert tree_bytes(tmp_path / "one") == tree_bytes(tmp_path / "two")


def test_pythonhashseed_does_not_change_a_byte(tmp_path):
    outs = []
    for hs in ("0", "4242"):
        out = tmp_path / f"h{hs}"
        env = {**os.environ, "PYTHONHASHSEED": hs}
        subprocess.run([sys.executable, "-c", "from turnbench.cli import main; main()", "generate", "--seed", "3",
                        "--meetings", "30", "--words-per-meeting", "700", "--out", str(out), "--workers", "2"],
                       check=True, env=env, capture_output=True, cwd=REPO)
        outs.append(tree_bytes(out))
    assert outs[0] == outs[1]
    generate(CFG, tmp_path / "inproc")
    assert tree_bytes(tmp_path / "inproc") == outs[0]


def test_another_seed_gives_another_corpus(tmp_path):
    generate(CFG, tmp_path / "a")
    generate(GeneratorConfig(seed=4, meetings=30, words_per_meeting=700), tmp_path / "b")
    a = json.loads((tmp_path / "a" / "manifest.json").read_bytes())
    b = json.loads((tmp_path / "b" / "manifest.json").read_bytes())
    assert a["corpus_sha256"] != b["corpus_sha256"]
    assert a["corpus_id"] == "synthetic-s3-m30-w700"


def test_manifest_records_producer_licence_and_config(tmp_path):
    import faker

    from turnbench import __version__
    from turnbench.generator import GENERATOR_VERSION

    m = generate(CFG, tmp_path / "c")
    assert m["licence"] == {"tier": "A", "name": "MIT"}
    assert m["producer"] == {
        "name": "turnbench.generator", "version": f"{__version__}+g{GENERATOR_VERSION}", "seed": 3,
        "config": {"seed": 3, "meetings": 30, "words_per_meeting": 700, "near_duplicate_rate": 0.25,
                   "start_date": "2026-01-05", "span_days": 182, "register": "default", "titles": "opaque",
                   "asr_wer": 0.0, "asr_entity_accuracy": 0.82},
        "libraries": {"faker": faker.VERSION},
    }
    assert sorted(m["files"]) == ["facts.jsonl", "meetings/part-0000.jsonl", "queries.jsonl"]


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
    (("--register", "chatty"), "register must be one of default, formal, interactive, got 'chatty'"),
    (("--register", ""), "register must be one of default, formal, interactive, got ''"),
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


@pytest.mark.parametrize("generation", [1, 2, 4])
def test_a_manifest_of_a_previous_generator_is_refused_as_version_drift(tmp_path, generation):
    # the default corpus's manifest as generator 1 recorded it (before self-overlap, mentions and paraphrases), as
    # generator 2 did (invented subjects, paraphrases across turns, series titles) and as generator 4 did (opinion
    # questions without their speaker's turns, and no distractor by construction): every one is other bytes now
    old = REPO / "tests" / "fixtures" / "manifests" / f"default-g{generation}.manifest.json"
    from turnbench.generator import generator_version

    result = run("generate", "--from-manifest", old, "--out", tmp_path / "r")
    assert result.exit_code == 3
    assert result.output.strip().splitlines() == [
        f"turnbench: VersionDrift: {old}: generator recorded 0.1.0+g{generation}, installed {generator_version()}; "
        "pass --allow-version-drift to regenerate anyway"]
    assert not (tmp_path / "r").exists()


def test_a_register_names_the_corpus_and_sets_its_size_unless_given(tmp_path):
    from turnbench.generator.register import REGISTERS

    interactive = GeneratorConfig.from_options(seed=3, meetings=8, register="interactive", words_per_meeting=None)
    assert interactive.words_per_meeting == REGISTERS["interactive"].words_per_meeting
    assert corpus_id(interactive) == "synthetic-s3-m8-interactive"
    formal = GeneratorConfig.from_options(seed=3, meetings=8, register="formal", words_per_meeting=900)
    assert corpus_id(formal) == "synthetic-s3-m8-formal-w900"
    assert GeneratorConfig.from_options(seed=3) == GeneratorConfig(seed=3)
    result = run("generate", "--seed", "3", "--meetings", "10", "--register", "formal", "--words-per-meeting", "900",
                 "--out", tmp_path / "f")
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "f" / "manifest.json").read_bytes())
    assert manifest["producer"]["config"]["register"] == "formal"
    assert manifest["corpus_id"] == "synthetic-s3-m10-formal-w900"


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

    real = gen.write_meeting
    calls = []

    def failing(mp):
        calls.append(mp.id)
        if len(calls) == 5:
            raise OSError("disk full (injected)")
        return real(mp)

    monkeypatch.setattr(gen, "write_meeting", failing)
    with pytest.raises(OSError, match="injected"):
        gen.generate(GeneratorConfig(seed=1, meetings=10, words_per_meeting=400), tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_allow_version_drift_without_a_manifest_is_a_usage_error(tmp_path):
    result = run("generate", "--meetings", "10", "--allow-version-drift", "--out", tmp_path / "x")
    assert result.exit_code == 2 and "only applies with --from-manifest" in result.output
    assert not (tmp_path / "x").exists()
