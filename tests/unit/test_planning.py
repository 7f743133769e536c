"""turnbench plan: how many questions a comparison needs, worked by hand."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest
from click.testing import CliRunner

from tests.unit.harness.helpers import ranked_results_dir
from turnbench.cli import main
from turnbench.errors import BadInput
from turnbench.pipeline.planning import plan


def test_from_a_pilot_alone_by_the_planted_loss_model(tmp_path):
    pilot = ranked_results_dir(tmp_path / "p", {f"q{i:02d}": ("lookup", 1) for i in range(40)})
    p = plan(pilot, None, delta=0.1)
    # every lookup scores 1: a loss of 0.1 is 10% of them losing everything, sd = sqrt(0.1 - 0.01) = 0.3; the guard
    # over the two measures at 0.025: c = z(1 - 0.0125) = 2.2414; n = ((c + z(0.8)) * 0.3 / 0.1)² = 85.5 -> 86
    c = NormalDist().inv_cdf(1 - 0.0125)
    assert abs(p.sd - 0.3) < 1e-12 and abs(p.critical - c) < 1e-12
    assert p.queries == math.ceil(((c + NormalDist().inv_cdf(0.8)) * 0.3 / 0.1) ** 2) == 86
    assert p.pilot_queries == 40 and p.seeds == 3 and p.rule == "the lookup guard"


def test_from_a_pilot_comparison_by_its_paired_spread(tmp_path):
    ranks = {f"q{i:02d}": ("lookup", 1) for i in range(40)}
    pilot = ranked_results_dir(tmp_path / "p", ranks)
    cand = ranked_results_dir(tmp_path / "c", {q: (c, 2 if i % 2 else 1) for i, (q, (c, _)) in
                                               enumerate(sorted(ranks.items()))}, arm="cand")
    p = plan(pilot, cand, delta=0.05)
    assert p.source.startswith("the paired pilot comparison") and p.sd > 0
    assert p.queries == math.ceil(((p.critical + NormalDist().inv_cdf(0.8)) * p.sd / 0.05) ** 2)


@pytest.mark.parametrize("kw,message", [
    ({"delta": 0.0}, "lies between 0 and 1"), ({"delta": 0.1, "cls": "aggregation"}, "not a ranked class"),
    ({"delta": 0.1, "power": 1.0}, "between 0.5 and 1"), ({"delta": 0.1, "measure": "P@7"}, "no P@7 on lookup"),
])
def test_refusals(tmp_path, kw, message):
    pilot = ranked_results_dir(tmp_path / "p", {f"q{i:02d}": ("lookup", 3) for i in range(10)})
    with pytest.raises(BadInput, match=message):
        plan(pilot, None, **kw)
    with pytest.raises(BadInput, match="more than lookup's whole"):
        plan(pilot, None, delta=0.9)


def test_the_command_and_its_check(tmp_path):
    from tests.unit.harness.helpers import small_world, write_corpus

    pilot = ranked_results_dir(tmp_path / "p", {f"q{i:02d}": ("lookup", 1) for i in range(40)})
    r = CliRunner().invoke(main, ["plan", str(pilot), "--delta", "0.1"])
    assert r.exit_code == 0 and "86 lookup questions" in r.output
    corpus = write_corpus(tmp_path / "corpus", *small_world())  # two lookups
    r = CliRunner().invoke(main, ["plan", str(pilot), "--delta", "0.1", "--check", str(corpus)])
    assert r.exit_code == 1 and "NOT enough" in r.output
    r = CliRunner().invoke(main, ["plan", str(pilot), "--delta", "-1"])
    assert r.exit_code == 2 and "between 0 and 1" in r.output
