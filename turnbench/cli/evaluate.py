"""Commands that produce and judge results: run, fuse, answer, score, bench, agreement."""

from __future__ import annotations

import functools
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

from turnbench.api.cli_support import DEFAULT_CONCURRENCY, MAX_CONCURRENCY, check_outputs, errors, vocab
from turnbench.cli.base import handle_errors, note, say
from turnbench.cli.options import (
    answerer_option,
    fusion_method_option,
    knn_engine_option,
    measure_option,
    provider_option,
    reload_option,
    scope_option,
)
from turnbench.cli.stack import image_choice, image_options, nodes_choice, nodes_option

if TYPE_CHECKING:
    from turnbench.api import BenchOptions

P = ParamSpec("P")
R = TypeVar("R")
# what harness.answers.AnswerPolicy credits a meeting-set answer with (tests/unit/cli/test_answer_options.py
# holds the two lists to each other)
SET_CREDITS = ("f1", "exact")


def _concurrency_option(fn: Callable[P, R]) -> Callable[P, R]:
    return click.option("--concurrency", type=click.IntRange(1, MAX_CONCURRENCY), default=DEFAULT_CONCURRENCY,
                        show_default=True, help="Threads sending the _msearch batches; the run is the same bytes at "
                                                "any concurrency.")(fn)


@click.command("run")
@click.option("--corpus", "corpus_dir", required=True, type=click.Path(path_type=str),
              help="Corpus directory (format v1), already loaded.")
@click.option("--arm", "arm_name", default=None, help="A built-in retrieval arm, e.g. bm25 or bm25-title.")
@click.option("--arm-file", "arm_file", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Your own arm file (TOML; see docs/arms.md) instead of a built-in arm.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=str),
              help="Directory for passages.jsonl, run.trec, run.jsonl, arm.json.")
@scope_option()
@click.option("--depth", type=click.IntRange(1, 10000), default=None,
              help="Passages per query (default: the arm's, 100).")
@click.option("--index", default=None,
              help="OpenSearch index the corpus was loaded into [default: turnbench-passages].")
@_concurrency_option
@handle_errors
def run_cmd(corpus_dir: str, arm_name: str | None, arm_file: str | None, out: str, scope: str, depth: int | None,
            index: str | None, concurrency: int) -> None:
    """Run one retrieval arm over a loaded corpus; write the passage inventory and the run."""
    from turnbench import api

    if (arm_name is None) == (arm_file is None):
        raise errors.BadInput("give one arm: --arm NAME (built-in) or --arm-file PATH")
    (arm,) = api.arms([arm_name] if arm_name else [], [arm_file] if arm_file else [])
    check_outputs([("--out", out)], [corpus_dir, *([arm_file] if arm_file else [])])
    written = api.write_run(out, corpus_dir, arm, scope=scope, index=index, depth=depth, concurrency=concurrency)
    result, names, corpus_id = written.result, written.files, written.corpus_id
    t = result.timings
    oracle = "  [ORACLE UPPER BOUND: gold meetings only]" if result.arm_config["scope"]["oracle"] else ""
    click.echo(f"{arm.name} on {corpus_id}: {int(t['queries'])} queries, {result.answered} with hits, "
               f"{t['queries_per_s']:.0f} queries/s{oracle}")
    click.echo(f"wrote {Path(out) / names[0]}, {', '.join(names[1:])}")


@click.command("answer")
@click.option("--corpus", "corpus_dir", required=True, type=click.Path(file_okay=False, path_type=str),
              help="Corpus directory (format v1), already loaded into the current stack.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=str),
              help="New directory for answers.md, answers.json and answers.jsonl.")
@answerer_option("reference: intent parser + exact aggregations; none: declines everything (the floor).",
                 skip=False)
@click.option("--tolerance", type=click.IntRange(min=0), default=0, show_default=True,
              help="Count tolerance for exact match (recorded in the results).")
@click.option("--set-credit", type=click.Choice(SET_CREDITS), default="f1", show_default=True,
              help="What a meeting-set answer is credited with: its set F1 (partial credit), or exact match.")
@click.option("--index", default=None,
              help="OpenSearch index the corpus was loaded into [default: turnbench-passages].")
@click.option("--answers", "answers_file", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Score another engine's answers.jsonl instead of answering (no stack needed).")
@handle_errors
def answer_cmd(corpus_dir: str, out: str, answerer: str, tolerance: int, set_credit: str, index: str | None,
               answers_file: str | None) -> None:
    """Answer a corpus's aggregation questions on the current stack and score them by exact match."""
    check_outputs([("--out", out)], [corpus_dir, *([answers_file] if answers_file else [])])
    from turnbench.api import answer

    answered = answer(corpus_dir, out, answerer=answerer, tolerance=tolerance, set_credit=set_credit, index=index,
                      answers=answers_file)
    for label, row in answered.grammar_rows():
        em = "–" if row.em is None else f"{row.em:.4f}"
        share = "–" if row.answered is None else f"{row.answered:.4f}"
        click.echo(f"{answered.answerer} on {answered.corpus_id}, {label}: {row.questions} questions, "
                   f"{row.declined} declined, EM {em}, answered {share}")
    click.echo(f"wrote {out}/answers.md, answers.json, answers.jsonl")




def _relevance_options(fn: Callable[P, R]) -> Callable[P, R]:
    fn = click.option("--relevance-answer", type=float, default=0.5, show_default=True,
                      help="Grade 3 needs at least this share of an answer turn's words.")(fn)
    fn = click.option("--binary-relevance", is_flag=True, help="Collapse grades 1-3 to 1.")(fn)
    fn = click.option("--relevance-low", type=float, default=0.0, show_default=True,
                      help="Coverage above this is grade 1.")(fn)
    fn = click.option("--relevance-high", type=float, default=0.5, show_default=True,
                      help="Coverage at or above this is grade 2.")(fn)
    return fn


_MEASURE_HELP = ("An extra measure to compute beside the headline ones, written to metrics.json's extra block and "
                 "a table of its own in metrics.md")


@click.command("score")
@click.option("--corpus", "corpus_dir", required=True, type=click.Path(file_okay=False), help="Corpus directory.")
@click.option("--passages", "passages_file", default=None, type=click.Path(dir_okay=False),
              help="The engine's passage inventory (passages.jsonl); with --run.")
@click.option("--run", "run_file", default=None, type=click.Path(dir_okay=False),
              help="The engine's run: six-column TREC, or run.jsonl; with --passages.")
@click.option("--hits", "hits_file", default=None, type=click.Path(dir_okay=False),
              help="Instead of --passages and --run: a product's hits, JSON lines {query, meeting, start, end[, "
                   "speaker][, text][, score]} in rank order, judged by the words their spans hold (docs/formats.md).")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="New results directory.")
@_relevance_options
@scope_option("What the run searched; gold-meetings is recorded as an ORACLE upper bound.")
@click.option("--arm-config", type=click.Path(dir_okay=False), default=None,
              help="JSON describing the engine or arm (e.g. the arm.json `turnbench run` writes); recorded verbatim. "
                   "Without it the arm is recorded as external/unknown.")
@measure_option(_MEASURE_HELP)
@handle_errors
def score_cmd(corpus_dir: str, passages_file: str | None, run_file: str | None, hits_file: str | None, out: str,
              relevance_high: float, relevance_low: float, binary_relevance: bool, relevance_answer: float, scope: str,
              arm_config: str | None, measures: tuple[str, ...]) -> None:
    """Score another engine's output (or ours): judge its passages, evaluate its run, write a results directory."""
    from turnbench import api

    if (hits_file is None) == (passages_file is None and run_file is None) or \
            (hits_file is None and (passages_file is None or run_file is None)):
        raise errors.BadInput("give --passages and --run, or --hits")
    inputs = [f for f in (passages_file, run_file, hits_file, arm_config) if f]
    check_outputs([("--out", out)], [corpus_dir, *inputs])
    policy = api.RelevancePolicy(relevance_high, relevance_low, binary_relevance, relevance_answer)
    results = (api.score_hits(corpus_dir, hits_file, out, policy=policy, scope=scope, arm_config=arm_config,
                              measures=measures)
               if hits_file else api.score_files(corpus_dir, str(passages_file), str(run_file), out, policy=policy,
                                                 scope=scope, arm_config=arm_config, measures=measures))
    click.echo(results.to_markdown(), nl=False)
    click.echo(f"wrote {out}/: metrics.json, metrics.md, report.html, the TREC qrels and runs, runinfo.json")


def _seeds(text: str | None) -> list[int]:
    if text is None:
        return []
    try:
        seeds = [int(part) for part in text.split(",")]
    except ValueError:
        raise errors.BadInput(f"--seeds {text!r}: give seeds as integers separated by commas, e.g. 1,2,3") from None
    if any(not 0 <= s <= 2_147_483_647 for s in seeds):
        raise errors.BadInput(f"--seeds {text!r}: a seed is 0..2147483647")
    return seeds


_cut_options = (
    click.option("--max-words", default=200, show_default=True, type=click.IntRange(1, 100_000),
                 help="Most words in one passage (as `turnbench load --max-words`)."),
    click.option("--overlap", default=0, show_default=True, type=click.IntRange(0, 99_999),
                 help="Words neighbouring passages of one speaker's run share (below --max-words)."),
)


_answer_scoring_options = (
    click.option("--tolerance", type=click.IntRange(min=0), default=0, show_default=True,
                 help="The answers' count tolerance for exact match (recorded in the results)."),
    click.option("--set-credit", type=click.Choice(SET_CREDITS), default="f1", show_default=True,
                 help="What a meeting-set answer is credited with: its set F1 (partial credit), or exact match."),
)


def bench_options(fn: Callable[..., R]) -> Callable[..., R]:
    """The options that shape a bench besides its corpus, arms and output, gathered into one ``BenchOptions`` and
    handed to the command as ``options`` (refused in one line when they do not go together)."""
    return _gathered(fn, cut=True)


def sweep_options(fn: Callable[..., R]) -> Callable[..., R]:
    """``bench_options`` less the cut (a sweep takes lists of sizes and overlaps) and the answerer."""
    return _gathered(fn, cut=False)


def _gathered(fn: Callable[..., R], *, cut: bool) -> Callable[..., R]:
    @functools.wraps(fn)
    def gathered(*, control_name: str | None, scope: str, provider: str, answerer: str, index: str | None,
                 opensearch_image: str | None, postgres_image: str | None, nodes: int | None, shards: int,
                 concurrency: int, knn_engine: str, relevance_high: float, relevance_low: float,
                 binary_relevance: bool, relevance_answer: float, reload: bool, graph_order: int, **rest: Any) -> R:
        from turnbench.api import BenchOptions, RelevancePolicy

        max_words, overlap = (rest.pop("max_words"), rest.pop("overlap")) if cut else (200, 0)
        tolerance, set_credit = (rest.pop("tolerance"), rest.pop("set_credit")) if cut else (0, "f1")
        measures = rest.pop("measures") if cut else ()
        options = BenchOptions(
            scope=vocab.ScopeName(scope), provider=vocab.ProviderName(provider), answerer=vocab.Answerer(answerer),
            tolerance=tolerance, set_credit=set_credit,
            policy=RelevancePolicy(relevance_high, relevance_low, binary_relevance, relevance_answer),
            control_name=control_name, max_words=max_words, overlap=overlap, index=index, shards=shards,
            concurrency=concurrency, knn_engine=vocab.KnnEngine(knn_engine), reload=reload,
            graph_order=graph_order, measures=measures,
            stack_options={**image_choice(opensearch_image, postgres_image, provider),
                           **nodes_choice(nodes, provider)})
        return fn(options=options, **rest)

    for option in reversed((
        click.option("--control-name", default=None, hidden=not cut,
                     help="Write the single arm's results to OUT/NAME/ (a named control)."),
        scope_option(),
        provider_option("Stack provider; auto uses a recorded running stack, else docker, else embedded."),
        answerer_option("Answer the aggregation questions too (answers.md); skip leaves them out.", skip=True)
        if cut else click.option("--answerer", hidden=True, default=vocab.Answerer.SKIP.value),
        *(_answer_scoring_options if cut else ()),
        click.option("--index", default=None, help="OpenSearch index to load into [default: turnbench-passages]."),
        reload_option,
        image_options,
        nodes_option,
        click.option("--shards", default=1, show_default=True, type=click.IntRange(1, 64),
                     help="Primary shards of the index (no replicas); lexical arms search several "
                          "shard-invariantly."),
        _concurrency_option,
        knn_engine_option("The k-NN engine of the vector field, when an arm needs one (faiss, nmslib: docker or "
                          "external)."),
        click.option("--graph-order", default=0, show_default=True, type=click.IntRange(0, 1_000_000),
                     help="Which reproducible HNSW graph approximate arms search: vectors inserted by sha256 of the "
                          "passage id (0) or of N and the id. A graph's recall can hang on its order "
                          "(docs/agreement.md): ask an approximate-search decision of several."),
        _relevance_options,
        *(_cut_options if cut else ()),
        *((measure_option(_MEASURE_HELP),) if cut else ()),
    )):
        gathered = option(gathered)
    return gathered


@click.command("bench")
@click.option("--corpus", "corpus_dir", default=None, type=click.Path(file_okay=False),
              help="Corpus directory (or --seeds).")
@click.option("--seeds", "seeds_text", default=None,
              help="Comma-separated seeds: generate the default corpus of each (into --corpora) and bench each; "
                   "results in OUT/<arm>/seed-<S>/, which compare pools.")
@click.option("--corpora", default="corpora", show_default=True, type=click.Path(file_okay=False),
              help="With --seeds: where each seed's corpus lives (CORPORA/seed-<S>, reused when it is that corpus).")
@click.option("--workers", type=int, default=2, show_default=True,
              help="With --seeds: processes that render a corpus (1..64).")
@click.option("--arm", "arms", multiple=True, help="A built-in retrieval arm to bench (repeatable), e.g. bm25.")
@click.option("--arm-file", "arm_files", multiple=True, type=click.Path(dir_okay=False, path_type=str),
              help="Your own arm file to bench (repeatable; TOML, see docs/arms.md).")
@click.option("--engine", "engines", multiple=True, metavar="MODULE:FACTORY",
              help="A Python engine to bench in-process on the same passages (repeatable; MODULE:FACTORY or "
                   "FILE.py:FACTORY, see docs/engines.md), e.g. turnbench.engines.examples.pg_fulltext:engine.")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Parent directory: results go to OUT/<arm>/ (or OUT/<control-name>/).")
@click.option("--full", is_flag=True,
              help="Print the full tables (metrics.md) instead of the summary: the headline measures per class, "
                   "answers EM and where the files are, in 100 columns.")
@handle_errors
@bench_options
def bench_cmd(corpus_dir: str | None, seeds_text: str | None, corpora: str, workers: int, arms: tuple[str, ...],
              arm_files: tuple[str, ...], engines: tuple[str, ...], out: str, full: bool,
              options: BenchOptions) -> None:
    """Stack -> load -> run -> judge -> score -> report -> write, for each arm or engine (and each seed); prints a
    summary (--full: the tables)."""
    from turnbench import api
    from turnbench.api.cli_support import settings
    from turnbench.cli.progress import progress_shown

    seeds = _seeds(seeds_text)
    if (corpus_dir is None) == (not seeds):
        raise errors.BadInput("give exactly one of --corpus DIR and --seeds S1,S2,...")
    if not 1 <= workers <= 64:
        raise errors.BadInput(f"--workers {workers}: give 1 to 64 processes")
    check_outputs([("--out", out)], [*([corpus_dir] if corpus_dir else []), *arm_files])
    resolved = api.arms(arms, arm_files)  # a bad arm file is refused before any stack starts
    tty = sys.stderr.isatty()
    echo = None if tty else note
    with progress_shown(tty, verbose=settings.verbose()) as progress:
        if seeds:
            outcomes = api.bench_seeds(seeds, resolved, out, options, corpora=corpora, workers=workers,
                                       progress=progress, echo=echo, engines=engines)
        else:
            outcomes = api.bench_outcomes(str(corpus_dir), resolved, out, options, progress=progress, echo=echo,
                                          engines=engines)
    for i, o in enumerate(outcomes):
        results = api.Results(o.results, o.out_dir)
        if not full:  # a blank line between arms
            click.echo(("\n" if i else "") + results.to_summary(), nl=False)
            continue
        click.echo(f"## {o.out_dir.relative_to(out)} (arm {o.arm})\n")
        click.echo(results.to_markdown())
        answers = results.record.answers
        row = answers.overall if answers is not None else None
        if answers is not None and row is not None:
            em = "–" if row.em is None else f"{row.em:.4f}"
            click.echo(f"answers ({answers.answerer}): {row.questions} questions, "
                       f"{row.declined} declined, EM {em}\n")
        click.echo(f"wrote {o.out_dir}/")
    if outcomes:
        stages = outcomes[0].stages
        # in 100 columns, as the summary above it: a line per few stages
        say("\n  ".join(textwrap.wrap("stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items())
                                      + f"; total {sum(stages.values()):.1f} s", width=98, break_long_words=False,
                                      break_on_hyphens=False)))


@click.command("fuse")
@click.argument("runs", metavar="RUN...", nargs=-1, required=True, type=click.Path(exists=True, path_type=str))
@fusion_method_option("rrf: reciprocal rank fusion; minmax: per-query min-max scores, weighted sum.")
@click.option("--k", "rank_constant", type=click.IntRange(min=1), default=60, show_default=True,
              help="rrf: the rank constant.")
@click.option("--weights", default=None, help="minmax: one weight per run, comma separated [default: equal].")
@click.option("--depth", type=click.IntRange(1, 10000), default=100, show_default=True,
              help="Passages kept per query.")
@click.option("--passages", "passages_file", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="The inventory the runs rank (when the runs are files, not run directories).")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=str),
              help="New directory for passages.jsonl, run.jsonl, run.trec and fuse.json.")
@handle_errors
def fuse_cmd(runs: tuple[str, ...], method: str, rank_constant: int, weights: str | None, depth: int,
             passages_file: str | None, out: str) -> None:
    """Fuse two or more runs of the same queries (ours or another team's) into one run directory; score it with
    `turnbench score --passages OUT/passages.jsonl --run OUT/run.trec`."""
    from turnbench.api import fuse

    check_outputs([("--out", out)], [*runs, *([passages_file] if passages_file else [])])
    try:
        parsed = tuple(float(w) for w in weights.split(",")) if weights else ()
    except ValueError:
        raise errors.BadInput(f"--weights {weights!r} is not a comma-separated list of numbers") from None
    names = fuse(runs, out, method=method, k=rank_constant, weights=parsed, depth=depth, passages=passages_file)
    click.echo(f"fused {len(runs)} runs by {method} into {Path(out) / names[0]}, {', '.join(names[1:])}")


@click.command("agreement")
@click.argument("results", metavar="RESULTS...", nargs=-1, required=True, type=click.Path(exists=True, path_type=str))
@click.option("--out", type=click.Path(dir_okay=False, path_type=str), default=None, help="Also write the markdown.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Also write every cell as JSON.")
@click.option("--resample", "unit", type=click.Choice(["queries", "meetings"]), default="queries", show_default=True,
              help="What the bootstrap draws: queries, or meetings (each query with its first gold meeting, from the "
                   "results' qrels.meetings.txt).")
@click.option("--resamples", type=click.IntRange(100, 100_000), default=1000, show_default=True,
              help="Bootstrap resamples of each corpus.")
@click.option("--decisions", "decisions_file", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="A decisions file (arms/decisions/decisions.toml): instead of tau-b, each decision's verdict on "
                   "the synthetic corpus and on every other corpus of RESULTS, and whether they agree.")
@click.option("--synthetic", default=None, metavar="CORPUS_ID",
              help="--decisions: the synthetic corpus's id [default: the one corpus turnbench's generator made].")
@handle_errors
def agreement_cmd(results: tuple[str, ...], out: str | None, json_out: str | None, unit: str, resamples: int,
                  decisions_file: str | None, synthetic: str | None) -> None:
    """Do two corpora rank the same arms alike? Per class and measure: both orderings (ties as ties), Kendall's tau-b
    with a bootstrap interval, inert arms apart, and the pairs both corpora tell apart in opposite directions. With
    --decisions: does the synthetic corpus give each decision (a pair of arms) the verdict a real corpus gives?"""
    from turnbench import api

    outputs = [*([("--out", out)] if out else []), *([("--json", json_out)] if json_out else [])]
    check_outputs(outputs, [*results, *([decisions_file] if decisions_file else [])])
    if decisions_file is None:
        if synthetic is not None:
            raise errors.BadInput("--synthetic names the synthetic corpus of --decisions; give --decisions FILE")
    else:
        _decisions(results, Path(decisions_file), out, json_out, unit, resamples, synthetic)
        return
    found = api.agreement(results, unit=unit, resamples=resamples)
    text = found.to_markdown()
    if out:
        api.write_text(out, text)
    if json_out:
        api.write_json(json_out, found.to_json())
    click.echo(text, nl=False)


def _decisions(results: tuple[str, ...], path: Path, out: str | None, json_out: str | None, unit: str,
               resamples: int, synthetic: str | None) -> None:
    """agreement --decisions: the verdict table against each real corpus."""
    from turnbench import api

    if unit != "queries":
        raise errors.BadInput("--decisions resamples questions (a decision's paired bootstrap); --resample meetings "
                              "does not apply")
    found = api.agreement_decisions(results, path, resamples=resamples, synthetic=synthetic)
    text = found.to_markdown()
    if out:
        api.write_text(out, text)
    if json_out:
        api.write_json(json_out, found.to_json())
    click.echo(text, nl=False)

