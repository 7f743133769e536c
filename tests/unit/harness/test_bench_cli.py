"""bench refuses before starting a stack; the example CI workflow uses only make targets and variables that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.errors import BadInput
from turnbench.pipeline import result_dirs

ROOT = Path(__file__).resolve().parents[3]
WORKFLOW = ROOT / "examples" / "github-actions" / "turnbench-pr.yml"


def test_result_directories_one_per_arm_or_the_control_name(tmp_path):
    assert result_dirs(tmp_path, ["bm25", "bm25-title"], None) == [
        ("bm25", tmp_path / "bm25"), ("bm25-title", tmp_path / "bm25-title")]
    assert result_dirs(tmp_path, ["bm25"], "control") == [("bm25", tmp_path / "control")]
    with pytest.raises(BadInput, match="exactly one --arm"):
        result_dirs(tmp_path, ["bm25", "bm25-title"], "control")
    with pytest.raises(BadInput, match="more than once"):
        result_dirs(tmp_path, ["bm25", "bm25"], None)
    (tmp_path / "bm25").mkdir()
    (tmp_path / "bm25" / "metrics.json").write_text("{}")
    with pytest.raises(BadInput, match="not empty"):
        result_dirs(tmp_path, ["bm25"], None)
    with pytest.raises(BadInput):
        result_dirs(tmp_path, ["bm25"], "../up")


def test_bench_refuses_an_unknown_arm_and_a_bad_corpus_before_any_stack_starts(tmp_path):
    runner = CliRunner()
    r = runner.invoke(main, ["bench", "--corpus", str(ROOT / "fixtures" / "small"), "--arm", "no-such-arm",
                             "--out", str(tmp_path), "--provider", "external"])
    assert r.exit_code == 3 and "UnknownArm" in r.output
    r = runner.invoke(main, ["bench", "--corpus", str(tmp_path / "missing"), "--arm", "bm25",
                             "--out", str(tmp_path / "o"), "--provider", "external"])
    assert r.exit_code == 3 and "CorpusIntegrityError" in r.output


def _make_targets_and_variables() -> tuple[set[str], set[str]]:
    text = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([A-Za-z][\w-]*):", text, re.M))
    variables = set(re.findall(r"^([A-Z_]+)\s*\??=", text, re.M))
    return targets, variables


def test_example_workflow_uses_only_make_targets_and_variables_that_exist():
    text = WORKFLOW.read_text()
    commands = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    targets, variables = _make_targets_and_variables()
    calls = re.findall(r"\bmake\s+([^\n|;&]+)", commands)
    assert calls, "the workflow should drive everything through make"
    used_targets, used_vars = set(), set()
    for call in calls:
        for word in call.split():
            if "=" in word:
                used_vars.add(word.split("=", 1)[0])
            elif not word.startswith("-"):
                used_targets.add(word)
    assert used_targets and used_targets <= targets, used_targets - targets
    assert used_vars <= variables, used_vars - variables
    assert {"corpus", "bench", "gate"} <= used_targets
    assert "PROVIDER=docker" in text
    # files the workflow publishes are the ones the targets write
    assert "results/latest/compare.md" in text and "RESULTS ?= results/latest" in (ROOT / "Makefile").read_text()
    assert not re.search(r"^\s*(run:\s*)?(\S*/)?turnbench\s", commands, re.M), "call make targets, not the CLI"
