"""A tiny hand-written corpus for the load and run tests, so they do not depend on the generator.

With ``max_words=12`` its passages can be counted by hand (see ``EXPECTED``):

- mtg-0001: Ana 6+6 words packed into one passage · Ben · Ana → 3 passages
- mtg-0002: Cleo · Dev's 35-word monologue cut 12/12/11 → 3 · Cleo → 5 passages
- mtg-0003: Eve's "right" shares Fay's start but ends first, so it is read before Fay's turn and joins
  Eve's first turn → Eve[0, 2] · Fay[1] → 2 passages
- mtg-0004: Gus · Hana → 2 passages

Ben's "yes" (mtg-0001:00001) and Cleo's "yes" (mtg-0002:00004) tie exactly for query q07.
"""

from __future__ import annotations

from pathlib import Path

from turnbench.corpus.format import CorpusWriter
from turnbench.corpus.records import Answer, Meeting, Query, Turn

MAX_WORDS = 12
EXPECTED = {"meetings": 4, "segments": 12, "passages": 12,
            "per_meeting": {"mtg-0001": 3, "mtg-0002": 5, "mtg-0003": 2, "mtg-0004": 2}}
MONOLOGUE = ("the quarterly vendor escalation went to legal and procurement who asked for a second quote "
             "from the backup supplier before signing anything new this quarter so the decision now waits "
             "for their answer next week")


def _turns(spec):
    out, t = [], 0.0
    for i, (speaker, text, *at) in enumerate(spec):
        start = at[0] if at else t
        end = at[1] if at else start + 0.5 * len(text.split())
        out.append(Turn(i, speaker, start, end, text))
        t = max(t, end)
    return tuple(out)


def meetings(variant: int = 0) -> list[Meeting]:
    specs = [
        ("mtg-0001", "Platform — weekly sync #1", "2026-03-02", [
            ("Ana", "good morning everyone let us start"),
            ("Ana", "the falcon migration is on track"),
            ("Ben", "yes"),
            ("Ana", "thanks ben"),
        ]),
        ("mtg-0002", "Platform — design review #1", "2026-03-09", [
            ("Cleo", "we need to review the budget spreadsheet"),
            ("Dev", MONOLOGUE),
            ("Cleo", "yes"),
        ]),
        ("mtg-0003", "Payments — incident review #1", "2026-04-14", [
            ("Eve", "the outage started at noon"),
            ("Fay", "the database failover took four minutes", 3.0, 6.0),
            ("Eve", "right", 3.0, 3.5),
        ]),
        ("mtg-0004", "Payments — planning #1", "2026-04-21", [
            ("Gus", "roadmap for the falcon launch"),
            ("Hana", "the vendor contract renewal is due in may" + (" or june" if variant else "")),
        ]),
    ]
    out = []
    for mid, title, date, spec in specs:
        turns = _turns(spec)
        speakers = tuple(sorted({t.speaker for t in turns}))
        out.append(Meeting(id=mid, title=title, recorded_date=date, duration=max(t.end for t in turns),
                           timing="synthetic", speakers=speakers, turns=turns, attendees=speakers,
                           meta={"team": title.split(" — ")[0], "secret": "never loaded"}))
    return out


def queries() -> list[Query]:
    return [
        Query("q01", "lookup", "R1", "direct", "when is the vendor contract renewal due", "retrieval",
              ("mtg-0004",), {"mtg-0004": ((1, 1),)}, {"mtg-0004": (1,)}),
        Query("q02", "lookup", "R1", "direct", "falcon migration status", "retrieval",
              ("mtg-0001",), {"mtg-0001": ((1, 1),)}, {"mtg-0001": (1,)}),
        Query("q03", "summarize", "R8", "direct", "summarise the payments incident review", "retrieval",
              ("mtg-0003",), {"mtg-0003": ((0, 2),)}, gold_level="meeting"),
        Query("q04", "multi_file", "R2", "direct", "backup supplier quote and budget spreadsheet", "retrieval",
              ("mtg-0001", "mtg-0002"), {"mtg-0001": ((0, 1),), "mtg-0002": ((0, 1),)}),
        Query("q05", "aggregation", "R3", "how-many", "how many meetings discussed falcon", "answer",
              ("mtg-0001", "mtg-0004"), answer=Answer("count", count=2)),
        Query("q06", "lookup", "R1", "direct", "zebra xylophone", "retrieval",
              ("mtg-0002",), {"mtg-0002": ((2, 2),)}),
        # Ben's and Cleo's one-word "yes" passages score exactly the same
        Query("q07", "lookup", "R1", "direct", "yes", "retrieval", ("mtg-0002",), {"mtg-0002": ((2, 2),)}),
    ]


def write_tiny_corpus(out: Path, variant: int = 0) -> Path:
    # written in reverse id order: the index must still break score ties by meeting id, not by load order
    ms = meetings(variant)[::-1]
    with CorpusWriter(out) as w:
        w.write_meetings(ms)
        w.write_queries(queries())
        w.write_facts([])
        w.write_manifest(corpus_id=f"tiny-load-{variant}", licence={"tier": "synthetic", "name": "CC0-1.0"},
                         producer={"name": "tests/integration/tinycorpus", "version": "1", "seed": variant},
                         counts={"meetings": len(ms), "queries": len(queries())})
    return Path(out)
