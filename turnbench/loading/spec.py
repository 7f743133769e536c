"""What shapes a load, as one value: the cut (``max_words``, ``overlap``), the index and its primary shards, and the
vector field (none, or the encoder and graph of turnbench.loading.vectors). A load, the check that a settled load
can be kept and the bench each take one ``LoadSpec`` instead of five settings that always travel together."""

from __future__ import annotations

from dataclasses import dataclass

from turnbench.loading.chunking import DEFAULT_MAX_WORDS, check_cut
from turnbench.loading.index import DEFAULT_INDEX, check_index_name, check_shards
from turnbench.loading.vectors import VectorSpec


@dataclass(frozen=True)
class LoadSpec:
    """A load's shape: passages of at most ``max_words`` words, ``overlap`` words shared by neighbouring passages of
    one speaker's run, into ``index`` with ``shards`` primary shards (no replicas), with a vector field filled as
    ``vectors`` says (None: no vector field)."""

    max_words: int = DEFAULT_MAX_WORDS
    overlap: int = 0
    index: str = DEFAULT_INDEX
    shards: int = 1
    vectors: VectorSpec | None = None

    def check(self) -> LoadSpec:
        """This spec, or BadInput for a cut, index name or shard count no load would take (nothing is read)."""
        check_cut(self.max_words, self.overlap)
        check_index_name(self.index)
        check_shards(self.shards)
        return self
