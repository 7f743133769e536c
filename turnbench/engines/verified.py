"""The loaded index a run searches, verified: its marker, and the passage inventory it was built from.

A run never reads another corpus's passages or a half-finished load (``loading.settled.loaded_marker``), and never
scores against an inventory the index does not hold: the inventory — handed over by the load that just built the
index, or read back from where that load left it — must hash to what the marker records, and the index must still
hold exactly its passages. A load leaves it twice: in PostgreSQL, and as passages.jsonl's bytes beside its record in
the state directory (``loading.proof``), which a run reads first (no database client to import, nothing to encode
or hash again; PostgreSQL, then, is neither read nor asked). The copy is only ever as good as its sha256: one that
does not hash to the marker's is another load's, and the run reads PostgreSQL instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, NamedTuple

from turnbench.corpus.format import Corpus
from turnbench.errors import IndexNotSettled
from turnbench.passages import Passage, canonical_blocks, ids_and_meetings
from turnbench.stack.info import StackInfo

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

# the marker, the inventory, its sha256, and its passages.jsonl bytes when it was read back (None when handed over)
Verified = tuple[Mapping[str, Any], Sequence[Passage], str, bytes | None]


class Stored(NamedTuple):
    """An inventory read back: its passages, their sha256 and passages.jsonl's bytes (hashed as read, written as
    they are), and whether it is the copy the load kept in the state directory rather than PostgreSQL's."""

    passages: Sequence[Passage]
    sha256: str
    lines: bytes
    kept: bool


# the inventory and its sha256: handed over; being read back (``read_back``); or None (read back when verified)
Inventory = tuple[Sequence[Passage], str] | Future[Stored] | None


def verified_index(stack: StackInfo, corpus: Corpus, index: str, inventory: tuple[Sequence[Passage], str] | None
                   ) -> Verified:
    """The loaded index's marker and inventory, verified as a run verifies them (for a run that sends no query to
    OpenSearch: a Python engine)."""
    from turnbench.stack.clients import opensearch_client

    return _verified_index(stack, opensearch_client(stack), corpus, index, inventory)


def _verified_index(stack: StackInfo, client: OpenSearch, corpus: Corpus, index: str, inventory: Inventory
                    ) -> Verified:
    from turnbench.loading.index import describe_difference, meeting_counts, observed_counts
    from turnbench.loading.settled import check_tables_hold, loaded_marker

    handed = None if inventory is None or isinstance(inventory, Future) else inventory
    # PostgreSQL is checked when it is read: a read-back inventory may come from the state directory instead
    marker = loaded_marker(stack, corpus, index=index, client=client, postgres=handed is not None)
    lines: bytes | None = None
    if handed is None:
        stored = inventory.result() if isinstance(inventory, Future) else _stored(stack, index)
        if stored.kept and stored.sha256 != marker["passages_sha256"]:
            # the copy in the state directory is another load's (the index was loaded again from elsewhere)
            stored = _from_postgres(stack)
        if not stored.kept:
            check_tables_hold(stack, corpus)
        passages, sha, lines = stored.passages, stored.sha256, stored.lines
    else:
        passages, sha = tuple(handed[0]), handed[1]
    if sha != marker["passages_sha256"]:
        raise IndexNotSettled(f"index {index!r} was built from another passage inventory than the one stored with it "
                              f"(sha256 {marker['passages_sha256'][:12]}…, stored {sha[:12]}…); load the corpus again")
    expected = meeting_counts(ids_and_meetings(passages)[1])
    got = observed_counts(client, index)
    if got != expected:
        raise IndexNotSettled(f"index {index!r} no longer holds the loaded passages: "
                              f"{describe_difference(expected, got)}")
    return marker, passages, sha, lines


def _stored(stack: StackInfo, index: str) -> Stored:
    """The inventory of the last load into ``index``: the copy that load kept in the state directory
    (turnbench.loading.proof; never trusted for more than the marker's sha256 says), else what it stored in
    PostgreSQL."""
    from turnbench.loading import proof

    kept = proof.kept_inventory(index)
    return Stored(*kept, kept=True) if kept is not None else _from_postgres(stack)


def _from_postgres(stack: StackInfo) -> Stored:
    """The inventory the load stored in PostgreSQL (encoded once: hashed here, written as it is)."""
    import hashlib

    from turnbench.loading import tables

    passages = tuple(tables.read_passages(stack))
    lines = b"".join(canonical_blocks(passages))
    return Stored(passages, hashlib.sha256(lines).hexdigest(), lines, kept=False)


@contextlib.contextmanager
def read_back(stack: StackInfo, index: str, inventory: tuple[Sequence[Passage], str] | None) -> Iterator[Inventory]:
    """``inventory``; or, without one, the inventory the load into ``index`` left (``_stored``), being read back in a
    thread from now on (while what a run needs before its first query is made: the clients' imports, the index's
    marker, the bodies)."""
    if inventory is not None:
        yield inventory
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="turnbench-inventory") as pool:
        yield pool.submit(_stored, stack, index)


class Verifying:
    """The index's ``marker`` (what a run needs before its first query), and the verification of the whole:
    ``now()`` gives it when it is done (else None), ``wait()`` waits for it (raising its refusal)."""

    def __init__(self, marker: Mapping[str, Any], done: Verified | None = None,
                 future: Future[Verified] | None = None) -> None:
        self.marker, self._done, self._future = marker, done, future

    def now(self) -> Verified | None:
        if self._done is None and self._future is not None and self._future.done():
            self._done = self._future.result()
        return self._done

    def wait(self) -> Verified:
        if self._done is None and self._future is not None:
            self._done = self._future.result()
        if self._done is None:
            raise RuntimeError("an index verified without an outcome")
        return self._done


@contextlib.contextmanager
def verifying(stack: StackInfo, client: OpenSearch, corpus: Corpus, index: str, inventory: Inventory
              ) -> Iterator[Verifying]:
    """``verified_index``, for a run. An inventory handed over is verified at once. One read back (``read_back``) is
    verified in a thread while the queries are sent: a stack holding another corpus, or a load that never settled,
    is still refused before any query is sent (the marker says so); an inventory that does not match its index,
    once the queries are back and before anything is written."""
    if inventory is not None and not isinstance(inventory, Future):
        done = _verified_index(stack, client, corpus, index, inventory)
        yield Verifying(done[0], done)
        return
    from concurrent.futures import ThreadPoolExecutor

    from turnbench.loading.index import index_marker

    with ThreadPoolExecutor(1, thread_name_prefix="turnbench-inventory") as pool:
        future = pool.submit(_verified_index, stack, client, corpus, index, inventory)
        early = index_marker(client, index)
        if early is None or early.get("corpus_sha256") != corpus.sha256 or early.get("state") != "settled":
            future.result()  # its refusal (no index, another corpus, an unsettled load), before any query
        yield Verifying(early or {}, None, future)
