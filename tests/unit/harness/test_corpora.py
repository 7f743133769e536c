"""One change over several corpora: one Holm family, lookup guarded on each, a veto from any, wins on every one."""

from __future__ import annotations

import pytest

from tests.unit.harness.helpers import rec
from tests.unit.harness.test_compare import compare, doc
from turnbench.errors import UnpairedComparison
from turnbench.harness.compare import BETTER, GUARD_ALPHA, SAME, WORSE
from turnbench.harness.corpora import MIXED, Corpus, across, combine, guard_level
from turnbench.harness.corpora import check_corpora as _check_corpora
from turnbench.render.comparisons import render_corpora_md


def check_corpora(pairs):  # noqa: D103
    return _check_corpora([(rec(b), rec(c)) for b, c in pairs])



def _docs(shift: dict[str, float], *, sha: str, n: int = 40) -> tuple[dict, dict]:
    """A baseline and a candidate on one corpus: per class, every query moved by ``shift[class]`` (±0.01 noise)."""
    base = {f"{cls[0]}{i:02d}": (cls, 0.5) for cls in shift for i in range(n)}
    cand = {q: (cls, v + shift[cls] + (0.01 if i % 2 else -0.01))
            for i, (q, (cls, v)) in enumerate(sorted(base.items()))}
    return doc(base, sha=sha), doc(cand, sha=sha, arm="cand")


def _over(*pairs: tuple[dict, dict]):
    level = guard_level(len(pairs))
    return combine([Corpus(f"c{i}", "A", compare(b, c, guard_level=level)) for i, (b, c) in enumerate(pairs)])


def test_a_regression_on_the_real_corpus_vetoes_what_the_synthetic_one_passes():
    synthetic = _docs({"lookup": 0.0, "multi_file": 0.05}, sha="syn")
    real = _docs({"lookup": -0.05, "multi_file": 0.05}, sha="real")
    assert compare(*synthetic).gate_failures() == []  # alone, the synthetic corpus passes the change
    cc = _over(synthetic, real)
    failures = cc.gate_failures()
    assert failures and all(f.startswith("c1: retrieval c lookup") for f in failures)  # the rows name no corpus
    cell = next(x for x in cc.cells() if x.measure == "nDCG@10" and dict(x.groups) == {"class": "lookup"})
    assert cell.verdict == WORSE and [r.verdict for r in cell.rows] == [SAME, WORSE]
    # the better multi-file rows hold on both corpora: a win
    mf = next(x for x in cc.cells() if x.measure == "nDCG@10" and dict(x.groups) == {"class": "multi_file"})
    assert mf.verdict == BETTER and [r.relative for r in mf.rows] == [0.1, 0.1]


def test_one_holm_family_over_every_corpus_and_the_guard_at_its_share():
    a, b = _docs({"lookup": 0.02}, sha="a"), _docs({"lookup": 0.0}, sha="b")
    alone = compare(*a)
    cc = _over(a, b)
    assert cc.family() == 2 * len([r for r in alone.rows])  # every gated row of both corpora
    assert cc.guard_level == GUARD_ALPHA / 2
    row = next(r for r in cc.corpora[0].comparison.rows if r.measure == "MRR" and r.group("class") == "lookup")
    solo = next(r for r in alone.rows if r.measure == "MRR" and r.group("class") == "lookup")
    # Holm over twice the rows: the smallest p is multiplied by twice as many
    assert row.p == solo.p and row.p_holm == min(1.0, round(solo.p * cc.family(), 6))
    # better on one corpus and not measurably different on the other is not a win
    cell = next(x for x in cc.cells() if x.measure == "MRR" and dict(x.groups) == {"class": "lookup"})
    assert [r.verdict for r in cell.rows] == [BETTER, SAME] and cell.verdict == MIXED
    md = render_corpora_md(cc, gate=True)
    assert "**Gate: PASS**" in md and "### Across corpora (gated rows)" in md and "(licence tier A)" in md
    assert "not on every corpus" in md


def test_across_verdicts():
    a, b = _docs({"lookup": 0.05}, sha="a"), _docs({"lookup": 0.05}, sha="b")
    cc = _over(a, b)
    assert {x.verdict for x in cc.cells()} == {BETTER}
    assert across([], GUARD_ALPHA) == SAME


def test_refuses_other_arms_on_another_corpus_and_one_corpus_twice():
    a = _docs({"lookup": 0.0}, sha="a")
    b_base, b_cand = _docs({"lookup": 0.0}, sha="b")
    with pytest.raises(UnpairedComparison, match="corpus 2's candidate is arm 'base' and corpus 1's 'cand'"):
        check_corpora([a, (b_base, b_base)])
    with pytest.raises(UnpairedComparison, match="corpora 1 and 2 are one corpus"):
        check_corpora([a, a])
    check_corpora([a, (b_base, b_cand)])


def test_compare_also_on_results_directories(tmp_path):
    import json

    from click.testing import CliRunner

    from tests.unit.harness.helpers import ranked_results_dir
    from turnbench.cli import main

    same = {f"q{i:02d}": ("lookup", 1) for i in range(30)}
    lost = {f"q{i:02d}": ("lookup", 4 if i < 20 else 1) for i in range(30)}
    syn_b = ranked_results_dir(tmp_path / "syn-b", same, corpus="syn", sha="s1", arm="base")
    syn_c = ranked_results_dir(tmp_path / "syn-c", same, corpus="syn", sha="s1", arm="cand")
    real_b = ranked_results_dir(tmp_path / "real-b", same, corpus="real", sha="r1", arm="base")
    real_c = ranked_results_dir(tmp_path / "real-c", lost, corpus="real", sha="r1", arm="cand")
    runner = CliRunner()
    r = runner.invoke(main, ["compare", str(syn_b), str(syn_c), "--gate"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "c.md"
    r = runner.invoke(main, ["compare", str(syn_b), str(syn_c), "--gate", "--also", str(real_b), str(real_c),
                             "--out", str(out), "--html", str(out.with_suffix(".html")), "--json",
                             str(tmp_path / "c.json")])
    assert r.exit_code == 4, r.output
    assert "retrieval real lookup nDCG@10 is worse" in r.output
    doc = json.loads((tmp_path / "c.json").read_text())
    assert [c["corpus"] for c in doc["corpora"]] == ["syn", "real"] and doc["verdicts"]["guard_level"] == 0.0125
    assert "Across 2 corpora" in out.with_suffix(".html").read_text()
    # the sides of two corpora mixed: refused, nothing written
    for f in (out, out.with_suffix(".html")):
        f.unlink()
    r = runner.invoke(main, ["compare", str(syn_b), str(syn_c), "--gate", "--also", str(syn_b), str(real_c),
                             "--out", str(out), "--html", str(out.with_suffix(".html"))])
    assert r.exit_code == 3 and "corpora (id) differ" in r.output
    assert not out.exists() and not out.with_suffix(".html").exists()
    r = runner.invoke(main, ["compare", str(syn_b), str(syn_c), "--also", str(syn_b), str(syn_c)])
    assert r.exit_code == 3 and "are one corpus" in r.output
    r = runner.invoke(main, ["compare", str(syn_b), str(syn_c), "--also", str(real_b)])
    assert r.exit_code == 2
