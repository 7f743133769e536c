"""The README is the front door and checks itself: short, every command it shows runs with the options it shows,
every file it links exists. Every command that exists is documented in docs/cli.md (generated from --help, and
checked to be current by test_generated_docs.py). The hand-written pages under docs/ are held to the same rule
for the commands they show."""

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
CLI_DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
MAX_README_LINES = 150
# pages whose `turnbench ...` lines are checked like the README's (cli.md is generated from --help itself)
PAGES = sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "cli.md") + [ROOT / "baselines" / "README.md"]


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name in sorted(group.commands):
        cmd = group.commands[name]
        path = prefix + (name,)
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, path)
        else:
            yield path, cmd


def _invocations(text: str) -> list[str]:
    """Each `turnbench ...` line in an indented code block, continuation lines joined."""
    lines = text.splitlines()
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


def _page_invocations():
    for page in [ROOT / "README.md", *PAGES]:
        for line in _invocations(page.read_text(encoding="utf-8")):
            yield pytest.param(line, id=f"{page.relative_to(ROOT)}: {line[:60]}")


@pytest.mark.parametrize("path", [p for p, _ in _commands(main)], ids=lambda p: " ".join(p))
def test_every_command_has_help_and_is_in_the_generated_cli_doc(path):
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    assert f"## turnbench {' '.join(path)}\n" in CLI_DOC, f"`turnbench {' '.join(path)}` is not in docs/cli.md"


def test_the_readme_shows_commands_and_both_set_up_targets():
    assert _invocations(README), "README shows no turnbench command"
    assert re.search(r"^    make bench\b", README, flags=re.M) and re.search(r"^    make test\b", README, flags=re.M)


@pytest.mark.parametrize("line", list(_page_invocations()))
def test_every_invocation_names_real_options(line):
    """Options shown (inside or outside [brackets]) exist on the command they are shown with."""
    words = shlex.split(line.replace("[", " ").replace("]", " ").replace("|", " "))[1:]
    group: click.Command = main
    path = []
    while isinstance(group, click.Group) and words and words[0] in group.commands:
        group = group.commands[words[0]]
        path.append(words.pop(0))
    assert not isinstance(group, click.Group), f"line names no command: {line}"
    known = {opt for p in group.params for opt in getattr(p, "opts", [])}
    for w in words:
        if w.startswith("--"):
            assert w.split("=")[0] in known, f"{' '.join(path)}: unknown option {w}"


def test_the_readme_is_at_most_150_lines():
    assert len(README.splitlines()) <= MAX_README_LINES


def test_the_readme_links_only_to_files_that_exist():
    targets = re.findall(r"\]\(([^)\s]+)\)", README)
    assert targets, "README links to nothing"
    local = [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:", t) and not t.startswith("#")]
    missing = [t for t in local if t and not (ROOT / t).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"
    named = set(re.findall(r"`((?:docs|baselines|examples|scripts|fixtures|turnbench)/[\w./-]+)`", README))
    missing = sorted(n for n in named if "<" not in n and not (ROOT / n).exists())
    assert not missing, f"README names paths that do not exist: {missing}"


def test_every_make_target_in_the_readme_exists():
    targets = set(re.findall(r"^([a-z][a-z0-9-]*):", MAKEFILE, flags=re.M))
    shown = set(re.findall(r"\bmake ([a-z][a-z0-9-]*)", README))
    assert {"bench", "test"} <= shown
    assert shown <= targets, f"README shows make targets the Makefile lacks: {sorted(shown - targets)}"


def test_no_file_points_outside_the_repository():
    """Design references point at docs/design.md; nothing cites the design document kept outside the repository."""
    needles = ("DESIGN" + " §", "DESIGN" + " rule", "/work/" + "shared")
    files = [ROOT / "README.md", ROOT / "Makefile", *PAGES]
    for room in ("turnbench", "tests", "scripts", "benchmarks", "docs", ".ci"):
        files += [p for p in (ROOT / room).rglob("*") if p.is_file() and p.suffix in (".py", ".md", ".toml", "")
                  and "__pycache__" not in p.parts]
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        found = [n for n in needles if n in text]
        assert not found, f"{path.relative_to(ROOT)} cites {found}"
