"""``turnbench sweep``: a grid of chunkings on one stack, one table and one page (turnbench.pipeline.sweep)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from turnbench.api.cli_support import check_outputs
from turnbench.cli.base import handle_errors, note, say
from turnbench.cli.evaluate import sweep_options

if TYPE_CHECKING:
    from turnbench.api import BenchOptions


@click.command("sweep")
@click.option("--corpus", "corpus_dir", required=True, type=click.Path(file_okay=False), help="Corpus directory.")
@click.option("--max-words", "max_words_text", default="200", show_default=True,
              help="Passage sizes to load, comma separated, e.g. 50,100,200,400.")
@click.option("--overlap", "overlap_text", default="0", show_default=True,
              help="Overlaps (words shared within a speaker's run) to load with each size, e.g. 0,20.")
@click.option("--arm", "arms", multiple=True, help="A built-in retrieval arm (repeatable).")
@click.option("--arm-file", "arm_files", multiple=True, type=click.Path(dir_okay=False, path_type=str),
              help="Your own arm file (repeatable).")
@click.option("--rule", default=None,
              help="A decision rule fixed before the numbers, e.g. 'span:R@10 up on every class, lookup never "
                   "down': several arms compare each with the first in every cell; one arm compares each cell "
                   "with the first.")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="New directory: OUT/w<W>-o<O>/<arm>/ per cell, and sweep.json, sweep.md, sweep.html.")
@handle_errors
@sweep_options
def sweep_cmd(corpus_dir: str, max_words_text: str, overlap_text: str, arms: tuple[str, ...],
              arm_files: tuple[str, ...], rule: str | None, out: str, options: BenchOptions) -> None:
    """Load each chunking of a grid, run and score every arm on it against the same turn gold; one table."""
    from turnbench.api import sweep
    from turnbench.api.cli_support import settings
    from turnbench.cli.progress import progress_shown

    check_outputs([("--out", out)], [corpus_dir, *arm_files])
    tty = sys.stderr.isatty()
    with progress_shown(tty, verbose=settings.verbose()) as progress:
        swept = sweep(corpus_dir, arms, out, max_words=max_words_text, overlaps=overlap_text, arm_files=arm_files,
                      rule=rule, options=options, progress=progress, echo=None if tty else note)
    click.echo(swept.to_markdown(), nl=False)
    md, html, _ = swept.files
    say(f"wrote {out}/{md}, {out}/{html} and sweep.json; each cell's results in {out}/w<W>-o<O>/")
