"""What the importers of published corpora (``qmsum``, ``meetingqa``) share: how a source file is recorded, how a
refused query is, the corpus id named by the sources, the word-count timing record, and the write itself.

An import writes only a corpus turnbench will read: every record is checked by the rules its readers apply (a
record read back through ``Meeting.from_json``/``Query.from_json``, which refuse a NUL or a lone surrogate; the
single-record rules of ``corpus.checks``: a portable id, at least one turn), then the staged corpus is opened and
every generic check of ``corpus.checks`` run on it, before it is renamed into place. The first problem is refused
in one line naming the source file and the meeting (BadInput, exit 2, as every other refusal of an importer's
input), and nothing is written."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.corpus.checks import MALFORMED, generic_results, id_problem, meeting_problems, scan_corpus
from turnbench.corpus.format import CorpusWriter, open_corpus
from turnbench.corpus.qmsum_rules import GAP_MS, MS_PER_WORD, WORDS_PER_MINUTE
from turnbench.corpus.records import Meeting, Query
from turnbench.errors import BadInput

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
    """Write an imported corpus (no facts) at ``out``, staged, so nothing is left there on failure: each record is
    checked first (``check_records``), the staged corpus by every generic check before it is renamed into place."""
    meetings, queries = list(meetings), list(queries)
    check_records(meetings, queries)
    with CorpusWriter(out) as w:
        w.write_meetings(meetings)
        w.write_queries(queries)
        w.write_facts([])
        manifest = w.write_manifest(corpus_id=corpus_id, licence=licence, producer=producer, counts=counts)
        failed = [r for r in generic_results(scan_corpus(open_corpus(w.path))) if not r.ok]
        if failed:
            raise BadInput(f"the imported corpus fails the check {failed[0].name} ({failed[0].detail}); nothing was "
                           "written")
        return manifest


def source_of(m: Meeting) -> str:
    """The source file (and line) a meeting was read from, as its importer recorded it."""
    return str(m.meta.get("source", "the sources"))


def check_records(meetings: Sequence[Meeting], queries: Sequence[Query]) -> None:
    """Refuse (BadInput, naming the source file and the meeting) the first record turnbench would refuse to read
    or load: text a store cannot hold, an id a run line or a file name cannot carry, a meeting without turns."""
    where_of = {m.id: f"{source_of(m)}: meeting {m.id!r}" for m in meetings}
    for m in meetings:
        problems = meeting_problems(m)
        try:
            Meeting.from_json(m.to_json())
        except MALFORMED as exc:
            problems.append(str(exc))
        if problems:
            raise BadInput(f"{where_of[m.id]}: {problems[0]}; nothing was written")
    for q in queries:
        why = id_problem(q.id)
        try:
            Query.from_json(q.to_json())
        except MALFORMED as exc:
            why = why or str(exc)
        if why:
            where = where_of.get(q.gold_meetings[0], "the sources") if q.gold_meetings else "the sources"
            raise BadInput(f"{where}: query {q.id!r} {why}; nothing was written")
