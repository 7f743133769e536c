"""turnbench.engines.surfaces: the per-surface cosine sign test, by hand and on a generated corpus, and the
corruption it must catch (questions that no longer say what their evidence is about)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.unit.generator.helpers import read_lines, rehash, write_lines
from turnbench.corpus.format import open_corpus
from turnbench.engines.surfaces import MIN_TESTABLE, check_surface_cosine, sign_test_p, surface_cosines
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.generate import generate

SAMPLE = 14  # enough to reach p < 0.001 when 13 of 14 win, few enough texts to encode in a unit test


def test_sign_test_by_hand() -> None:
    assert sign_test_p(10, 10) == 1 / 1024
    assert sign_test_p(0, 10) == 1.0
    assert sign_test_p(9, 10) == 11 / 1024  # C(10,9) + C(10,10)
    assert sign_test_p(5, 10) == 638 / 1024
    assert MIN_TESTABLE == 10  # 0.5**10 < 0.001 <= 0.5**9


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("surfaces") / "corpus"
    generate(GeneratorConfig(seed=5, meetings=16, words_per_meeting=1200), root)
    return root


def test_every_surface_of_a_generated_corpus_is_answerable_by_meaning(corpus_dir: Path) -> None:
    rows = {(r.cls, r.surface): r for r in surface_cosines(open_corpus(corpus_dir), sample=SAMPLE)}
    tested = [r for r in rows.values() if r.p is not None]
    assert {("lookup", "question"), ("lookup", "keyword")} <= {(r.cls, r.surface) for r in tested}
    for r in tested:
        assert r.status == "pass" and r.gold_mean > r.random_mean, r
    # a surface with fewer than MIN_TESTABLE queries is not tested, and says so
    small = [r for r in rows.values() if r.n < MIN_TESTABLE]
    assert all(r.p is None and r.status == "n/a" for r in small)


def test_questions_moved_to_other_evidence_fail_the_sign_test(corpus_dir: Path, tmp_path: Path) -> None:
    """Each question of one surface is given to another question's gold (in another meeting): it still reads like
    a question, but no longer says what its evidence is about, and the check must fail that surface."""
    root = tmp_path / "corpus"
    shutil.copytree(corpus_dir, root)
    rows = read_lines(root / "queries.jsonl")
    chosen = [r for r in rows if r["class"] == "lookup" and r["surface"] == "question"]
    texts = [r["text"] for r in chosen]
    for r, text in zip(chosen, texts[7:] + texts[:7], strict=True):
        r["text"] = text
    write_lines(root / "queries.jsonl", rows)
    rehash(root)
    result = check_surface_cosine(open_corpus(root))
    assert result.status == "fail"
    assert "lookup/question:" in result.detail and "need p < 0.001" in result.detail
    assert json.loads((root / "manifest.json").read_bytes())["counts"]["queries"] == len(rows)
