"""The example pull-request workflow names only make targets and variables that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
WORKFLOW = ROOT / "examples" / "github-actions" / "turnbench-pr.yml"


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
