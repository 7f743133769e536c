"""Write docs/cli.md: every turnbench command's --help, generated, never edited by hand.

    .venv/bin/python scripts/cli_doc.py > docs/cli.md

tests/unit/docs/test_cli_doc.py requires the committed docs/cli.md to equal what this prints now.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import click
from click.testing import CliRunner

from turnbench.cli import main

WIDTH = 100  # help text is wrapped at this width whatever the terminal, so the page is the same everywhere


def commands(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command path, groups included, in the order the groups list them (the data flow)."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.commands[name]
        yield prefix + (name,)
        if isinstance(cmd, click.Group):
            yield from commands(cmd, prefix + (name,))


def help_text(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(main, [*path, "--help"], prog_name="turnbench", terminal_width=WIDTH,
                                max_content_width=WIDTH)
    if result.exit_code != 0:
        raise SystemExit(f"turnbench {' '.join(path)} --help exited {result.exit_code}: {result.output}")
    return result.output.rstrip() + "\n"


def render() -> str:
    out = ["# The command line",
           "",
           "Generated from every command's `--help` by `python scripts/cli_doc.py > docs/cli.md`; do not edit by hand.",
           "Exit codes and the one-line error format: README.md.",
           ""]
    paths = [()] + list(commands(main))
    out.append("Commands: " + ", ".join(f"`turnbench {' '.join(p)}`" for p in paths if p) + ".")
    out.append("")
    for path in paths:
        out.append(f"## turnbench {' '.join(path)}".rstrip())
        out.append("")
        out.append("```text")
        out.append(help_text(path).rstrip())
        out.append("```")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(render())
