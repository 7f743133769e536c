"""A one-meeting corpus for command-line refusals that must happen before any stack is touched."""

from __future__ import annotations

from pathlib import Path

from turnbench.corpus.format import CorpusWriter
from turnbench.corpus.records import Meeting, Query, Turn


def one_meeting_corpus(out: Path) -> Path:
    m = Meeting("m1", "Team — sync #1", "2026-01-05", 2.0, "synthetic", ("Ana",),
                (Turn(0, "Ana", 0.0, 2.0, "hello all"),))
    q = Query("q1", "lookup", "R1", "direct", "hello", "retrieval", ("m1",), {"m1": ((0, 0),)})
    with CorpusWriter(out) as w:
        w.write_meetings([m])
        w.write_queries([q])
        w.write_manifest(corpus_id="cli-refusals", licence={"tier": "synthetic", "name": "CC0-1.0"},
                         producer={"name": "tests", "version": "1", "seed": 0}, counts={"meetings": 1})
    return out
