"""Commands that write a corpus or a run for other tools: ``export beir``, ``export transcripts``, ``export run``."""

from __future__ import annotations

import click

from turnbench.api.cli_support import check_outputs
from turnbench.cli.base import handle_errors


@click.group("export")
def export_group() -> None:
    """Write a corpus or a run in a format other tools read."""


@export_group.command("beir")
@click.argument("corpus_dir", metavar="CORPUS", type=click.Path(path_type=str))
@click.option("--out", required=True, type=click.Path(path_type=str),
              help="New export directory (must not exist or be empty).")
@click.option("--max-words", default=200, show_default=True, type=click.IntRange(min=1),
              help="Most words in one passage: the same cut as `turnbench load --max-words`.")
@click.option("--pyserini", is_flag=True,
              help="Also write pyserini/: the passages as a JsonCollection (id, contents), its topics and qrels.")
@click.option("--publishable", is_flag=True,
              help="Refuse (exit 2) a corpus whose licence is not tier A (MeetingQA is B, imported transcripts C).")
@handle_errors
def export_beir_cmd(corpus_dir: str, out: str, max_words: int, pyserini: bool, publishable: bool) -> None:
    """Write CORPUS as a BEIR dataset: corpus.jsonl, queries.jsonl, qrels/test.tsv, plus passages.jsonl for
    `turnbench score` and a README (docs/export.md). Text is TSV-safe (each tab and line break one space); the exact
    text is kept as metadata.original_text."""
    from turnbench.api import export_beir

    check_outputs([("--out", out)], [corpus_dir])
    c = export_beir(corpus_dir, out, max_words=max_words, pyserini=pyserini, publishable=publishable)
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


@export_group.command("run")
@click.argument("source", metavar="SOURCE", type=click.Path(path_type=str))
@click.option("--format", "fmt", required=True, type=click.Choice(["ranx"]),
              help="ranx: {query id: {doc id: score}} JSON, what ranx's Run.from_file and BEIR's evaluator read.")
@click.option("--run", "which", type=click.Choice(["passages", "meetings", "raw"]), default=None,
              help="Of a results directory: passages (default; the run as scored, no ties), meetings, or raw (the "
                   "engine's own scores). A run directory or run file has raw scores only.")
@click.option("--out", required=True, type=click.Path(path_type=str), help="New JSON file (must not exist).")
@handle_errors
def export_run_cmd(source: str, fmt: str, which: str | None, out: str) -> None:
    """Write the run of SOURCE (a results directory, a `turnbench run` directory or a run file) as a run other
    tools read (docs/export.md); SOURCE is left as it was."""
    from turnbench.api import export_run

    check_outputs([("--out", out)], [source])
    w = export_run(source, out, run=which, fmt=fmt)
    tied = (f"; {w.tied_queries} queries tie on a score, which a reader breaks its own way (--run passages of a "
            "results directory never ties)") if w.tied_queries else ""
    click.echo(f"{w.documents} scores of {w.queries} queries from {w.source} -> {out}{tied}")
