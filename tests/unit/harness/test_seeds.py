"""Several seeds: each compared alone, paired queries pooled with a bootstrap stratified by seed, flips called out."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.unit.harness.helpers import ranked_results_dir, rec
from tests.unit.harness.test_compare import doc
from turnbench.cli import main
from turnbench.errors import BadInput, UnpairedComparison
from turnbench.harness.compare import BETTER, SAME, WORSE
from turnbench.harness.seeds import compare_seeds as _compare_seeds
from turnbench.render.comparisons import render_seeds_md
from turnbench.results.directory import seed_dirs


def compare_seeds(base, cand, **kw):
    return _compare_seeds({s: rec(d) for s, d in base.items()}, {s: rec(d) for s, d in cand.items()}, **kw)



def seeded(seed: int, values, arm="base"):
    d = doc(values, arm=arm, sha=f"sha-{seed}")
    d["provenance"]["corpus"]["id"] = f"synthetic-s{seed}-m200"
    d["provenance"]["corpus"]["seed"] = seed
    for r in d["retrieval"]["per_query"]:
        r["corpus"] = f"synthetic-s{seed}-m200"
    for r in d["retrieval"]["rows"]:
        r["corpus"] = f"synthetic-s{seed}-m200"
    return d


def _values(shift, n=40):
    return {f"q{i:02d}": ("multi_file", min(1.0, 0.3 + (i % 7) / 20 + shift)) for i in range(n)}


def test_pooled_rows_pair_every_seed_and_flips_are_called_out():
    base = {s: seeded(s, _values(0.0)) for s in (1, 2, 3)}
    # seed 1 clearly better, seed 2 clearly worse, seed 3 unchanged
    cand = {1: seeded(1, _values(0.2), "cand"), 2: seeded(2, _values(-0.2), "cand"), 3: seeded(3, _values(0.0), "cand")}
    cmp = compare_seeds(base, cand, resamples=2_000)
    pooled = next(r for r in cmp.pooled.rows if r.measure == "MRR" and r.group("class") == "multi_file")
    assert pooled.n == 120 and dict(pooled.groups) == {"class": "multi_file"}
    per = {s: next(r for r in c.rows if r.measure == "MRR" and r.group("class") == "multi_file")
           for s, c in cmp.per_seed.items()}
    assert (per[1].verdict, per[2].verdict, per[3].verdict) == (BETTER, WORSE, SAME)
    assert any(c.startswith("FLIPS: retrieval multi_file MRR") for c in cmp.callouts)
    md = render_seeds_md(cmp, gate=True)
    assert "pooled over seeds 1, 2, 3" in md and "FLIPS" in md and "| seed 1 | seed 2 | seed 3 |" in md
    assert cmp.to_json()["seeds"] == [1, 2, 3]


def test_stratified_pooling_keeps_each_seeds_share():
    # one seed gains 0.1 on every query, the other nothing: every stratified resample's pooled mean is 0.05
    base = {s: seeded(s, _values(0.0)) for s in (1, 2)}
    cand = {1: seeded(1, _values(0.1), "cand"), 2: seeded(2, _values(0.0), "cand")}
    row = next(r for r in compare_seeds(base, cand, resamples=500).pooled.rows
               if r.measure == "MRR" and r.group("class") == "multi_file")
    assert row.delta == row.low == row.high == 0.05


def test_seed_sets_must_match():
    base = {s: seeded(s, _values(0.0)) for s in (1, 2)}
    with pytest.raises(UnpairedComparison, match=r"seed sets differ: baseline \[1, 2\], candidate \[1\]"):
        compare_seeds(base, {1: base[1]})


def _write_set(root, shift, seeds=(1, 2), arm="base"):
    for s in seeds:
        ranked_results_dir(root / f"seed-{s}", {f"q{i:02d}": ("multi_file", 1 + i % 7 + shift) for i in range(40)},
                           corpus=f"synthetic-s{s}-m200", sha=f"sha-{s}", seed=s, arm=arm)
    return str(root)


def test_compare_cli_pools_seed_sets_and_gates_on_the_pooled_rows(tmp_path):
    base = _write_set(tmp_path / "base", 0)
    worse = _write_set(tmp_path / "worse", 3, arm="w")
    fewer = _write_set(tmp_path / "fewer", 0, seeds=(1,), arm="f")
    runner = CliRunner()
    ok = runner.invoke(main, ["compare", base, base, "--gate", "--resamples", "500", "--full"])
    assert ok.exit_code == 0 and "**Gate: PASS**" in ok.output and "pooled over seeds 1, 2" in ok.output
    ok = runner.invoke(main, ["compare", base, base, "--gate", "--resamples", "500"])
    assert ok.exit_code == 0 and "Gate: PASS\n" in ok.output and "pooled over seeds 1, 2" in ok.output
    bad = runner.invoke(main, ["compare", base, worse, "--gate", "--resamples", "500"])
    assert bad.exit_code == 4 and bad.output.count("GateFailed") == 1
    refused = runner.invoke(main, ["compare", base, fewer])
    assert refused.exit_code == 3 and "seed sets differ" in refused.output
    mixed = runner.invoke(main, ["compare", base, str(tmp_path / "base" / "seed-1")])
    assert mixed.exit_code == 2 and "one side is a single results directory" in mixed.output


def test_seed_dirs_reads_a_set_or_a_single_directory(tmp_path):
    _write_set(tmp_path / "s", 0, seeds=(7, 11))
    assert list(seed_dirs(tmp_path / "s")) == [7, 11]
    assert seed_dirs(tmp_path / "s" / "seed-7") is None
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match="neither a results directory"):
        seed_dirs(tmp_path / "empty")


def test_a_set_whose_seeds_measured_different_things_or_lie_about_their_seed_is_refused():
    from turnbench.errors import ResultsIntegrityError

    base = {s: seeded(s, _values(0.0)) for s in (1, 2)}
    with_answers = {s: dict(d) for s, d in base.items()}
    with_answers[1]["answers"] = {"per_query": [], "rows": []}
    with pytest.raises(UnpairedComparison, match="seed 2's results hold the blocks retrieval and seed 1's answers"):
        compare_seeds(with_answers, with_answers, resamples=200)
    liar = {1: base[1], 2: seeded(2, _values(0.0))}
    liar[2]["provenance"]["corpus"]["seed"] = 7
    with pytest.raises(ResultsIntegrityError, match="seed-2/ holds results of corpus .* whose seed is 7, not 2"):
        compare_seeds(liar, base, resamples=200)
    twice = {1: base[1], 2: seeded(2, _values(0.0))}
    twice[2]["provenance"]["corpus"]["sha256"] = base[1]["provenance"]["corpus"]["sha256"]
    with pytest.raises(ResultsIntegrityError, match="seed-1/ and seed-2/ hold results of one corpus"):
        compare_seeds(base, twice, resamples=200)
