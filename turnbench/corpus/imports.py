"""What the importers of published corpora (``qmsum``, ``meetingqa``) share: how a source file is recorded, how a
refused query is, the corpus id named by the sources, the word-count timing record, and the write itself."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.corpus.format import CorpusWriter
from turnbench.corpus.qmsum_rules import GAP_MS, MS_PER_WORD, WORDS_PER_MINUTE
from turnbench.corpus.records import Meeting, Query

# How an importer without timestamps times its turns (qmsum_rules.synthetic_turns), as the manifest records it.
TIMING = {"words_per_minute": WORDS_PER_MINUTE, "ms_per_word": MS_PER_WORD, "gap_ms": GAP_MS, "min_words_per_turn": 1}


@dataclass(frozen=True)
class Source:
    """One input file, as the manifest records it: its name (never an absolute path), hash and split."""

    file: str
    sha256: str
    split: str

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "sha256": self.sha256, "split": self.split}


@dataclass(frozen=True)
class Refused:
    """A query the source holds that is not imported, and why."""

    query_id: str
    reason: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"query": self.query_id, "reason": self.reason, "detail": self.detail}


def tally(values: Iterable[str]) -> dict[str, int]:
    """How often each value occurs, by value."""
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def corpus_id_from(prefix: str, sources: Sequence[Source]) -> str:
    """The corpus id: the prefix and a digest of the recorded sources, so one set of files names one corpus."""
    digest = canonical.sha256_bytes(canonical.dumps([s.to_json() for s in sources]).encode())
    return f"{prefix}-{digest[:12]}"


def write_imported(out: Path, meetings: Iterable[Meeting], queries: Iterable[Query], *, corpus_id: str,
                   licence: Mapping[str, str], producer: Mapping[str, Any],
                   counts: Mapping[str, Any]) -> dict[str, Any]:
    """Write an imported corpus (no facts) at ``out``, staged, so nothing is left there on failure."""
    with CorpusWriter(out) as w:
        w.write_meetings(meetings)
        w.write_queries(queries)
        w.write_facts([])
        return w.write_manifest(corpus_id=corpus_id, licence=licence, producer=producer, counts=counts)
