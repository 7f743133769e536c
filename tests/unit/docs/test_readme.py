"""The README checks itself: every command it shows exists, and every command that exists is shown."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from turnbench.cli import main

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name in sorted(group.commands):
        cmd = group.commands[name]
        path = prefix + (name,)
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, path)
        else:
            yield path, cmd


def _readme_invocations():
    """Each `turnbench ...` line in an indented code block, continuation lines joined."""
    lines = README.splitlines()
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("    ") and line.strip().startswith("turnbench "):
            text = line.strip()
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1] + " " + lines[i].strip()
            out.append(text.split("#")[0].strip())
        i += 1
    return out


@pytest.mark.parametrize("path", [p for p, _ in _commands(main)], ids=lambda p: " ".join(p))
def test_every_command_has_help_and_is_in_the_readme(path):
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    assert f"turnbench {' '.join(path)}" in README, f"`turnbench {' '.join(path)}` is not shown in README.md"


@pytest.mark.parametrize("line", _readme_invocations())
def test_every_readme_invocation_names_real_options(line):
    """Options shown in the README (inside or outside [brackets]) exist on the command they are shown with."""
    words = shlex.split(line.replace("[", " ").replace("]", " ").replace("|", " "))[1:]
    group: click.Command = main
    path = []
    while isinstance(group, click.Group) and words and words[0] in group.commands:
        group = group.commands[words[0]]
        path.append(words.pop(0))
    assert not isinstance(group, click.Group), f"README line names no command: {line}"
    known = {opt for p in group.params for opt in getattr(p, "opts", [])}
    for w in words:
        if w.startswith("--"):
            assert w.split("=")[0] in known, f"{' '.join(path)}: README shows unknown option {w}"


def test_every_make_target_in_the_readme_exists():
    targets = set(re.findall(r"^([a-z][a-z0-9-]*):", MAKEFILE, flags=re.M))
    shown = set(re.findall(r"\bmake ([a-z][a-z0-9-]*)", README))
    assert shown, "README shows no make target"
    assert shown <= targets, f"README shows make targets the Makefile lacks: {sorted(shown - targets)}"
    assert {"bench", "test"} <= shown
