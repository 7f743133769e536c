"""Commands that write a corpus for other tools: ``export beir``, ``export transcripts``."""

from __future__ import annotations

import click

from turnbench.api.cli_support import check_outputs
from turnbench.cli.base import handle_errors


@click.group("export")
def export_group() -> None:
    """Write a corpus in a format other tools read, scored back by `turnbench score`."""


@export_group.command("beir")
@click.argument("corpus_dir", metavar="CORPUS", type=click.Path(path_type=str))
@click.option("--out", required=True, type=click.Path(path_type=str),
              help="New export directory (must not exist or be empty).")
@click.option("--max-words", default=200, show_default=True, type=click.IntRange(min=1),
              help="Most words in one passage: the same cut as `turnbench load --max-words`.")
@handle_errors
def export_beir_cmd(corpus_dir: str, out: str, max_words: int) -> None:
    """Write CORPUS as a BEIR dataset: corpus.jsonl, queries.jsonl, qrels/test.tsv, plus passages.jsonl for
    `turnbench score` and a README (docs/export.md)."""
    from turnbench.api import export_beir

    check_outputs([("--out", out)], [corpus_dir])
    c = export_beir(corpus_dir, out, max_words=max_words)
    grades = ", ".join(f"{n} x {g}" for g, n in c.passage_qrels_by_grade.items())
    click.echo(f"{c.passages} passages of {c.meetings} meetings, {c.queries} queries ({c.queries_turn_level} "
               f"turn-level, {c.queries_meeting_level} meeting-level), {c.passage_qrels} passage qrels for "
               f"{c.queries_with_passage_qrels} queries (grades {grades}), {c.meeting_qrels} meeting qrels -> {out}")


@export_group.command("transcripts")
@click.argument("corpus_dir", metavar="CORPUS", type=click.Path(path_type=str))
@click.option("--format", "fmt", required=True, type=click.Choice(["webvtt", "srt", "json"]),
              help="webvtt: a cue per turn, the speaker as a voice span; srt: the speaker as a 'Speaker: ' prefix; "
                   "json: a segments list.")
@click.option("--out", required=True, type=click.Path(path_type=str),
              help="New export directory (must not exist or be empty).")
@handle_errors
def export_transcripts_cmd(corpus_dir: str, fmt: str, out: str) -> None:
    """Write CORPUS as transcripts a product ingests: meetings/<id>.vtt|.srt|.json with speakers and times, the
    questions without their gold (questions.jsonl) and transcripts.json (docs/export.md)."""
    from turnbench.api import export_transcripts

    check_outputs([("--out", out)], [corpus_dir])
    w = export_transcripts(corpus_dir, out, fmt)
    click.echo(f"{w.meetings} meetings ({w.turns} turns) as {fmt}, {w.questions} questions without gold -> {out}")
