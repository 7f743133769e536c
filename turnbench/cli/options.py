"""Options several commands share, each defined once, their choices drawn from ``turnbench.vocab``."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

import click

from turnbench.api.cli_support import vocab

P = ParamSpec("P")
R = TypeVar("R")
Decorator = Callable[[Callable[P, R]], Callable[P, R]]

ORACLE_HELP = "gold-meetings is an ORACLE upper bound: each query searches only its gold meetings."


def scope_option(text: str = ORACLE_HELP) -> Decorator:
    return click.option("--scope", type=click.Choice(vocab.choices(vocab.ScopeName)),
                        default=vocab.ScopeName.CORPUS.value, show_default=True, help=text)


def provider_option(text: str) -> Decorator:
    return click.option("--provider", type=click.Choice(vocab.choices(vocab.ProviderName)),
                        default=vocab.ProviderName.AUTO.value, show_default=True, help=text)


def answerer_option(text: str, *, skip: bool) -> Decorator:
    offered = vocab.choices(vocab.Answerer) if skip else vocab.choices(vocab.Answerer, without=[vocab.Answerer.SKIP])
    return click.option("--answerer", type=click.Choice(offered), default=vocab.Answerer.REFERENCE.value,
                        show_default=True, help=text)


def knn_engine_option(text: str) -> Decorator:
    return click.option("--knn-engine", type=click.Choice(vocab.choices(vocab.KnnEngine)),
                        default=vocab.KnnEngine.LUCENE.value, show_default=True, help=text)


def vector_index_option(text: str) -> Decorator:
    return click.option("--vector-index", type=click.Choice(vocab.choices(vocab.VectorIndex)),
                        default=vocab.VectorIndex.HNSW.value, show_default=True, help=text)


reload_option: Decorator = click.option(
    "--reload", is_flag=True, default=False,
    help="Load the corpus again even when the stack already holds a settled load of exactly this corpus, cut and "
         "index (kept by default: markers, inventory hash and live provenance checked).")


def measure_option(text: str) -> Decorator:
    return click.option("--measure", "measures", multiple=True, metavar="NAME",
                        help=f"{text} (repeatable): {', '.join(vocab.ExtraMeasure)}, each also as meeting:NAME "
                             "(the run's meetings); an unknown name is refused (exit 2).")


def fusion_method_option(text: str) -> Decorator:
    return click.option("--method", type=click.Choice(vocab.choices(vocab.FusionMethod)), required=True, help=text)
