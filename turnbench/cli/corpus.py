"""Commands for the corpus: generate, validate, import, self-measure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from turnbench.api.cli_support import check_outputs, errors
from turnbench.cli.base import handle_errors, say
from turnbench.cli.options import provider_option

if TYPE_CHECKING:
    from rich.table import Table

    from turnbench.api.measures import GraphRecall


@click.command("generate")
@click.option("--seed", type=int, default=None, help="Corpus seed (0..2147483647); default 20261130.")
@click.option("--meetings", type=int, default=None, help="Number of meetings (8..20000); default 200.")
@click.option("--words-per-meeting", type=int, default=None, help="Mean words per meeting (300..20000); default 3000.")
@click.option("--near-duplicate-rate", type=float, default=None,
              help="Share of a series' sessions that repeat its roster and agenda (0..1); default 0.25.")
@click.option("--register", default=None,
              help="How meetings sound: default, interactive (like QMSum's product meetings) or formal (like its "
                   "committee meetings); sets --words-per-meeting unless it is given.")
@click.option("--titles", type=click.Choice(["series", "opaque"]), default=None,
              help="series: titles name the series (\"Payments — design review #3\"); opaque: recordings named like "
                   "files (\"rec-2026-03-14-0930.m4a\"), as real recordings often are (R6 is asked of both: its "
                   "series say their name in every session). Default opaque.")
@click.option("--asr-wer", type=float, default=None,
              help="The ASR preset: free talk misrecognised at this word error rate (0..0.5; 0.18 is a reference "
                   "figure for conversational speech); default 0, none.")
@click.option("--asr-entity-accuracy", type=float, default=None,
              help="With --asr-wer: the share of names recognised right (0.5..1); default 0.82.")
@click.option("--from-manifest", "from_manifest", type=click.Path(dir_okay=False), default=None,
              help="Regenerate the corpus a manifest records (its seed and full config).")
@click.option("--allow-version-drift", is_flag=True,
              help="With --from-manifest: regenerate even if the generator or Faker version differs, and report "
                   "which files differ.")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Output directory (must not exist or be empty).")
@click.option("--workers", type=int, default=1, show_default=True,
              help="Render meetings in this many processes (output is identical).")
@handle_errors
def generate_cmd(seed: int | None, meetings: int | None, words_per_meeting: int | None,
                 near_duplicate_rate: float | None, register: str | None, titles: str | None, asr_wer: float | None,
                 asr_entity_accuracy: float | None, from_manifest: str | None, allow_version_drift: bool, out: str,
                 workers: int) -> None:
    """Generate a seeded synthetic meeting corpus (format v1) with its gold queries and facts."""
    from turnbench import api

    options: dict[str, Any] = {"seed": seed, "meetings": meetings, "words_per_meeting": words_per_meeting,
                               "near_duplicate_rate": near_duplicate_rate, "register": register, "titles": titles,
                               "asr_wer": asr_wer, "asr_entity_accuracy": asr_entity_accuracy}
    check_outputs([("--out", out)], [from_manifest] if from_manifest else [])
    if from_manifest is not None:
        given = [f"--{k.replace('_', '-')}" for k, v in options.items() if v is not None]
        if given:
            raise errors.BadInput(f"--from-manifest takes its config from the manifest; drop {', '.join(given)}")
        result = api.regenerate(from_manifest, out, workers=workers, allow_version_drift=allow_version_drift)
        manifest = result.manifest
        for d in result.drift:
            say(f"version drift: {d}")
    else:
        if allow_version_drift:
            raise errors.BadInput("--allow-version-drift only applies with --from-manifest")
        manifest = api.generate(out, workers=workers, **options).manifest
        result = None
    c = manifest["counts"]
    click.echo(f"{manifest['corpus_id']}: {c['meetings']} meetings, {c['turns']} turns, {c['words']} words, "
               f"{c['queries']} queries -> {out}")
    click.echo(f"corpus_sha256 {manifest['corpus_sha256']}")
    if result is not None:
        if not result.differing_files:
            click.echo(f"identical to {from_manifest}")
        else:
            click.echo(f"differs from {from_manifest} in {len(result.differing_files)} file(s): "
                       f"{', '.join(result.differing_files)}")


@click.command("validate")
@click.argument("corpus_dir", type=click.Path())
@click.option("--skip-cosine", is_flag=True,
              help="Leave out the surface_cosine check (it runs the encoder; the line says it was skipped).")
@handle_errors
def validate_cmd(corpus_dir: str, skip_cosine: bool) -> None:
    """Check a corpus: hashes first, then named checks that re-derive every gold item from the text, and (for a
    generated corpus) that every query surface is answerable from one passage by meaning (surface_cosine)."""
    from turnbench.api import failed_checks, validate

    results = validate(corpus_dir, surface_cosine=not skip_cosine)
    for r in results:
        click.echo(r.line())
    failed = failed_checks(results)
    if failed:
        raise errors.CheckFailed(f"{len(failed)} check(s) failed: {', '.join(failed)}")
    click.echo(f"all {sum(r.status == 'pass' for r in results)} applicable checks pass "
               f"({sum(r.status == 'n/a' for r in results)} n/a)")


@click.group("import")
def import_group() -> None:
    """Convert a published meeting corpus into corpus format v1."""


def _release_options(command: Any) -> Any:
    """--release and --allow-unverified, which both importers of a published corpus take."""
    command = click.option("--allow-unverified", is_flag=True,
                           help="Import sources that are not the release (edited, missing or extra files) anyway; "
                                "the corpus manifest records them unverified, with the reason.")(command)
    return click.option("--release", "release", type=click.Path(dir_okay=False, path_type=str), default=None,
                        help="A release manifest to verify the sources against instead of the one turnbench pins "
                             "(docs/formats.md).")(command)


@import_group.command("qmsum")
@click.argument("sources", metavar="SOURCE...", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--out", required=True, type=click.Path(path_type=str),
              help="New corpus directory (must not exist or be empty).")
@_release_options
@handle_errors
def import_qmsum_cmd(sources: tuple[str, ...], out: str, release: str | None, allow_unverified: bool) -> None:
    """Import QMSum JSONL files or per-meeting JSON directories (e.g. data/ALL) as a corpus."""
    from turnbench.api import import_qmsum

    check_outputs([("--out", out)], sources)
    manifest = import_qmsum(sources, out, release=release, allow_unverified=allow_unverified)
    c = manifest["counts"]
    refused = sum(c["queries_refused"].values())
    click.echo(
        f"{manifest['corpus_id']}: {c['meetings']} meetings {c['meetings_by_domain']}, {c['queries']} queries "
        f"{c['queries_by_class']}, refused {refused} {c['queries_refused']}, "
        f"deduplicated {c['queries_deduplicated']}, {_verified(manifest)} → {out}"
    )


def _verified(manifest: Any) -> str:
    r = manifest["producer"]["release"]
    return f"verified against {r['id']}" if r["verified"] else f"UNVERIFIED against {r['id']} ({r['reason']})"


@import_group.command("meetingqa")
@click.argument("sources", metavar="SOURCE...", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--out", required=True, type=click.Path(path_type=str),
              help="New corpus directory (must not exist or be empty).")
@_release_options
@handle_errors
def import_meetingqa_cmd(sources: tuple[str, ...], out: str, release: str | None, allow_unverified: bool) -> None:
    """Import MeetingQA (a checkout, its Annotated-AMI-QA directory, a split directory or meeting files) as a
    corpus of licence tier B; each question's own sentences are kept out of the transcript (docs/agreement.md)."""
    from turnbench.api import import_meetingqa

    manifest = import_meetingqa(sources, out, release=release, allow_unverified=allow_unverified)
    c = manifest["counts"]
    click.echo(
        f"{manifest['corpus_id']}: {c['meetings']} meetings {c['meetings_by_domain']}, {c['queries']} queries, "
        f"refused {sum(c['queries_refused'].values())} {c['queries_refused']}, {c['sentences_removed']} question "
        f"sentences kept out of the transcript ({c['answer_sentences_removed']} of them answer sentences), "
        f"{_verified(manifest)} → {out}"
    )


@import_group.command("transcripts")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=str))
@click.option("--out", required=True, type=click.Path(path_type=str),
              help="New corpus directory (must not exist or be empty).")
@handle_errors
def import_transcripts_cmd(directory: str, out: str) -> None:
    """Import a directory of transcripts (.vtt, .srt, .json; or an export's meetings/) as a corpus of meetings
    without questions, one meeting per file: for `turnbench measure --against`."""
    from turnbench.api import import_transcripts

    check_outputs([("--out", out)], [directory])
    manifest = import_transcripts(directory, out)
    c = manifest["counts"]
    click.echo(f"{manifest['corpus_id']}: {c['meetings']} meetings, {c['turns']} turns, {c['words']} words "
               f"{c['files_by_format']}, no questions → {out}")


@click.command("measure")
@click.argument("corpus_dir", metavar="DIR", type=click.Path(file_okay=False, path_type=str))
@click.option("--against", "against", metavar="OTHER", multiple=True,
              help="Another corpus (e.g. an imported QMSum) to set beside DIR, figure by figure and domain by "
                   "domain; repeatable. Nothing is written into it.")
@click.option("--hnsw", is_flag=True,
              help="Also build HNSW graphs of every corpus's passages on a stack (the load's mapping; all-MiniLM "
                   "vectors) and print recall@10 against exact search at ef_search 16, 40 and 100, in the load's "
                   "insertion order and in other orders (a graph's recall can hang on its order).")
@click.option("--orders", type=click.IntRange(1, 20), default=3, show_default=True,
              help="With --hnsw: graphs built per corpus, the load's order first.")
@provider_option("With --hnsw: the stack; auto uses a recorded running stack, else docker, else embedded.")
@handle_errors
def measure_cmd(corpus_dir: str, against: tuple[str, ...], hnsw: bool, orders: int, provider: str) -> None:
    """How hard a corpus is for BM25 with meetings as documents, and how much it sounds like real meetings;
    writes DIR/stats.json.

    Per class (and per domain when meetings carry one): recall@1, recall@10, median rank of the first
    gold meeting, and the near-duplicate competitor rate (other meetings scoring >= 90% of the best gold
    meeting). Per class and surface: the same with documents of turns only (no title), how many content
    words each query shares with its answer turns, and the encoder's cosine from question to evidence against
    random turns with a one-sided sign test. The share of each question's words its evidence holds, by class,
    beside every --against corpus's. With --against: words and speakers per meeting, turn lengths, backchannels,
    overlapping speech, query length, query-gold overlap and BM25 recall, side by side.
    """
    from rich.console import Console

    from turnbench.api import graph_recall, measure

    # every corpus is opened (hashes verified) before any work, so a bad --against stops before a long measure
    measured = measure(corpus_dir, against=against)
    console = Console(width=200)
    for table in measured.tables():
        console.print(table)
    click.echo(f"wrote {corpus_dir.rstrip('/')}/stats.json")
    if hnsw:
        console.print(_graph_recall_table(graph_recall(measured.corpora, orders=orders, provider=provider,
                                                       say=say)))


def _graph_recall_table(recalls: Sequence[GraphRecall]) -> Table:
    """Recall@10 of each corpus's HNSW graphs against exact search: a row per graph, a column per ef_search."""
    from rich.table import Table

    efs = [ef for ef, _ in recalls[0].graphs[0].recall] if recalls and recalls[0].graphs else []
    table = Table(title="HNSW recall@10 against exact search (m 16, ef_construction 100; k 10, ef_search e)",
                  caption="order: vectors inserted by sha256 of the passage id (0, the load's order) or of n and the "
                          "id; distinct: passages whose vector is the first of its kind")
    for heading in ("corpus", "passages", "distinct", "largest group", "order"):
        table.add_column(heading, justify="left" if heading == "corpus" else "right")
    for ef in efs:
        table.add_column(f"ef {ef}", justify="right")
    for r in recalls:
        for n, g in enumerate(r.graphs):
            head = (r.corpus_id, str(r.passages), f"{r.distinct_share:.3f}", str(r.largest_group)) if n == 0 else \
                ("", "", "", "")
            table.add_row(*head, str(g.order), *(f"{g.at(ef):.3f}" for ef in efs))
    return table
