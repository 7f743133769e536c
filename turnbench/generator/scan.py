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
from turnbench.generator.contracts import (
    LocatedFact,
    TargetFact,
    contains_tokens,
    content_words,
    series_name,
    series_of_title,
    tokens,
    word_count,
)

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
    fact_hits: Mapping[tuple[Phrase, Phrase], tuple[TurnKey, ...]]  # (subject, value) -> turns saying both
    topic_hits: Mapping[Phrase, tuple[TurnKey, ...]]  # a discussion's "{subject} {aspect}" -> turns saying it
    series_hits: Mapping[Phrase, tuple[TurnKey, ...]]  # every series' full name -> turns that say it
    slot_hits: Mapping[Phrase, tuple[TurnKey, ...]]  # an R6 question's "{slot} {team} {kind}" -> turns that say it
    words: Mapping[TurnKey, frozenset[str]]  # the content words of every turn a turn-level query takes as evidence
    series_meta: Mapping[str, tuple[str, str]]  # meeting id -> (team, kind) its meta records

    @property
    def queries(self) -> tuple[Query, ...]:
        return self.corpus.queries

    def queries_by_id(self) -> dict[str, Query]:
        return {q.id: q for q in self.queries}

    def series_of_meeting(self, meeting_id: str) -> tuple[str, str] | None:
        """The (team, kind) of a session: what its title names, or, where titles are opaque (recordings named like
        files), what the generator recorded in its ``meta``; None for a meeting that is not a session."""
        info = self.corpus.meetings.get(meeting_id)
        return series_of_title(info.title if info is not None else "") or self.series_meta.get(meeting_id)

    def said_in(self, name: Phrase) -> list[str]:
        """The meetings in which some turn says ``name`` (a series' full name, or its slot and name), in meeting
        order."""
        said = {mid for mid, _ in (*self.series_hits.get(name, ()), *self.slot_hits.get(name, ()))}
        return [mid for mid in self.corpus.meeting_order if mid in said]

    def targets_of(self, rule: str | None = None) -> list[TargetFact]:
        return [f for f in self.targets if rule is None or f.get("rule") == rule]

    def located_of(self, *types: str) -> list[LocatedFact]:
        return [f for f in self.located if f.get("type") in types]

    def turn(self, meeting: str, index: int) -> SpokenTurn:
        return self.turns.get((meeting, index), NO_TURN)

    def phrase_hits_of(self, phrase: str) -> tuple[Hit, ...]:
        return self.phrase_hits.get(tuple(tokens(phrase)), ())

    def fact_hits_of(self, subject: str, value: str) -> tuple[TurnKey, ...]:
        return self.fact_hits.get((tuple(tokens(subject)), tuple(tokens(value))), ())


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
        # a fact is stated where its subject and its value are said in one turn
        self.facts: dict[str, list[tuple[Phrase, Phrase]]] = {}  # value's first token -> (subject, value)
        for lf in located:
            if lf.get("type") in ("lookup_answer", "component") and "subject" in lf and "value" in lf:
                pair = (tuple(tokens(lf["subject"])), tuple(tokens(lf["value"])))
                if pair[0] and pair[1]:
                    self.facts.setdefault(pair[1][0], []).append(pair)
        topics = {tuple(tokens(f"{lf['subject']} {lf['aspect']}")) for lf in located
                  if lf.get("type") == "discussion" and "subject" in lf and "aspect" in lf}
        topics.discard(())
        self.topic_by_first: dict[str, list[Phrase]] = {}
        for t in sorted(topics):
            self.topic_by_first.setdefault(t[0], []).append(t)
        self.needed: set[TurnKey] = set()
        self.evidence: set[TurnKey] = set()
        for lf in located:
            if isinstance(lf.get("turn"), int):
                self.needed.add((lf["meeting"], lf["turn"]))
            if lf.get("type") == "discussion" and isinstance(lf.get("turn"), int) and isinstance(lf.get("last"), int):
                self.needed.update((lf["meeting"], t) for t in range(lf["turn"], lf["last"] + 1))
        for q in queries:
            for mid, ts in q.answer_turns.items():
                self.needed.update((mid, t) for t in ts)
            if q.gold_level == "turn" and q.scored_on == "retrieval":
                if any(q.answer_turns.values()):
                    self.evidence.update((mid, t) for mid, ts in q.answer_turns.items() for t in ts)
                else:
                    self.evidence.update((mid, t) for mid, rs in q.gold_turns.items() for a, b in rs
                                         for t in range(a, b + 1))
        names = {series_name(f["team"], f["kind"]) for f in located if f.get("type") == "series_mention"}
        names |= {series_name(f["team"], f["kind"]) for f in targets if f.get("rule") == "R6" and "kind" in f}
        names.discard(())
        # an R6 question that names a series by its slot: the slot said with the series' name ("Monday Payments ...")
        slots = {tuple(tokens(f"{f['slot']} {f['team']} {f['kind']}")) for f in targets
                 if f.get("rule") == "R6" and "slot" in f}
        slots.discard(())
        self.slot_hits: dict[Phrase, list[TurnKey]] = {name: [] for name in sorted(slots)}
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
        self.fact_hits: dict[tuple[Phrase, Phrase], list[TurnKey]] = {p: [] for ps in self.facts.values() for p in ps}
        self.topic_hits: dict[Phrase, list[TurnKey]] = {t: [] for t in sorted(topics)}
        self.words: dict[TurnKey, frozenset[str]] = {}
        self.series_meta: dict[str, tuple[str, str]] = {}

    def add(self, m: Meeting) -> None:
        if "team" in m.meta and "kind" in m.meta:
            self.series_meta[m.id] = (str(m.meta["team"]), str(m.meta["kind"]))
        spoke = self.spoke.setdefault(m.id, set())
        self.invited[m.id] = frozenset(m.attendees)
        for t in m.turns:
            spoke.add(t.speaker)
            key = (m.id, t.index)
            if key in self.needed:
                self.turns[key] = SpokenTurn(t.speaker, t.text)
            if key in self.evidence:
                self.words[key] = content_words(t.text)
            if not (self.by_first or self.item_re or self.facts or self.topic_by_first or self.series_by_first):
                continue
            toks = tokens(t.text)
            if self.series_by_first:
                said = {n for i, tok in enumerate(toks) for n in self.series_by_first.get(tok, ())
                        if tuple(toks[i:i + len(n)]) == n}
                for n in sorted(said):
                    self.series_hits[n].append(key)
                for n in self.slot_hits:
                    if n[0] in toks and contains_tokens(toks, n):
                        self.slot_hits[n].append(key)
            n_words = word_count(t.text)
            if self.by_first:
                self._phrases(m.id, t.index, toks, n_words)
            if self.item_re is not None and "defer" in t.text.lower():
                for hit in self.item_re.finditer(t.text):
                    self.deferral_hits[hit.group(1).lower()].append(Hit(m.id, t.index, n_words))
            if self.facts:
                for first in set(toks) & self.facts.keys():
                    for subject, value in self.facts[first]:
                        if contains_tokens(toks, value) and contains_tokens(toks, subject):
                            self.fact_hits[(subject, value)].append(key)
            if self.topic_by_first:
                said = {p for i, tok in enumerate(toks) for p in self.topic_by_first.get(tok, ())
                        if tuple(toks[i:i + len(p)]) == p}
                for p in sorted(said):
                    self.topic_hits[p].append(key)

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
            fact_hits={p: tuple(h) for p, h in self.fact_hits.items()},
            topic_hits={p: tuple(h) for p, h in self.topic_hits.items()},
            series_hits={n: tuple(h) for n, h in self.series_hits.items()},
            slot_hits={n: tuple(h) for n, h in self.slot_hits.items()}, words=self.words,
            series_meta=self.series_meta)


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
