"""The ``turnbench`` command: a thin layer over the library, its sections in the order of the data flow.

This is the only module that turns exceptions into exit codes:
0 success · 1 a check failed · 2 bad input or usage · 3 refusal (a number could be wrong) · 4 gate failed.
Heavy imports stay inside the commands so ``turnbench --help`` is instant.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click

from turnbench import __version__, errors

EXIT_CODES = (
    # most specific first: the first matching class wins
    (errors.GateFailed, 4),
    (errors.Refusal, 3),
    (errors.BadInput, 2),
    (errors.TurnbenchError, 1),
)

P = ParamSpec("P")
R = TypeVar("R")


def exit_code_for(exc: errors.TurnbenchError) -> int:
    return next(code for cls, code in EXIT_CODES if isinstance(exc, cls))


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Print a library error as one line on stderr and exit with its code."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except errors.TurnbenchError as exc:
            click.echo(f"turnbench: {type(exc).__name__}: {exc}", err=True)
            sys.exit(exit_code_for(exc))

    return wrapper


def _say(line: str) -> None:
    click.echo(line, err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="turnbench")
def main() -> None:
    """Reproducible evaluation of meeting-transcript search."""


# -- corpus: generate, validate, import, self-measure ---------------------------------------------------------


@main.command("generate")
@click.option("--seed", type=int, default=None, help="Corpus seed (0..2147483647); default 20261130.")
@click.option("--meetings", type=int, default=None, help="Number of meetings (8..20000); default 200.")
@click.option("--words-per-meeting", type=int, default=None, help="Mean words per meeting (300..20000); default 3000.")
@click.option("--near-duplicate-rate", type=float, default=None,
              help="Share of a series' sessions that repeat its roster and agenda (0..1); default 0.25.")
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
                 near_duplicate_rate: float | None, from_manifest: str | None, allow_version_drift: bool, out: str,
                 workers: int) -> None:
    """Generate a seeded synthetic meeting corpus (format v1) with its gold queries and facts."""
    from turnbench.generator import generate as gen

    options = {"seed": seed, "meetings": meetings, "words_per_meeting": words_per_meeting,
               "near_duplicate_rate": near_duplicate_rate}
    if from_manifest is not None:
        given = [f"--{k.replace('_', '-')}" for k, v in options.items() if v is not None]
        if given:
            raise errors.BadInput(f"--from-manifest takes its config from the manifest; drop {', '.join(given)}")
        result = gen.regenerate(from_manifest, Path(out), workers=workers, allow_version_drift=allow_version_drift)
        manifest = result.manifest
        for d in result.drift:
            _say(f"version drift: {d}")
    else:
        if allow_version_drift:
            raise errors.BadInput("--allow-version-drift only applies with --from-manifest")
        from turnbench.generator.config import GeneratorConfig

        cfg = GeneratorConfig(**{k: v for k, v in options.items() if v is not None})
        manifest = gen.generate(cfg, Path(out), workers=workers)
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


@main.command("validate")
@click.argument("corpus_dir", type=click.Path())
@handle_errors
def validate_cmd(corpus_dir: str) -> None:
    """Check a corpus: hashes first, then named checks that re-derive every gold item from the text."""
    from turnbench.generator.validate import failures, validate_corpus

    results = validate_corpus(Path(corpus_dir))
    for r in results:
        click.echo(r.line())
    failed = failures(results)
    if failed:
        raise errors.CheckFailed(f"{len(failed)} check(s) failed: {', '.join(failed)}")
    click.echo(f"all {sum(r.status == 'pass' for r in results)} applicable checks pass "
               f"({sum(r.status == 'n/a' for r in results)} n/a)")


@main.group("import")
def import_group() -> None:
    """Convert a published meeting corpus into corpus format v1."""


@import_group.command("qmsum")
@click.argument("sources", metavar="SOURCE...", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--out", required=True, type=click.Path(path_type=str),
              help="New corpus directory (must not exist or be empty).")
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

    stats = write_stats(Path(corpus_dir))
    Console(width=160).print(render(stats))
    click.echo(f"wrote {corpus_dir.rstrip('/')}/stats.json")


# -- stack: up | status | down, and the jars the embedded provider runs -------------------------------------


@main.group("stack")
def stack_group() -> None:
    """Start, inspect and stop the OpenSearch + PostgreSQL stack (state in .turnbench/stack.json)."""


@stack_group.command("up")
@click.option("--provider", type=click.Choice(["auto", "embedded", "docker", "external"]), default="auto",
              show_default=True, help="auto: docker when an engine answers, else embedded.")
@click.option("--heap", default=None, help="OpenSearch heap, e.g. 1g [default: 1g or $TURNBENCH_OPENSEARCH_HEAP].")
@click.option("--timeout", type=float, default=180.0, show_default=True, help="Seconds to wait for health.")
@click.option("--opensearch-port", type=int, default=None, help="embedded: HTTP port [default: a free one].")
@click.option("--postgres-port", type=int, default=None, help="embedded: PostgreSQL port [default: a free one].")
@click.option("--opensearch-url", default=None, help="external: the OpenSearch endpoint.")
@click.option("--postgres-dsn", default=None, help="external: the PostgreSQL DSN.")
@handle_errors
def stack_up(provider: str, heap: str | None, timeout: float, opensearch_port: int | None,
             postgres_port: int | None, opensearch_url: str | None, postgres_dsn: str | None) -> None:
    """Start a stack in the background, wait until healthy, and record it."""
    from turnbench import canonical
    from turnbench.stack import lifecycle, state

    if opensearch_url or postgres_dsn:
        options: dict[str, Any] = {"opensearch_url": opensearch_url, "postgres_dsn": postgres_dsn}
    else:
        given = {"heap": heap, "timeout": timeout, "opensearch_port": opensearch_port, "postgres_port": postgres_port}
        options = {k: v for k, v in given.items() if v is not None}
    try:
        info = lifecycle.up(provider, echo=_say, **options)
    except errors.StackStartError as exc:
        for line in exc.log_tail:
            _say(f"  | {line}")
        raise
    click.echo(canonical.pretty(info.to_json()).decode(), nl=False)
    _say(f"turnbench: {info.provider} stack up in {info.details.get('up_s')} s, recorded in "
         f"{state.state_path()}; stop it with `turnbench stack down`")


@stack_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: provider, endpoints, versions, details.")
@handle_errors
def stack_status(as_json: bool) -> None:
    """Show the recorded stack; exit 1 when none is recorded or it does not answer."""
    from turnbench import canonical
    from turnbench.stack import lifecycle

    try:
        info = lifecycle.status()
    except errors.StackStateError as exc:
        raise errors.CheckFailed(str(exc)) from None
    if as_json:
        click.echo(canonical.dumps(info.to_json()))
        return
    click.echo(f"provider     {info.provider}")
    click.echo(f"opensearch   {info.opensearch_url}  "
               f"(OpenSearch {info.opensearch_version}, Lucene {info.lucene_version})")
    click.echo(f"postgresql   {info.postgres_dsn}  (PostgreSQL {info.postgres_version})")
    for proc in info.details.get("processes", []):
        click.echo(f"process      {proc['name']} pid {proc['pid']}")
    for cid in info.details.get("containers", []):
        click.echo(f"container    {cid}")


@stack_group.command("down")
@handle_errors
def stack_down() -> None:
    """Stop exactly the recorded stack (by process or container id) and forget it."""
    import time

    from turnbench.stack import lifecycle

    t0 = time.monotonic()
    stopped = lifecycle.down()
    if stopped is None:
        _say("turnbench: no stack recorded; nothing to stop")
        return
    _say(f"turnbench: {stopped.provider} stack stopped in {time.monotonic() - t0:.2f} s")


@main.command("jars")
@handle_errors
def jars_cmd() -> None:
    """Fetch the pinned OpenSearch jars into the user cache (once) and compile the embedded node's launcher."""
    from turnbench.stack import jars, pins

    launcher = jars.prepare()
    n_jars = sum(1 for p in launcher.classpath if p.suffix == ".jar")
    how = "fetched with Maven" if launcher.fetched else "already cached"
    click.echo(f"turnbench: OpenSearch {pins.OPENSEARCH_VERSION}: {n_jars} jars {how} in {launcher.cache_root / 'lib'}")
    click.echo(f"turnbench: launcher compiled in {launcher.classpath[0]} (Java {launcher.java.version})")


# -- load, run, answer ---------------------------------------------------------------------------------------


@main.command("load")
@click.option("--corpus", "corpus_dir", required=True, type=click.Path(path_type=str),
              help="Corpus directory (format v1).")
@click.option("--max-words", default=200, show_default=True, type=click.IntRange(min=1),
              help="Most words in one passage.")
@click.option("--index", default=None, help="OpenSearch index to (re)create [default: turnbench-passages].")
@handle_errors
def load_cmd(corpus_dir: str, max_words: int, index: str | None) -> None:
    """Load a corpus into the current stack: PostgreSQL tables, OpenSearch passages, settled.

    Refuses (exit 3) a corpus whose files do not match its manifest, an index or schema turnbench did
    not create, and an index that does not settle at the expected counts.
    """
    from turnbench.corpus.format import open_corpus
    from turnbench.stack import current_stack
    from turnbench.stack.index import DEFAULT_INDEX
    from turnbench.stack.load import load_corpus

    index = index or DEFAULT_INDEX
    corpus = open_corpus(Path(corpus_dir))
    result = load_corpus(current_stack(), corpus, max_words=max_words, index=index)
    p, t = result.provenance, result.timings
    click.echo(
        f"loaded {corpus.id}: {p['meetings']} meetings, {p['segments']} segments, {p['passages']} passages "
        f"(max {max_words} words) into {index!r}; settled in {int(t['settle_reads'])} reads"
    )
    click.echo(
        f"OpenSearch {p['opensearch_version']} (Lucene {p['lucene_version']}), PostgreSQL {p['postgres_version']}; "
        f"passages sha256 {result.passages_sha256}"
    )
    click.echo(
        f"time {t['total_s']:.2f} s: postgres {t['postgres_s']:.2f}, chunk {t['chunk_s']:.2f}, "
        f"bulk {t['bulk_s']:.2f}, force-merge {t['force_merge_s']:.2f}, settle {t['settle_s']:.2f}"
    )


@main.command("run")
@click.option("--corpus", "corpus_dir", required=True, type=click.Path(path_type=str),
              help="Corpus directory (format v1), already loaded.")
@click.option("--arm", "arm_name", required=True, help="Retrieval arm, e.g. bm25 or bm25-title.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=str),
              help="Directory for passages.jsonl, run.trec, run.jsonl, arm.json.")
@click.option("--scope", type=click.Choice(["corpus", "gold-meetings"]), default="corpus", show_default=True,
              help="gold-meetings is an ORACLE upper bound: each query searches only its gold meetings.")
@click.option("--depth", type=click.IntRange(1, 10000), default=None,
              help="Passages per query (default: the arm's, 100).")
@click.option("--index", default=None,
              help="OpenSearch index the corpus was loaded into [default: turnbench-passages].")
@handle_errors
def run_cmd(corpus_dir: str, arm_name: str, out: str, scope: str, depth: int | None, index: str | None) -> None:
    """Run one retrieval arm over a loaded corpus; write the passage inventory and the run."""
    from turnbench.corpus.format import open_corpus
    from turnbench.engines.retrieval import get_arm, run_arm
    from turnbench.pipeline import write_run
    from turnbench.stack import current_stack

    arm = get_arm(arm_name)
    corpus = open_corpus(Path(corpus_dir))
    result = run_arm(current_stack(), corpus, arm, scope=scope, index=index, depth=depth)
    names = write_run(Path(out), result)
    t = result.timings
    oracle = "  [ORACLE UPPER BOUND: gold meetings only]" if result.arm_config["scope"]["oracle"] else ""
    click.echo(f"{arm.name} on {corpus.id}: {int(t['queries'])} queries, {len(result.run)} with hits, "
               f"{t['queries_per_s']:.0f} queries/s{oracle}")
    click.echo(f"wrote {Path(out) / names[0]}, {', '.join(names[1:])}")


@main.command("answer")
@click.option("--corpus", "corpus_dir", required=True, type=click.Path(file_okay=False, path_type=str),
              help="Corpus directory (format v1), already loaded into the current stack.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=str),
              help="New directory for answers.md, answers.json and answers.jsonl.")
@click.option("--answerer", type=click.Choice(["reference", "none"]), default="reference", show_default=True,
              help="reference: intent parser + exact aggregations; none: declines everything (the floor).")
@click.option("--tolerance", type=click.IntRange(min=0), default=0, show_default=True,
              help="Count tolerance for exact match (recorded in the results).")
@click.option("--index", default=None,
              help="OpenSearch index the corpus was loaded into [default: turnbench-passages].")
@click.option("--answers", "answers_file", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Score another engine's answers.jsonl instead of answering (no stack needed).")
@handle_errors
def answer_cmd(corpus_dir: str, out: str, answerer: str, tolerance: int, index: str | None,
               answers_file: str | None) -> None:
    """Answer a corpus's aggregation questions on the current stack and score them by exact match."""
    from turnbench.corpus.format import open_corpus
    from turnbench.harness.answers import GRAMMAR_LABELS, score_answers, write_answer_results
    from turnbench.pipeline import answer, answer_provenance
    from turnbench.stack import current_stack
    from turnbench.submissions import read_answers

    corpus = open_corpus(Path(corpus_dir))
    if answers_file is not None:
        answerer = "external"
        submitted = read_answers(Path(answers_file))
        results = score_answers(corpus.queries(), submitted, tolerance=tolerance, corpus=corpus.id,
                                answerer=answerer)
        stack = None
    else:
        stack = current_stack() if answerer == "reference" else None
        results, submitted = answer(stack, corpus, answerer=answerer, tolerance=tolerance, index=index)
    write_answer_results(Path(out), results, submitted, answer_provenance(corpus, stack, answerer, index))
    for row in results.grammar_rows():
        em = "–" if row.em is None else f"{row.em:.4f}"
        answered = "–" if row.answered is None else f"{row.answered:.4f}"
        click.echo(f"{answerer} on {corpus.id}, {GRAMMAR_LABELS[row.grammar]}: {row.questions} questions, "
                   f"{row.declined} declined, EM {em}, answered {answered}")
    click.echo(f"wrote {out}/answers.md, answers.json, answers.jsonl")


# -- score, bench, compare -----------------------------------------------------------------------------------


def _relevance_options(fn: Callable[P, R]) -> Callable[P, R]:
    fn = click.option("--binary-relevance", is_flag=True, help="Collapse grades 1-3 to 1.")(fn)
    fn = click.option("--relevance-low", type=float, default=0.0, show_default=True,
                      help="Coverage above this is grade 1.")(fn)
    fn = click.option("--relevance-high", type=float, default=0.5, show_default=True,
                      help="Coverage at or above this is grade 2.")(fn)
    return fn


@main.command("score")
@click.option("--corpus", "corpus_dir", required=True, type=click.Path(file_okay=False), help="Corpus directory.")
@click.option("--passages", "passages_file", required=True, type=click.Path(dir_okay=False),
              help="The engine's passage inventory (passages.jsonl).")
@click.option("--run", "run_file", required=True, type=click.Path(dir_okay=False),
              help="The engine's run: six-column TREC, or run.jsonl.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="New results directory.")
@_relevance_options
@click.option("--scope", type=click.Choice(["corpus", "gold-meetings"]), default="corpus", show_default=True,
              help="What the run searched; gold-meetings is recorded as an ORACLE upper bound.")
@click.option("--arm-config", type=click.Path(dir_okay=False), default=None,
              help="JSON describing the engine or arm (e.g. the arm.json `turnbench run` writes); recorded verbatim. "
                   "Without it the arm is recorded as external/unknown.")
@handle_errors
def score_cmd(corpus_dir: str, passages_file: str, run_file: str, out: str, relevance_high: float,
              relevance_low: float, binary_relevance: bool, scope: str, arm_config: str | None) -> None:
    """Score another engine's output (or ours): judge its passages, evaluate its run, write a results directory."""
    from turnbench.harness.judgements import RelevancePolicy
    from turnbench.harness.report import render_metrics_md
    from turnbench.harness.score import score_files

    policy = RelevancePolicy(relevance_high, relevance_low, binary_relevance)
    results = score_files(Path(corpus_dir), Path(passages_file), Path(run_file), Path(out), policy=policy,
                          scope=scope, arm_config=Path(arm_config) if arm_config else None)
    click.echo(render_metrics_md(results.document), nl=False)
    click.echo(f"wrote {out}/metrics.json, metrics.md, runinfo.json")


@main.command("bench")
@click.option("--corpus", "corpus_dir", required=True, type=click.Path(file_okay=False), help="Corpus directory.")
@click.option("--arm", "arms", multiple=True, required=True, help="Retrieval arm to bench (repeatable), e.g. bm25.")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Parent directory: results go to OUT/<arm>/ (or OUT/<control-name>/).")
@click.option("--control-name", default=None, help="Write the single arm's results to OUT/NAME/ (a named control).")
@click.option("--scope", type=click.Choice(["corpus", "gold-meetings"]), default="corpus", show_default=True,
              help="gold-meetings is an ORACLE upper bound: each query searches only its gold meetings.")
@click.option("--provider", type=click.Choice(["auto", "embedded", "docker", "external"]), default="auto",
              show_default=True, help="Stack provider; auto uses a recorded running stack, else docker, else embedded.")
@click.option("--answerer", type=click.Choice(["reference", "none", "skip"]), default="reference", show_default=True,
              help="Answer the aggregation questions too (answers.md); skip leaves them out.")
@click.option("--index", default=None, help="OpenSearch index to load into [default: turnbench-passages].")
@_relevance_options
@handle_errors
def bench_cmd(corpus_dir: str, arms: tuple[str, ...], out: str, control_name: str | None, scope: str,
              provider: str, answerer: str, index: str | None, relevance_high: float, relevance_low: float,
              binary_relevance: bool) -> None:
    """Stack -> load -> run -> judge -> score -> write, for each arm; prints the metric tables."""
    from turnbench.harness.answers import overall_row
    from turnbench.harness.judgements import RelevancePolicy
    from turnbench.harness.report import render_metrics_md
    from turnbench.pipeline import bench

    policy = RelevancePolicy(relevance_high, relevance_low, binary_relevance)
    tty = sys.stderr.isatty()
    outcomes = bench(Path(corpus_dir), list(arms), Path(out), scope=scope, control_name=control_name,
                     provider=provider, answerer=answerer, policy=policy, show_progress=tty, index=index,
                     echo=None if tty else _say)
    for o in outcomes:
        click.echo(f"## {o.name} (arm {o.arm})\n")
        click.echo(render_metrics_md(o.results.document))
        answers = o.results.document.get("answers")
        if answers is not None:
            row = overall_row(answers)
            em = "–" if row["em"] is None else f"{row['em']:.4f}"
            click.echo(f"answers ({answers['answerer']}): {row['questions']} questions, "
                       f"{row['declined']} declined, EM {em}\n")
        click.echo(f"wrote {o.out_dir}/")
    if outcomes:
        stages = outcomes[0].stages
        _say("stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items())
             + f"; total {sum(stages.values()):.1f} s")


@main.command("compare")
@click.argument("baseline", type=click.Path(exists=True))
@click.argument("candidate", type=click.Path(exists=True))
@click.option("--gate", is_flag=True, help="Exit 4 when any row is worse, or when any lookup measure drops at all.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Also write the markdown here.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None,
              help="Also write every row (delta, interval, verdict) and the gate's failures as JSON here.")
@click.option("--resamples", type=click.IntRange(100, 1_000_000), default=10_000, show_default=True,
              help="Bootstrap resamples.")
@click.option("--seed", type=int, default=None, help="Bootstrap seed [default: the recorded 20261130].")
@handle_errors
def compare_cmd(baseline: str, candidate: str, gate: bool, out: str | None, json_out: str | None, resamples: int,
                seed: int | None) -> None:
    """Compare two results directories: per corpus x class x measure, paired bootstrap interval and verdict."""
    from turnbench import canonical
    from turnbench.harness.compare import SEED, compare, render_compare_md
    from turnbench.harness.report import read_metrics

    cmp = compare(read_metrics(Path(baseline)), read_metrics(Path(candidate)), resamples=resamples,
                  seed=SEED if seed is None else seed)
    text = render_compare_md(cmp, gate=gate if gate else None)
    if out:
        canonical.write_bytes_atomic(Path(out), text.encode("utf-8"))
    if json_out:
        canonical.write_json(Path(json_out), cmp.to_json())
    click.echo(text, nl=False)
    failures = cmp.gate_failures()
    if gate and failures:
        raise errors.GateFailed(f"{len(failures)} regression(s); first: {failures[0]}")
