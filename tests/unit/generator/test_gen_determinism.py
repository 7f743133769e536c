"""Same seed and options give the same bytes, whatever --workers and PYTHONHASHSEED; the committed
fixtures regenerate byte for byte from their manifests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.unit.generator.helpers import REPO, tree_bytes
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.generate import generate, regenerate

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


def test_pythonhashseed_does_not_change_a_byte(tmp_path):
    outs = []
    for hs in ("0", "4242"):
        out = tmp_path / f"h{hs}"
        env = {**os.environ, "PYTHONHASHSEED": hs}
        subprocess.run([sys.executable, "-c", "from turnbench.cli import main; main()", "generate", "--seed", "3", "--meetings", "30",
                        "--words-per-meeting", "700", "--out", str(out), "--workers", "2"],
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
                   "start_date": "2026-01-05", "span_days": 182},
        "libraries": {"faker": faker.VERSION},
    }
    assert sorted(m["files"]) == ["facts.jsonl", "meetings/part-0000.jsonl", "queries.jsonl"]
