"""The sweep's decision rule and grid: parsing, refusals, verdicts and signs, worked by hand; the CLI's hostile
inputs refused in one line before any stack starts."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from turnbench import canonical
from turnbench.cli import main
from turnbench.errors import BadInput
from turnbench.harness import sweep_rules as S
from turnbench.pipeline.sweep import grid, measures, parse_ints, verdicts
from turnbench.results.sweep import ArmCell, CellResults, Sweep, from_tree

MEASURES = measures()


def test_rules_parse_into_clauses():
    clauses = S.parse_rule("span:R@10 up on every class, lookup never down, entry:30s never down on multi_file",
                           MEASURES, across_cells=True)
    assert [str(c) for c in clauses] == ["span:R@10 up on every class", "lookup never down",
                                         "entry:30s never down on multi_file"]


@pytest.mark.parametrize("rule, why", [
    ("span:R@10 goes up", "is not '<measure> up on every class'"),
    ("span:R@11 up on every class", "'span:R@11' is not a measure of these results"),
    ("span:R@10 up on meetings", "'meetings' is not a ranked class"),
    ("span:R@10 up on every class,", "has an empty clause"),
])
def test_a_rule_that_does_not_parse_is_refused_naming_the_clause(rule, why):
    with pytest.raises(BadInput, match=why):
        S.parse_rule(rule, MEASURES, across_cells=False)


def test_across_cells_only_measures_comparable_across_chunkings_may_be_named():
    with pytest.raises(BadInput, match="nDCG@10 counts passages, so it is not comparable across chunkings"):
        S.parse_rule("nDCG@10 up on every class", MEASURES, across_cells=True)
    assert S.parse_rule("nDCG@10 up on every class", MEASURES, across_cells=False)


def test_holds_reads_the_sign_of_each_delta():
    clauses = S.parse_rule("span:R@10 up on every class, lookup never down", MEASURES, across_cells=False)
    base = {"lookup": {"span:R@10": 0.5, "span:P@10": 0.2}, "multi_file": {"span:R@10": 0.4},
            "summarize": {"span:R@10": None}, "all": {"span:R@10": 0.45}}
    up = {"lookup": {"span:R@10": 0.6, "span:P@10": 0.2}, "multi_file": {"span:R@10": 0.41},
          "summarize": {"span:R@10": None}, "all": {"span:R@10": 0.5}}
    assert S.holds(clauses, S.deltas(base, up)) == (True, [])
    # lookup's precision drops: "lookup never down" fails, naming the measure and its delta
    down = {**up, "lookup": {"span:R@10": 0.6, "span:P@10": 0.1}}
    ok, failed = S.holds(clauses, S.deltas(base, down))
    assert not ok and failed == ["lookup never down: lookup span:P@10 Δ -0.1000"]
    # "up" is strictly above zero: an equal class fails it
    flat = {**up, "multi_file": {"span:R@10": 0.4}}
    assert S.holds(clauses, S.deltas(base, flat))[1] == ["span:R@10 up on every class: multi_file span:R@10 Δ +0.0000"]


def test_signs_across_the_grid():
    assert [S.sign_pattern(v) for v in ([0.1, 0.2], [-0.1, -0.3], [0.0, 0.0], [0.1, -0.1], [0.0, 0.1])] == [
        "+", "−", "0", "mixed", "mixed"]


def _block(cell, arms_means):
    return CellResults(cell, 0, 0, 0, {a: ArmCell(f"{cell}/{a}", 0, m, {}) for a, m in arms_means.items()})


def test_a_verdict_is_stable_only_when_it_is_the_same_in_every_cell():
    clauses = S.parse_rule("span:R@10 up on lookup", MEASURES, across_cells=False)
    blocks = [_block("w100-o0", {"a": {"lookup": {"span:R@10": 0.5}}, "b": {"lookup": {"span:R@10": 0.6}}}),
              _block("w200-o0", {"a": {"lookup": {"span:R@10": 0.5}}, "b": {"lookup": {"span:R@10": 0.4}}})]
    (c,) = verdicts(blocks, ["a", "b"], "span:R@10 up on lookup", clauses).comparisons
    assert (c.stable, c.holds_in, len(c.cells)) == (False, 1, 2)
    assert c.signs == {"lookup": {"span:R@10": "mixed"}}
    # one arm: each cell against the first; passage measures are left out of the signs
    one = [_block("w100-o0", {"a": {"lookup": {"span:R@10": 0.5, "nDCG@10": 0.3}}}),
           _block("w200-o0", {"a": {"lookup": {"span:R@10": 0.7, "nDCG@10": 0.1}}}),
           _block("w400-o0", {"a": {"lookup": {"span:R@10": 0.8, "nDCG@10": 0.2}}})]
    (c,) = verdicts(one, ["a"], "span:R@10 up on lookup", clauses).comparisons
    assert c.baseline == "a @ w100-o0" and (c.stable, c.holds_in, len(c.cells)) == (True, 2, 2)
    assert c.signs == {"lookup": {"span:R@10": "+"}}
    # the record is sweep.json's text: written and read back, it is the same record
    rule = verdicts(one, ["a"], "span:R@10 up on lookup", clauses)
    swept = Sweep("c", "0" * 64, (100, 200, 400), (0,), ("a",), ("span:R@10",), ("nDCG@10",), tuple(one), rule)
    tree = canonical.parse_json(canonical.pretty(swept.to_tree()).decode())
    assert from_tree(tree) == swept and tree["rule"]["comparisons"][0]["of"] == 2


def test_the_grid_is_every_size_with_every_overlap_and_refuses_what_cannot_be_cut():
    assert [c.name for c in grid([100, 200], [0, 20])] == ["w100-o0", "w100-o20", "w200-o0", "w200-o20"]
    for sizes, overlaps, why in (([100, 100], [0], "names a value twice"), ([50], [50], "is not below --max-words"),
                                 ([0], [0], "positive"), (list(range(10, 50)), [0], "more than 36"),
                                 ([], [0], "at least one")):
        with pytest.raises(BadInput, match=why):
            grid(sizes, overlaps)
    assert parse_ints("50,100", "--max-words") == [50, 100]
    with pytest.raises(BadInput, match="whole numbers separated by commas"):
        parse_ints("50;100", "--max-words")
    with pytest.raises(BadInput, match="at most 100000"):
        parse_ints("1000000", "--max-words")


@pytest.mark.parametrize("args, why, code", [
    (["--max-words", "a,b"], "give whole numbers separated by commas", 2),
    (["--max-words", "40", "--overlap", "40"], "--overlap 40 is not below --max-words 40", 2),
    (["--rule", "nDCG@10 up on every class", "--max-words", "40,80"], "not comparable across chunkings", 2),
    (["--rule", "span:R@10 up on lookup"], "give at least two chunkings", 2),
    (["--arm", "no-such-arm"], "UnknownArm: no retrieval arm named 'no-such-arm'", 3),
])
def test_sweep_cli_refuses_in_one_line_before_any_stack(tmp_path, args, why, code):
    from pathlib import Path

    small = Path(__file__).resolve().parents[3] / "fixtures" / "small"
    # embedded: a refusal that came after the stack started would start one, and this test would time out
    base = ["sweep", "--corpus", str(small), "--out", str(tmp_path / "out"), "--provider", "embedded"]
    if "--arm" not in args:
        base += ["--arm", "bm25"]
    r = CliRunner().invoke(main, [*base, *args])
    assert r.exit_code == code, r.output
    assert why in r.output and len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_sweep_cli_refuses_a_non_empty_out(tmp_path):
    from pathlib import Path

    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    small = Path(__file__).resolve().parents[3] / "fixtures" / "small"
    r = CliRunner().invoke(main, ["sweep", "--corpus", str(small), "--arm", "bm25", "--out", str(tmp_path / "out"),
                                  "--provider", "embedded"])
    assert r.exit_code == 2 and "exists and is not empty" in r.output
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"
