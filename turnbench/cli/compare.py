"""Commands that read results: compare (verdicts and the gate) and report (one HTML page)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from turnbench.api.cli_support import check_outputs, errors
from turnbench.cli.base import handle_errors, say
from turnbench.cli.options import measure_option

_CORPUS_HELP = ("Corpus the results were scored on (repeatable, one per seed): every binding of the results of "
                "that corpus is checked against its text (exit 3 naming the first stale target), their judgements and "
                "gold are made again from it and their own passages.jsonl (exit 3 naming the first query that "
                "differs), and the report shows its texts. Without it, the report uses the corpus runinfo.json "
                "records, or shows no texts.")
_PUBLISHABLE_HELP = ("Refuse (exit 2) any results not measured on a tier A corpus: a MeetingQA (tier B, "
                     "non-commercial) or imported-transcripts (tier C) number never reaches a page meant for print.")


def _refuse_options(out: str | None, html_out: str | None, across_snapshots: bool, receipt_files: tuple[str, ...],
                    also: bool, corpus: bool) -> None:
    """compare's options that cannot go together, or name the wrong kind of file, refused before anything is read."""
    if out and Path(out).suffix in (".html", ".htm"):
        raise errors.BadInput(f"--out {out}: the markdown goes there; give a .md name (the HTML report is --html)")
    if html_out and Path(html_out).suffix not in (".html", ".htm"):
        raise errors.BadInput(f"--html {html_out}: the report is HTML; give a .html name")
    if receipt_files and not across_snapshots:
        raise errors.BadInput("--receipts is read across snapshots only: add --across-snapshots")
    if across_snapshots:
        given = [o for o, on in (("--also", also), ("--corpus", corpus), ("--html", bool(html_out))) if on]
        if given:
            raise errors.BadInput(f"--across-snapshots does not take {given[0]}: it compares two results directories "
                                  "on their comparable queries, without texts")


def _snapshot_options(command: Callable[..., None]) -> Callable[..., None]:
    """--across-snapshots and --receipts: two snapshots of one corpus compared on what stayed comparable."""
    command = click.option(
        "--receipts", "receipt_files", multiple=True, type=click.Path(dir_okay=False), metavar="FILE",
        help="A reannotation receipt (`turnbench reannotate`; repeatable) that makes its changed queries comparable; "
             "one that does not match the two snapshots is refused (exit 3). Only with --across-snapshots.")(command)
    return click.option(
        "--across-snapshots", is_flag=True,
        help="BASELINE and CANDIDATE were scored on two snapshots of one corpus: classify each query by its binding "
             "(unchanged, changed, deleted, added), compare the unchanged ones (and the changed ones a --receipts "
             "file vouches for) and list the rest as not comparable; every verdict says its paired denominator. Not "
             "with --also, --corpus or --html.")(command)


@click.command("compare")
@click.argument("baseline", type=click.Path(exists=True))
@click.argument("candidate", type=click.Path(exists=True))
@click.option("--gate", is_flag=True,
              help="Exit 4 when any gated row is worse after Holm's adjustment, or when the lookup guard finds a "
                   "lookup measure worse beyond noise (a lookup drop within noise is a warning).")
@click.option("--also", nargs=2, multiple=True, type=click.Path(exists=True), metavar="BASELINE CANDIDATE",
              help="The same two arms on another corpus (repeatable; e.g. a real corpus you imported): one Holm family "
                   "over every corpus, lookup guarded on each, a regression on any corpus fails the gate and a win "
                   "must hold on every one.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Also write the markdown here.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False), default=None,
              help="Also write the HTML report here (compare writes no file you did not name).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None,
              help="Also write every row (delta, interval, p-values, verdicts) and the gate's failures as JSON here.")
@click.option("--rule", "rule_file", type=click.Path(dir_okay=False), default=None,
              help="A decision file written before the candidate ran (clauses with margins, docs/gate.md): its verdict "
                   "is printed with the clause that decided it; exit 4 when it fails.")
@click.option("--resamples", type=click.IntRange(100, 1_000_000), default=10_000, show_default=True,
              help="Bootstrap resamples.")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=None,
              help="Bootstrap seed, 0 to 2^32-1 [default: the recorded 20261130].")
@click.option("--corpus", "corpus_dirs", multiple=True, type=click.Path(file_okay=False), help=_CORPUS_HELP)
@click.option("--publishable", is_flag=True, help=_PUBLISHABLE_HELP)
@_snapshot_options
@measure_option("Also compare an extra measure both sides recorded (scored with --measure), in a report-only block")
@click.option("--full", is_flag=True,
              help="Print every row (the markdown --out writes) instead of the summary: the headline measures per "
                   "class, answers EM, the verdict and where the files are, in 100 columns.")
@handle_errors
def compare_cmd(baseline: str, candidate: str, gate: bool, also: tuple[tuple[str, str], ...], out: str | None,
                html_out: str | None, json_out: str | None, rule_file: str | None, resamples: int, seed: int | None,
                corpus_dirs: tuple[str, ...], publishable: bool, across_snapshots: bool,
                receipt_files: tuple[str, ...], measures: tuple[str, ...], full: bool) -> None:
    """Compare two results directories (or two sets of seed-<S>/ directories, pooled): per class x measure,
    paired bootstrap interval, p-value, Holm-adjusted verdict. Prints a summary (--full: every row)."""
    from turnbench import api

    _refuse_options(out, html_out, across_snapshots, receipt_files, bool(also), bool(corpus_dirs))
    outputs = [(option, path) for option, path in (("--out", out), ("--html", html_out), ("--json", json_out))
               if path]
    check_outputs(outputs, [baseline, candidate, *corpus_dirs, *(p for pair in also for p in pair),
                            *([rule_file] if rule_file else []), *receipt_files])
    # texts are read (and their bindings checked) only for a page or when a corpus is named
    compared = api.compare(baseline, candidate, corpora=corpus_dirs, resamples=resamples, seed=seed, also=also,
                           texts=bool(html_out), publishable=publishable, across_snapshots=across_snapshots,
                           receipts=receipt_files, measures=measures)
    text = compared.to_markdown(gate=gate if gate else None)
    page = compared.to_html(gate=gate) if html_out else None
    document = compared.to_json()
    decision = None
    on = compared.denominator() if isinstance(compared, api.Compared) else None
    if rule_file:
        decision = api.decide(compared, rule_file)
        text += decision.to_markdown() + (f"\n(on {on} paired across snapshots)\n" if on else "")
        document = document | {"rule": decision.to_json()}
    if json_out:
        api.write_json(json_out, document)
    if out:
        api.write_text(out, text)
    if html_out and page is not None:
        api.write_bytes(html_out, page)
    if full:
        click.echo(text, nl=False)
    else:
        rule = None if decision is None else (str(rule_file), decision.decision.verdict, decision.decision.deciding)
        click.echo(compared.to_summary(gate=gate, rule=rule, markdown=out, page=html_out), nl=False)
        if on:
            click.echo(f"Across snapshots: every number above is on {on} paired; --full lists the rest by class.")
    written = [p for p in (out, html_out) if p]
    if written:
        say(f"wrote {' and '.join(written)}")
    failures = compared.gate_failures()
    if gate and failures:
        raise errors.GateFailed(f"{len(failures)} regression(s)" + (f" on {on} paired across snapshots" if on else "")
                                + f"; first: {failures[0]}")
    if decision is not None and not decision.passes:
        raise errors.GateFailed(f"the rule {rule_file} is {decision.decision.verdict}"
                                + (f" on {on} paired across snapshots" if on else "")
                                + f": {decision.decision.deciding}")


@click.command("reannotate")
@click.argument("baseline", type=click.Path(exists=True, file_okay=False))
@click.argument("candidate", type=click.Path(exists=True, file_okay=False))
@click.option("--query", "queries", multiple=True, required=True, metavar="ID",
              help="A query whose target changed between the snapshots, re-judged (repeatable).")
@click.option("--by", required=True, help="Who re-judged them, recorded as given.")
@click.option("--at", "at", required=True,
              help="When, as an ISO 8601 date or date and time (e.g. 2026-12-06), recorded as given: never the clock.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The receipt file to write (JSON).")
@handle_errors
def reannotate_cmd(baseline: str, candidate: str, queries: tuple[str, ...], by: str, at: str, out: str) -> None:
    """Write a reannotation receipt: the queries whose targets changed between BASELINE's snapshot of a corpus and
    CANDIDATE's were re-judged, and CANDIDATE's gold is their new gold. The receipt (both snapshots, each query's old
    and new binding digests, who, when and the new gold) is what `compare --across-snapshots --receipts` takes."""
    from turnbench import api

    check_outputs([("--out", out)], [baseline, candidate])
    data = api.reannotate(baseline, candidate, queries, by=by, at=at)
    api.write_bytes(out, data)
    click.echo(f"wrote {out} ({len(queries)} reannotated quer{'y' if len(queries) == 1 else 'ies'})")


@click.command("report")
@click.argument("results", type=click.Path(exists=True))
@click.option("--baseline", type=click.Path(exists=True), default=None,
              help="Draw RESULTS against this results directory (or set of seeds), as compare BASELINE RESULTS does.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@click.option("--corpus", "corpus_dirs", multiple=True, type=click.Path(file_okay=False), help=_CORPUS_HELP)
@click.option("--resamples", type=click.IntRange(100, 1_000_000), default=10_000, show_default=True,
              help="Bootstrap resamples (with a baseline).")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=None,
              help="Bootstrap seed, 0 to 2^32-1 [default: the recorded 20261130].")
@click.option("--publishable", is_flag=True, help=_PUBLISHABLE_HELP)
@handle_errors
def report_cmd(results: str, baseline: str | None, out: str, corpus_dirs: tuple[str, ...], resamples: int,
               seed: int | None, publishable: bool) -> None:
    """One self-contained HTML page (inline SVG, no script, no network) of RESULTS, or of RESULTS against
    --baseline: metrics, the forest plot of deltas, per-query deltas, the worst regressions with their texts,
    answers."""
    from turnbench import api

    if Path(out).suffix not in (".html", ".htm"):
        raise errors.BadInput(f"--out {out}: the report is HTML; give a .html name")
    check_outputs([("--out", out)], [results, *([baseline] if baseline else []), *corpus_dirs])
    page = api.report(results, baseline, corpora=corpus_dirs, resamples=resamples, seed=seed, publishable=publishable)
    api.write_bytes(out, page)
    click.echo(f"wrote {out} ({len(page):,} bytes)")


@click.command("plan")
@click.argument("pilot", type=click.Path(exists=True, file_okay=False))
@click.argument("candidate", required=False, type=click.Path(exists=True, file_okay=False))
@click.option("--delta", required=True, type=float, help="The loss to detect, e.g. 0.01 (nDCG@10 points).")
@click.option("--class", "cls", default="lookup", show_default=True, help="The class it is on.")
@click.option("--measure", default="nDCG@10", show_default=True, help="The measure it is in.")
@click.option("--power", default=0.8, show_default=True, type=float, help="The chance of finding it.")
@click.option("--check", "check_corpus", type=click.Path(exists=True, file_okay=False), default=None,
              help="A corpus generated at the planned size: say whether it asks enough questions (exit 1 if not).")
@handle_errors
def plan_cmd(pilot: str, candidate: str | None, delta: float, cls: str, measure: str, power: float,
             check_corpus: str | None) -> None:
    """How many questions, meetings or seeds a comparison needs to find a loss of --delta on --class with --power,
    from a pilot bench (PILOT) or, better, a pilot comparison (PILOT against CANDIDATE, a change of the kind to
    be judged)."""
    from turnbench.api import check_plan, plan

    p = plan(pilot, candidate, delta=delta, cls=cls, measure=measure, power=power)
    for line in p.lines():
        click.echo(line)
    if check_corpus:
        ok, line = check_plan(p, check_corpus)
        click.echo(line)
        if not ok:
            raise errors.CheckFailed(f"{check_corpus} asks too few {cls} questions for the plan")
