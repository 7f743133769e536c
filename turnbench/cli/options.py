"""Options several commands share, each defined once, their choices drawn from ``turnbench.vocab``."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

import click

from turnbench.vocab import Answerer, FusionMethod, KnnEngine, ProviderName, ScopeName, VectorIndex, choices

P = ParamSpec("P")
R = TypeVar("R")
Decorator = Callable[[Callable[P, R]], Callable[P, R]]

ORACLE_HELP = "gold-meetings is an ORACLE upper bound: each query searches only its gold meetings."


def scope_option(text: str = ORACLE_HELP) -> Decorator:
    return click.option("--scope", type=click.Choice(choices(ScopeName)), default=ScopeName.CORPUS.value,
                        show_default=True, help=text)


def provider_option(text: str) -> Decorator:
    return click.option("--provider", type=click.Choice(choices(ProviderName)), default=ProviderName.AUTO.value,
                        show_default=True, help=text)


def answerer_option(text: str, *, skip: bool) -> Decorator:
    offered = choices(Answerer) if skip else choices(Answerer, without=[Answerer.SKIP])
    return click.option("--answerer", type=click.Choice(offered), default=Answerer.REFERENCE.value,
                        show_default=True, help=text)


def knn_engine_option(text: str) -> Decorator:
    return click.option("--knn-engine", type=click.Choice(choices(KnnEngine)), default=KnnEngine.LUCENE.value,
                        show_default=True, help=text)


def vector_index_option(text: str) -> Decorator:
    return click.option("--vector-index", type=click.Choice(choices(VectorIndex)), default=VectorIndex.HNSW.value,
                        show_default=True, help=text)


reload_option: Decorator = click.option(
    "--reload", is_flag=True, default=False,
    help="Load the corpus again even when the stack already holds a settled load of exactly this corpus, cut and "
         "index (kept by default: markers, inventory hash and live provenance checked).")


def fusion_method_option(text: str) -> Decorator:
    return click.option("--method", type=click.Choice(choices(FusionMethod)), required=True, help=text)
