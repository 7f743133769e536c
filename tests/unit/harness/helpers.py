"""Small hand-built corpora for the harness tests: every number in them is chosen so a grade or metric can be
worked out by hand."""

from __future__ import annotations

from pathlib import Path

from turnbench.corpus import CorpusWriter, Meeting, Query, Turn
from turnbench.runs import Passage


def words(n: int, word: str = "w") -> str:
    return " ".join([word] * n)


def turn(i: int, speaker: str, start: float, end: float, n_words: int) -> Turn:
    return Turn(i, speaker, float(start), float(end), words(n_words))


def meeting(mid: str, turns) -> Meeting:
    turns = tuple(turns)
    return Meeting(mid, f"title {mid}", "2026-01-05", max(t.end for t in turns), "synthetic",
                   tuple(sorted({t.speaker for t in turns})), turns)


def query(qid: str, cls: str, gold_turns: dict, answer_turns: dict | None = None, level: str = "turn") -> Query:
    rule = {"lookup": "R1", "multi_file": "R2", "summarize": "R8"}[cls]
    return Query(qid, cls, rule, "plain", f"question {qid}", "retrieval", tuple(sorted(gold_turns)),
                 {m: tuple(r) for m, r in gold_turns.items()}, answer_turns or {}, None, level)


def write_corpus(root: Path, meetings, queries, corpus_id: str = "tiny") -> Path:
    with CorpusWriter(root) as w:
        w.write_meetings(meetings)
        w.write_queries(sorted(queries, key=lambda q: q.id))
        w.write_manifest(corpus_id=corpus_id, licence={"name": "CC0-1.0", "tier": "A"},
                         producer={"name": "hand-built", "version": "1", "seed": 7},
                         counts={"meetings": len(meetings), "queries": len(queries)})
    return root


def turn_passages(meetings, prefix: str = "") -> list[Passage]:
    """One passage per turn, ids ``{prefix}{meeting}:{index:05d}``."""
    out = []
    for m in meetings:
        for t in m.turns:
            out.append(Passage(f"{prefix}{m.id}:{t.index:05d}", m.id, t.speaker, t.start, t.end, t.index,
                               words=len(t.text.split())))
    return out


def small_world():
    """Three meetings, one turn-level lookup, one multi_file, one summarize, one unjudgeable lookup."""
    m1 = meeting("m1", [turn(0, "ann", 0, 10, 10), turn(1, "bob", 10, 20, 10), turn(2, "ann", 20, 30, 10)])
    m2 = meeting("m2", [turn(0, "cat", 0, 10, 10), turn(1, "dan", 10, 20, 10)])
    m3 = meeting("m3", [turn(0, "eve", 0, 10, 10), turn(1, "eve", 10, 20, 10)])
    queries = [
        query("q1", "lookup", {"m1": [(1, 1)]}, {"m1": (1,)}),
        query("q2", "multi_file", {"m1": [(2, 2)], "m2": [(0, 0)]}),
        query("q3", "summarize", {"m2": [], "m3": []}, level="meeting"),
        query("q4", "lookup", {"m9": [(0, 0)]}),  # gold in a meeting with no passage: unjudgeable
    ]
    return [m1, m2, m3], queries
