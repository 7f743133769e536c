"""The ``turnbench`` command: a thin layer over the library.

This is the only module that turns exceptions into exit codes:
0 success · 1 a check failed · 2 bad input or usage · 3 refusal (a number could be wrong) · 4 gate failed.
Heavy imports stay inside the commands so ``turnbench --help`` is instant.
"""

from __future__ import annotations

import functools
import sys

import click

from turnbench import __version__, errors

EXIT_CODES = (
    # most specific first: the first matching class wins
    (errors.GateFailed, 4),
    (errors.Refusal, 3),
    (errors.BadInput, 2),
    (errors.TurnbenchError, 1),
)


def exit_code_for(exc: BaseException) -> int:
    for cls, code in EXIT_CODES:
        if isinstance(exc, cls):
            return code
    raise exc


def handle_errors(fn):
    """Print a library error as one line on stderr and exit with its code."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except errors.TurnbenchError as exc:
            code = exit_code_for(exc)
            click.echo(f"turnbench: {type(exc).__name__}: {exc}", err=True)
            sys.exit(code)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="turnbench")
def main() -> None:
    """Reproducible evaluation of meeting-transcript search."""


# -- commands are registered below, one section per stage --------------------------------------


# -- self-measure and adapters (generator/measure.py, corpus/qmsum.py) ----------------------------


@main.command("measure")
@click.argument("corpus_dir", metavar="DIR", type=click.Path(file_okay=False, path_type=str))
@handle_errors
def measure_cmd(corpus_dir: str) -> None:
    """How hard a corpus is for BM25 with meetings as documents; writes DIR/stats.json.

    Per class (and per domain when meetings carry one): recall@1, recall@10, median rank of the first
    gold meeting, and the near-duplicate competitor rate (other meetings scoring >= 90% of the best gold
    meeting).
    """
    from rich.console import Console

    from turnbench.generator.measure import render, write_stats

    stats = write_stats(corpus_dir)
    Console(width=160).print(render(stats))
    click.echo(f"wrote {corpus_dir.rstrip('/')}/stats.json")


@main.group("import")
def import_group() -> None:
    """Convert a published meeting corpus into corpus format v1."""


@import_group.command("qmsum")
@click.argument("sources", metavar="SOURCE...", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--out", required=True, type=click.Path(path_type=str), help="New corpus directory (must not exist or be empty).")
@handle_errors
def import_qmsum_cmd(sources: tuple[str, ...], out: str) -> None:
    """Import QMSum JSONL files or per-meeting JSON directories (e.g. data/ALL) as a corpus."""
    from turnbench.corpus.qmsum import import_qmsum

    manifest = import_qmsum(list(sources), out)
    c = manifest["counts"]
    refused = sum(c["queries_refused"].values())
    click.echo(
        f"{manifest['corpus_id']}: {c['meetings']} meetings {c['meetings_by_domain']}, {c['queries']} queries "
        f"{c['queries_by_class']}, refused {refused} {c['queries_refused']}, "
        f"deduplicated {c['queries_deduplicated']} → {out}"
    )
