"""``turnbench sweep``: a grid of chunkings on one stack, one table and one page (turnbench.pipeline.sweep)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from turnbench import errors
from turnbench.cli.base import handle_errors, note, say
from turnbench.cli.evaluate import sweep_options
from turnbench.paths import check_outputs

if TYPE_CHECKING:
    from turnbench.pipeline.bench import BenchOptions


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
    from turnbench import settings
    from turnbench.cli.progress import progress_shown
    from turnbench.engines.arms import resolve
    from turnbench.harness import sweep as S
    from turnbench.pipeline.sweep import SWEEP_HTML, SWEEP_MD, grid, measures, parse_ints, sweep
    from turnbench.render.sweep import sweep_md

    check_outputs([("--out", out)], [corpus_dir, *arm_files])
    cells = grid(parse_ints(max_words_text, "--max-words"), parse_ints(overlap_text, "--overlap"))
    resolved = resolve(list(arms), [Path(f) for f in arm_files])
    if not resolved:
        raise errors.BadInput("give at least one --arm or --arm-file")
    if rule:
        S.parse_rule(rule, measures(), across_cells=len(resolved) == 1)  # refused before any stack starts
    if rule and len(resolved) == 1 and len(cells) == 1:
        raise errors.BadInput("a rule over one arm compares cells with the first: give at least two chunkings")
    tty = sys.stderr.isatty()
    with progress_shown(tty, verbose=settings.verbose()) as progress:
        doc = sweep(Path(corpus_dir), resolved, Path(out), cells, options, rule=rule, progress=progress,
                    echo=None if tty else note)
    click.echo(sweep_md(doc), nl=False)
    say(f"wrote {out}/{SWEEP_MD}, {out}/{SWEEP_HTML} and sweep.json; each cell's results in {out}/w<W>-o<O>/")
