"""Whether the stack holds a corpus, fully loaded: what a reader (a run, the answer engine) checks before it reads
a load, so it can never read another corpus's passages or a half-finished load — the index's marker names the corpus
and says ``settled``, and the PostgreSQL schema's marker names the same corpus."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from turnbench.errors import IndexNotSettled, StackStateError
from turnbench.loading.index import DEFAULT_INDEX, index_marker

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from turnbench.corpus.format import Corpus
    from turnbench.stack.info import StackInfo


def loaded_marker(stack: StackInfo, corpus: Corpus, *, index: str = DEFAULT_INDEX,
                  client: OpenSearch | None = None, postgres: bool = True) -> dict[str, Any]:
    """Refuse unless the index and the PostgreSQL schema hold ``corpus``, fully loaded; returns the index marker.

    What a run (or the answer engine) calls before reading the stack, so it can never read another
    corpus's passages or a half-finished load. ``postgres`` False: the index alone, for a caller that checks the
    schema if it reads it (a run reads PostgreSQL only when the state directory kept no inventory of this load:
    ``check_tables_hold``).
    """
    from turnbench.stack.clients import opensearch_client

    client = client or opensearch_client(stack)
    marker = index_marker(client, index)
    if marker is None:
        raise StackStateError(f"OpenSearch index {index!r} does not exist; run `turnbench load` first")
    if marker.get("corpus_sha256") != corpus.sha256:
        raise StackStateError(
            f"index {index!r} holds corpus {marker.get('corpus_id')!r} "
            f"(sha256 {str(marker.get('corpus_sha256'))[:12]}…), not {corpus.id!r} (sha256 {corpus.sha256[:12]}…); "
            f"run `turnbench load --corpus` for it first"
        )
    if marker.get("state") != "settled":
        raise IndexNotSettled(f"index {index!r} was never settled (state {marker.get('state')!r}): "
                              "a load did not finish")
    if postgres:
        check_tables_hold(stack, corpus)
    return marker


def check_tables_hold(stack: StackInfo, corpus: Corpus) -> None:
    """Refuse unless the PostgreSQL schema holds ``corpus``, fully loaded."""
    from turnbench.loading import tables

    held = tables.loaded_tables_marker(stack)
    if held is None or held.get("corpus_sha256") != corpus.sha256:
        raise StackStateError(
            f"PostgreSQL schema {tables.SCHEMA!r} does not hold corpus {corpus.id!r}; "
            "run `turnbench load --corpus` for it"
        )
