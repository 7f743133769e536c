"""The passages a load indexed, with their texts: what a Python engine and a rerank stage read.

The load keeps only each passage's record (its text's sha256, not the text: a million passages' words are not held
for a run that needs none). So the texts are cut again from the corpus by the load's own rule
(``turnbench.loading.chunking.chunk_meeting`` at the load's ``max_words`` and ``overlap``); a passage's text is
``Chunk.text`` — its segments' texts joined by newlines, or the one word window of a split monologue — exactly what
the index received. The cut is refused unless its inventory is the load's, byte for byte (the inventory sha256
covers every passage's text hash), so an engine can never be handed texts other than the ones that were indexed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from turnbench.corpus.format import Corpus
from turnbench.errors import IndexNotSettled
from turnbench.passages import Passage, inventory_sha256

TEXT_RULE = "chunking.Chunk.text: the passage's segment texts joined by newlines (a split monologue: its word window)"


def passages_with_texts(corpus: Corpus, marker: Mapping[str, Any]) -> tuple[Passage, ...]:
    """Every passage of the load ``marker`` describes (its ``max_words`` and ``passages_sha256``), in (meeting,
    index) order, each with its text; IndexNotSettled when the corpus cut again is not that inventory."""
    from turnbench.loading.chunking import chunk_meeting

    max_words = int(marker["max_words"])
    overlap = int(marker.get("overlap", 0))  # recorded only when the load carried words over
    cut = [c for m in corpus.iter_meetings()
           for c in chunk_meeting(m.id, m.turns, max_words=max_words, overlap=overlap)]
    cut.sort(key=lambda c: (c.passage.meeting, c.passage.index))
    sha = inventory_sha256(c.passage for c in cut)
    if sha != marker["passages_sha256"]:
        raise IndexNotSettled(f"corpus {corpus.id} cut at {max_words} words (overlap {overlap}) gives another "
                              f"inventory (sha256 {sha[:12]}…) than the load's "
                              f"({str(marker['passages_sha256'])[:12]}…): the load used another chunking; load the "
                              "corpus again")
    return tuple(replace(c.passage, text=c.text) for c in cut)
