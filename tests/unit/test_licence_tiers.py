"""Licence tiers acted on: --publishable keeps a tier B or C number out of print, and a tier C corpus is never
scored (docs/formats.md, "Licence tiers")."""

from __future__ import annotations

from click.testing import CliRunner

from tests.unit.harness.helpers import ranked_results_dir, small_world, write_corpus
from turnbench.cli import main
from turnbench.errors import TierRefused

RANKS = {f"q{i:02d}": ("lookup", 1 + i % 3) for i in range(12)}


def _cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_report_and_compare_publishable_refuse_a_tier_b_result_in_one_line_and_write_nothing(tmp_path):
    internal = ranked_results_dir(tmp_path / "mqa", RANKS, tier="B")
    public = ranked_results_dir(tmp_path / "qmsum", RANKS, arm="cand")
    page = tmp_path / "page.html"
    r = _cli("report", str(internal), "--out", str(page), "--publishable")
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "licence tier B (non-commercial: internal use only)" in lines[0]
    assert not page.exists()
    md = tmp_path / "cmp.md"
    r = _cli("compare", str(public), str(internal), "--publishable", "--out", str(md))
    assert r.exit_code == 2 and "--publishable takes tier A results only" in r.output and not md.exists()
    # without the flag the same inputs are drawn (the tier says where the number may go, not whether it is right)
    assert _cli("report", str(internal), "--out", str(page)).exit_code == 0 and page.exists()


def test_tier_a_results_pass_publishable(tmp_path):
    base = ranked_results_dir(tmp_path / "b", RANKS)
    cand = ranked_results_dir(tmp_path / "c", RANKS, arm="cand")
    r = _cli("compare", str(base), str(cand), "--publishable", "--resamples", "200")
    assert r.exit_code == 0, r.output
    page = tmp_path / "p.html"
    assert _cli("report", str(cand), "--baseline", str(base), "--out", str(page), "--publishable",
                "--resamples", "200").exit_code == 0 and page.exists()


def test_export_publishable_refuses_a_corpus_not_of_tier_a(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", *small_world(), tier="B")
    out = tmp_path / "beir"
    r = _cli("export", "beir", str(corpus), "--out", str(out), "--publishable")
    assert r.exit_code == 2 and "licence tier B" in r.output and not out.exists()
    assert _cli("export", "beir", str(corpus), "--out", str(out)).exit_code == 0


def test_a_tier_c_corpus_is_refused_by_scoring_before_anything_is_judged(tmp_path):
    import pytest

    from tests.unit.harness.helpers import score
    from turnbench.corpus.format import open_corpus

    corpus = open_corpus(write_corpus(tmp_path / "corpus", *small_world(), tier="C"))
    with pytest.raises(TierRefused, match="licence tier C"):
        score(corpus, [], [])


def test_bench_refuses_a_tier_c_corpus_before_any_stack_starts(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", *small_world(), tier="C")
    r = _cli("bench", "--corpus", str(corpus), "--arm", "bm25", "--out", str(tmp_path / "out"))
    assert r.exit_code == 3 and "licence tier C" in r.output and not (tmp_path / "out").exists()
