"""How hard a corpus is and how much it sounds like real meetings (``measure``), and how well HNSW graphs of its
passages recall (``graph_recall``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from turnbench.api._args import _corpora, _corpus, _int, _stack, _typed

if TYPE_CHECKING:
    from rich.table import Table

    from turnbench.corpus.format import Corpus
    from turnbench.engines.graph_recall import GraphRecall as GraphRecall
    from turnbench.stack.info import StackInfo

CorpusLike = Any  # a Corpus or its directory


@dataclass(frozen=True)
class Measured:
    """A corpus's figures (what DIR/stats.json holds) and those of the corpora set beside it; ``corpora``: the
    corpus and those others, opened (what ``graph_recall`` takes)."""

    stats: Mapping[str, Any]
    against: tuple[Mapping[str, Any], ...] = ()
    corpora: tuple[Corpus, ...] = ()

    def tables(self) -> list[Table]:
        """The figures as the tables ``turnbench measure`` prints: the corpus's BM25 difficulty, its surfaces, the
        encoder's cosines, then the question-evidence overlap and the realism figures beside the others'."""
        from turnbench.generator.measure_report import (
            render,
            render_against,
            render_cosine,
            render_overlap,
            render_surfaces,
        )

        both = [self.stats, *self.against]
        return [render(self.stats), render_surfaces(self.stats), render_cosine(self.stats), render_overlap(both),
                render_against(both)]


def measure(corpus: CorpusLike, *, against: Sequence[CorpusLike] = ()) -> Measured:
    """Measure a corpus (BM25 with meetings as documents per class and surface, the question-evidence overlap, the
    encoder's cosines from question to evidence) and write its figures to DIR/stats.json; ``against``: corpora to set
    beside it (measured, nothing written into them). Every corpus is opened, its hashes verified, before any work."""
    from turnbench import canonical
    from turnbench.corpus.format import STATS
    from turnbench.engines.surfaces import describe, surface_cosines
    from turnbench.generator.measure import measure_corpus

    opened = _corpus(corpus)
    others = _corpora(against)
    stats = measure_corpus(opened)
    stats["surface_cosine"] = {"definition": describe(),
                               "surfaces": [r.to_json() for r in surface_cosines(opened)]}
    canonical.write_json(opened.root / STATS, stats)
    return Measured(stats, tuple(measure_corpus(c) for c in others), (opened, *others))


def graph_recall(corpora: Sequence[CorpusLike], *, orders: int = 3, efs: Sequence[int] = (16, 40, 100),
                 max_words: int = 200, provider: str = "auto", stack: StackInfo | None = None,
                 say: Callable[[str], None] = lambda _: None) -> list[GraphRecall]:
    """Per corpus, recall@10 of HNSW graphs of its passages (MiniLM vectors, the load's mapping) against exact
    search at each ef_search of ``efs``: the load's insertion order first, then ``orders - 1`` others
    (turnbench.engines.graph_recall). On ``stack``, or one ``provider`` starts and stops."""
    from turnbench.engines.graph_recall import check, probe
    from turnbench.stack import open_stack as opened

    opened_corpora = _corpora(corpora)
    check(list(efs), orders)
    _int(max_words, "max_words")
    if stack is not None:
        return [probe(_stack(stack), c, max_words=max_words, efs=efs, orders=orders, say=say) for c in opened_corpora]
    _typed(provider, str, "provider", "a provider's name (str)")
    with opened(provider) as running:
        return [probe(running, c, max_words=max_words, efs=efs, orders=orders, say=say) for c in opened_corpora]
