"""compare --rule: a decision file written before the candidate ran, judged by each row's interval."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.unit.harness.test_compare import compare, doc
from turnbench.cli import main
from turnbench.errors import BadInput
from turnbench.harness.rules import FAILED, HELD, UNDETERMINED, decide, read_rule

MEASURES = ["MRR", "nDCG@10"]


def _rule(tmp_path, text: str):
    p = tmp_path / "rule.txt"
    p.write_text(text)
    return read_rule(p, MEASURES)


def _cmp(shift: dict[str, float], noise: float = 0.0):
    base = {f"{c[0]}{i:02d}": (c, 0.5) for c in ("lookup", "multi_file") for i in range(30)}
    cand = {q: (c, v + shift.get(c, 0.0) + (noise if i % 2 else -noise))
            for i, (q, (c, v)) in enumerate(sorted(base.items()))}
    return compare(doc(base), doc(cand, arm="cand"))


def test_a_win_by_its_margin_and_lookup_within_its_margin_holds(tmp_path):
    rule = _rule(tmp_path, "# before the run\nnDCG@10 up on multi_file by 0.01\nlookup never down within 0.005\n"
                           "undetermined fails\n")
    d = decide(rule, _cmp({"multi_file": 0.05}).rows)
    # multi-file moved +0.05 on every query: its interval is the point [+0.05, +0.05], above +0.01
    assert d.verdict == HELD and d.passes and d.deciding == "every clause held (2)"
    assert [v for _, v, _ in d.clauses] == [HELD, HELD]


def test_a_margin_the_win_does_not_clear_fails_and_names_the_clause(tmp_path):
    rule = _rule(tmp_path, "nDCG@10 up on multi_file by 0.1, undetermined passes")
    d = decide(rule, _cmp({"multi_file": 0.05}).rows)
    assert d.verdict == FAILED and not d.passes  # [+0.05, +0.05] lies at or below +0.1
    assert d.deciding.startswith("nDCG@10 up on multi_file by 0.1: c multi_file nDCG@10 Δ +0.0500")


def test_an_interval_across_the_margin_is_undetermined_and_the_file_says_what_that_means(tmp_path):
    rows = _cmp({"lookup": -0.004}, noise=0.05).rows
    for word, passes in (("passes", True), ("fails", False)):
        d = decide(_rule(tmp_path, f"lookup never down within 0.005\nundetermined {word}\n"), rows)
        assert d.verdict == UNDETERMINED and d.passes is passes
        assert d.deciding.startswith("lookup never down within 0.005: c lookup")
    # a lookup loss beyond the margin on every query fails it
    d = decide(_rule(tmp_path, "lookup never down within 0.005\nundetermined passes\n"), _cmp({"lookup": -0.01}).rows)
    assert d.verdict == FAILED


@pytest.mark.parametrize("text,message", [
    ("nDCG@10 up on lookup\n", "say what an undetermined verdict means"),
    ("undetermined passes\n", "holds no clause"),
    ("nDCG@99 up on lookup\nundetermined fails\n", "line 1: rule clause 'nDCG@99 up on lookup'"),
    ("nDCG@10 up on lookup by -1\nundetermined fails\n", "margin '-1' is not a non-negative number"),
    ("nDCG@10 up on lookup by nan\nundetermined fails\n", "margin 'nan'"),
    ("nDCG@10 up on lookup within 0.1\nundetermined fails\n", "'up' takes 'by X'"),
    ("undetermined passes\nundetermined fails\n", "a second 'undetermined' line"),
])
def test_a_malformed_rule_is_refused_naming_the_line(tmp_path, text, message):
    with pytest.raises(BadInput, match=message.replace("(", r"\(").replace(")", r"\)")):
        _rule(tmp_path, text)


def test_compare_rule_on_results_directories(tmp_path):
    from tests.unit.harness.helpers import ranked_results_dir

    same = {f"q{i:02d}": ("lookup", 1) for i in range(30)}
    lost = {f"q{i:02d}": ("lookup", 3) for i in range(30)}
    base = ranked_results_dir(tmp_path / "b", same, arm="base")
    cand = ranked_results_dir(tmp_path / "c", lost, arm="cand")
    rule = tmp_path / "rule.txt"
    rule.write_text("lookup never down within 0.01\nundetermined fails\n")
    runner = CliRunner()
    r = runner.invoke(main, ["compare", str(base), str(cand), "--rule", str(rule), "--json", str(tmp_path / "c.json")])
    assert r.exit_code == 4, r.output
    assert "the rule" in r.output and "is failed: lookup never down within 0.01" in r.output
    assert json.loads((tmp_path / "c.json").read_text())["rule"]["verdict"] == "failed"
    r = runner.invoke(main, ["compare", str(base), str(base), "--rule", str(rule), "--full"])
    assert r.exit_code == 0 and "Pre-registered rule" in r.output and "**held**" in r.output
    r = runner.invoke(main, ["compare", str(base), str(base), "--rule", str(rule)])
    assert r.exit_code == 0 and f"rule {rule}: held: " in r.output
    rule.write_text("lookup never down\n")
    r = runner.invoke(main, ["compare", str(base), str(cand), "--rule", str(rule)])
    assert r.exit_code == 2 and "undetermined" in r.output
