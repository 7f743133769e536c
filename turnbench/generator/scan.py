"""The synthetic scan: one pass over a generated corpus that finds, in the text on disk, everything the
synthetic checks count.

facts.jsonl only says *what* to look for (phrases, deferred items, subjects) and *where it claims* each
sentence was written. The scan looks for those phrases in every turn of every meeting, not only where
facts.jsonl points, so a count, set, maximum or location is always recomputed from the turns themselves
with the contracts of ``turnbench.generator.contracts``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from turnbench.corpus.checks import CorpusScan, scan_corpus
from turnbench.corpus.format import Corpus
from turnbench.corpus.records import Meeting, Query
from turnbench.generator.contracts import LocatedFact, TargetFact, series_name, series_of_title, tokens, word_count

TurnKey = tuple[str, int]  # (meeting id, turn index)
Phrase = tuple[str, ...]  # a phrase's tokens


class SpokenTurn(NamedTuple):
    speaker: str
    text: str


class Hit(NamedTuple):
    """Where a phrase or deferral was found, and how long that turn is."""

    meeting: str
    turn: int
    words: int


NO_TURN = SpokenTurn("", "")


@dataclass(frozen=True)
class SyntheticScan:
    """What one pass over a generated corpus yields for the synthetic checks."""

    corpus: CorpusScan
    targets: tuple[TargetFact, ...]
    located: tuple[LocatedFact, ...]
    spoke: Mapping[str, frozenset[str]]  # meeting id -> who spoke at least one turn
    invited: Mapping[str, frozenset[str]]  # meeting id -> its invitee list (Meeting.attendees)
    turns: Mapping[TurnKey, SpokenTurn]  # the turns facts and answer_turns point at, as written
    phrase_hits: Mapping[Phrase, tuple[Hit, ...]]  # every marker and near-miss phrase, in sorted order
    boundary_hits: tuple[str, ...]  # turns that end with a phrase's beginning or start with its end
    deferral_hits: Mapping[str, tuple[Hit, ...]]  # lowercased R5 item -> its deferrals
    subject_hits: Mapping[str, tuple[TurnKey, ...]]  # lowercased subject -> turns naming it
    subject_texts: Mapping[TurnKey, str]  # the text of every turn that names a subject
    series_hits: Mapping[Phrase, tuple[TurnKey, ...]]  # every series' full name -> turns that say it

    @property
    def queries(self) -> tuple[Query, ...]:
        return self.corpus.queries

    def queries_by_id(self) -> dict[str, Query]:
        return {q.id: q for q in self.queries}

    def series_of_meeting(self, meeting_id: str) -> tuple[str, str] | None:
        """The (team, kind) the meeting's title names; None for a meeting that is not a session."""
        info = self.corpus.meetings.get(meeting_id)
        return series_of_title(info.title if info is not None else "")

    def targets_of(self, rule: str | None = None) -> list[TargetFact]:
        return [f for f in self.targets if rule is None or f.get("rule") == rule]

    def located_of(self, *types: str) -> list[LocatedFact]:
        return [f for f in self.located if f.get("type") in types]

    def turn(self, meeting: str, index: int) -> SpokenTurn:
        return self.turns.get((meeting, index), NO_TURN)

    def phrase_hits_of(self, phrase: str) -> tuple[Hit, ...]:
        return self.phrase_hits.get(tuple(tokens(phrase)), ())


class _TextScanner:
    """Collects, meeting by meeting, where the phrases, items and subjects the facts name occur."""

    def __init__(self, queries: tuple[Query, ...], targets: tuple[TargetFact, ...],
                 located: tuple[LocatedFact, ...]) -> None:
        phrases: set[Phrase] = set()
        for f in targets:
            if "phrase" in f:
                phrases.add(tuple(tokens(f["phrase"])))
        for lf in located:
            if lf.get("type") == "near_miss":
                phrases.add(tuple(tokens(lf["phrase"])))
        phrases.discard(())
        self.by_first: dict[str, list[Phrase]] = {}
        for p in sorted(phrases):
            self.by_first.setdefault(p[0], []).append(p)
        self.longest = max((len(p) for p in phrases), default=0)
        self.heads = {p[:k] for p in phrases for k in range(1, len(p))}
        self.tails = {p[-k:] for p in phrases for k in range(1, len(p))}
        items = sorted({f["item"].lower() for f in targets if f.get("rule") == "R5" and "item" in f})
        # longest first, so an item that extends another is matched whole
        alternatives = "|".join(re.escape(i) for i in sorted(items, key=len, reverse=True))
        self.item_re = re.compile(r"\bdefer the (" + alternatives + r")\b", re.IGNORECASE) if items else None
        subject_types = ("lookup_setup", "lookup_answer", "lookup_echo", "component", "component_echo")
        self.subjects = {f["subject"].lower() for f in located if f.get("type") in subject_types and "subject" in f}
        self.needed: set[TurnKey] = set()
        for lf in located:
            if isinstance(lf.get("turn"), int):
                self.needed.add((lf["meeting"], lf["turn"]))
        for q in queries:
            for mid, ts in q.answer_turns.items():
                self.needed.update((mid, t) for t in ts)
        names = {series_name(f["team"], f["kind"]) for f in located if f.get("type") == "series_mention"}
        names.discard(())
        self.series_by_first: dict[str, list[Phrase]] = {}
        for name in sorted(names):
            self.series_by_first.setdefault(name[0], []).append(name)
        self.series_hits: dict[Phrase, list[TurnKey]] = {name: [] for name in sorted(names)}
        self.spoke: dict[str, set[str]] = {}
        self.invited: dict[str, frozenset[str]] = {}
        self.turns: dict[TurnKey, SpokenTurn] = {}
        self.phrase_hits: dict[Phrase, list[Hit]] = {p: [] for p in sorted(phrases)}
        self.boundary_hits: list[str] = []
        self.deferral_hits: dict[str, list[Hit]] = {i: [] for i in items}
        self.subject_hits: dict[str, list[TurnKey]] = {s: [] for s in sorted(self.subjects)}
        self.subject_texts: dict[TurnKey, str] = {}

    def add(self, m: Meeting) -> None:
        spoke = self.spoke.setdefault(m.id, set())
        self.invited[m.id] = frozenset(m.attendees)
        for t in m.turns:
            spoke.add(t.speaker)
            key = (m.id, t.index)
            if key in self.needed:
                self.turns[key] = SpokenTurn(t.speaker, t.text)
            if not (self.by_first or self.item_re or self.subjects or self.series_by_first):
                continue
            toks = tokens(t.text)
            if self.series_by_first:
                said = {n for i, tok in enumerate(toks) for n in self.series_by_first.get(tok, ())
                        if tuple(toks[i:i + len(n)]) == n}
                for n in sorted(said):
                    self.series_hits[n].append(key)
            n_words = word_count(t.text)
            if self.by_first:
                self._phrases(m.id, t.index, toks, n_words)
            if self.item_re is not None and "defer" in t.text.lower():
                for hit in self.item_re.finditer(t.text):
                    self.deferral_hits[hit.group(1).lower()].append(Hit(m.id, t.index, n_words))
            if self.subjects:
                named = self.subjects.intersection(toks)
                for s in named:
                    self.subject_hits[s].append(key)
                if named:
                    self.subject_texts[key] = t.text

    def _phrases(self, mid: str, index: int, toks: list[str], n_words: int) -> None:
        for i, tok in enumerate(toks):
            for p in self.by_first.get(tok, ()):
                if tuple(toks[i:i + len(p)]) == p:
                    self.phrase_hits[p].append(Hit(mid, index, n_words))
        # A chunker may join turns in another order than their indices (overlapping speech sorts by
        # start and end), so no turn may end with a phrase's beginning or start with its end: then no
        # joining of whole turns can make a phrase across two of them.
        for k in range(1, min(self.longest, len(toks) + 1)):
            if tuple(toks[-k:]) in self.heads:
                self.boundary_hits.append(f"{mid}#{index} ends with '{' '.join(toks[-k:])}'")
            if tuple(toks[:k]) in self.tails:
                self.boundary_hits.append(f"{mid}#{index} starts with '{' '.join(toks[:k])}'")

    def scan(self, corpus: CorpusScan, targets: tuple[TargetFact, ...],
             located: tuple[LocatedFact, ...]) -> SyntheticScan:
        return SyntheticScan(
            corpus=corpus, targets=targets, located=located,
            spoke={m: frozenset(s) for m, s in self.spoke.items()}, invited=self.invited, turns=self.turns,
            phrase_hits={p: tuple(h) for p, h in self.phrase_hits.items()}, boundary_hits=tuple(self.boundary_hits),
            deferral_hits={i: tuple(h) for i, h in self.deferral_hits.items()},
            subject_hits={s: tuple(h) for s, h in self.subject_hits.items()}, subject_texts=self.subject_texts,
            series_hits={n: tuple(h) for n, h in self.series_hits.items()})


def split_facts(facts: list[Mapping[str, Any]]) -> tuple[tuple[TargetFact, ...], tuple[LocatedFact, ...]]:
    """The aggregation targets and the records that name a meeting (a record that is neither is ignored)."""
    targets = tuple(cast(TargetFact, f) for f in facts if f.get("type") == "aggregation_target")
    located = tuple(cast(LocatedFact, f) for f in facts if f.get("meeting") is not None)
    return targets, located


def scan_synthetic(corpus: Corpus) -> SyntheticScan:
    """Read the queries, facts.jsonl and every meeting once; the generic scan comes from the same pass."""
    queries = tuple(corpus.queries())
    targets, located = split_facts([f for f in corpus.facts() if isinstance(f, dict)])
    text = _TextScanner(queries, targets, located)
    return text.scan(scan_corpus(corpus, queries, on_meeting=text.add), targets, located)
