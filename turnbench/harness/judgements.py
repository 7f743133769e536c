"""Judgements: from a corpus's gold turn ranges to graded passages (docs/design.md §6).

Relevance is keyed on turns, never on passage ids, so any chunking — ours or another engine's — is judged against
the same gold, by the words each passage actually holds (``turnbench.harness.held``: a span of words of each turn
it holds, from its declared spans, its text, its text hash, or — failing all three — its times). The rule:

* A query's gold ranges in one meeting are unioned into one set of turns before any grading, so two adjacent ranges
  cannot each fall short of a threshold that their union clears.
* coverage = words held of gold turns ÷ words held (0 for a passage that holds no word).
* answer share = the largest share of an answer turn's words the passage holds (a turn of no words: 1 when held).
* Grade 3 when the answer share reaches ``answer`` (a real share of the evidence, not a sliver); else 2 when coverage
  ≥ ``high``; 1 when coverage > ``low``; else 0 (``RelevancePolicy``). Binary collapses every positive grade to 1.
* A query that names a speaker (``Query.speaker``): a passage that holds less than ``answer`` of every one of that
  speaker's gold turns (``speaker_turns``) grades at most 1, however much of the discussion it holds.
  A passage of turnbench's own — whole turns, one speaker — holds an answer turn whole or not at all, so its grade
  is what it was before passages of other shapes were judged this way.
* Qrels hold the positive grades only. Every other passage is unjudged, which for the measures reported here
  (nDCG@k with linear gain, recall@k, reciprocal rank) is the same as judged non-relevant.
* A turn-level query none of whose gold turns reaches a passage is dropped and counted (``dropped_unjudgeable``).
* Meeting level (every ranked class): qrels are the query's gold meetings at grade 1. A meeting-level query is
  unjudgeable only when none of its gold meetings holds a passage; a gold meeting without passages stays in the
  qrels (it lowers every arm's recall alike) and is counted.

One pass over the meetings (``judge_all``) grades every query, checks every passage against its meeting (a
speaker or time it cannot have: ForeignInventory; text or words it does not hold: StaleBinding) and keeps what the
span and entry-point measures read: the words each wanted passage holds, the gold words each graded one holds,
each query's gold words and where its gold starts.
"""

from __future__ import annotations

import contextlib
import pickle
import tempfile
from collections.abc import Callable, Container, Iterable, KeysView, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from turnbench.corpus.records import Meeting, Query
from turnbench.errors import BadInput, ForeignInventory, StaleBinding
from turnbench.harness.bindings import passage_sha256
from turnbench.harness.execution import INLINE
from turnbench.harness.held import EPSILON_SECONDS, TIMES, Held, MeetingTurns, Span
from turnbench.harness.policy import COVERAGE_RULE, GRADE_ANSWER, GRADE_HIGH, GRADE_LOW, RelevancePolicy
from turnbench.passages import Passage

__all__ = ["COVERAGE_RULE", "EPSILON_SECONDS", "GRADE_ANSWER", "GRADE_HIGH", "GRADE_LOW", "RelevancePolicy",
           "QueryJudgements", "Judged", "Judging", "judge", "judge_all", "Parts", "Visitor", "union_ranges"]


@dataclass(frozen=True)
class QueryJudgements:
    """One ranked query's qrels at both levels. ``passages`` is empty for meeting-level (summarize) queries."""

    query_id: str
    cls: str
    level: str  # "turn" | "meeting"
    passages: Mapping[str, int]  # passage id -> positive grade
    meetings: Mapping[str, int]  # gold meeting id -> 1
    judgeable: bool
    gold_meetings_without_passages: int = 0


@dataclass
class Judged:
    """What one pass over the meetings found: every query's judgements, and what span and entry measures read."""

    queries: dict[str, QueryJudgements] = field(default_factory=dict)
    words: dict[str, int] = field(default_factory=dict)  # words held, for the passages asked about
    gold_held: dict[str, dict[str, tuple[Span, ...]]] = field(default_factory=dict)  # query -> passage -> spans
    gold_words: dict[str, int] = field(default_factory=dict)  # query -> words of its gold turns
    gold_spans: dict[str, dict[str, tuple[Span, ...]]] = field(default_factory=dict)  # query -> meeting -> spans
    gold_start: dict[str, dict[str, float]] = field(default_factory=dict)  # query -> meeting -> where gold starts
    held: dict[str, tuple[Span, ...]] = field(default_factory=dict)  # passage -> spans, for the bound passages
    by_times: int = 0  # passages judged by their times alone (neither text, hash nor declared words)
    timings: set[str] = field(default_factory=set)  # the timing provenance of the meetings that hold passages


def union_ranges(ranges: Iterable[tuple[int, int]]) -> frozenset[int]:
    """The turn indices of inclusive ``[first, last]`` ranges, unioned."""
    out: set[int] = set()
    for first, last in ranges:
        if last < first:
            raise BadInput(f"gold range [{first}, {last}] ends before it starts")
        out.update(range(first, last + 1))
    return frozenset(out)


def _grades_in(query: Query, meeting_id: str, turns: MeetingTurns, held: Mapping[str, Held],
               by_turn: Mapping[int, list[str]], policy: RelevancePolicy, out: Judged) -> dict[str, int]:
    """The positive grades of ``meeting_id``'s passages for ``query``, and (into ``out``) its gold words there."""
    gold = union_ranges(query.gold_turns.get(meeting_id, ()))
    answer = frozenset(query.answer_turns.get(meeting_id, ()))
    named = frozenset(query.speaker_turns.get(meeting_id, ())) if query.speaker else None
    present = sorted(i for i in gold if i in turns.by_index)
    out.gold_words[query.id] = out.gold_words.get(query.id, 0) + sum(turns.count[i] for i in present)
    out.gold_spans.setdefault(query.id, {})[meeting_id] = tuple((i, 0, turns.count[i]) for i in present)
    starts = [turns.by_index[i].start for i in sorted(answer) if i in turns.by_index] or \
             [turns.by_index[i].start for i in present]
    if starts:
        out.gold_start.setdefault(query.id, {})[meeting_id] = min(starts)
    candidates: set[str] = set()
    for i in gold | answer:
        candidates.update(by_turn.get(i, ()))
    grades: dict[str, int] = {}
    mine = out.gold_held.setdefault(query.id, {})
    count = turns.count
    gold_spans: tuple[Span, ...]
    for pid in sorted(candidates):
        spans = held[pid].spans
        if len(spans) == 1:  # a passage of one turn (nearly all): the sums and the largest share of one span
            t, a, b = only = spans[0]
            gold_spans = (only,) if t in gold else ()
            coverage = (b - a if gold_spans else 0) / (b - a) if b > a else 0.0
            share = (((b - a) / n) if (n := count[t]) else 1.0) if t in answer else 0.0
            spoke = None if named is None else (((b - a) / n) if (n := count[t]) else 1.0) if t in named else 0.0
        else:
            total = sum(b - a for _, a, b in spans)
            gold_spans = tuple(s for s in spans if s[0] in gold)
            coverage = sum(b - a for _, a, b in gold_spans) / total if total > 0 else 0.0
            share = max((((b - a) / n) if (n := count[t]) else 1.0 for t, a, b in spans if t in answer),
                        default=0.0)
            spoke = None if named is None else max(
                (((b - a) / n) if (n := count[t]) else 1.0 for t, a, b in spans if t in named), default=0.0)
        g = policy.grade(coverage, share, spoke)
        if g > 0:
            grades[pid] = g
        if gold_spans:
            mine[pid] = gold_spans
    return grades


def _judgements(query: Query, grades: Mapping[str, int], covered: Container[str]) -> QueryJudgements:
    """``covered``: the meetings that have passages."""
    meetings = {m: 1 for m in sorted(query.gold_meetings)}
    without = sum(1 for m in meetings if m not in covered)
    if query.gold_level == "meeting":
        return QueryJudgements(query.id, query.cls, "meeting", {}, meetings, without < len(meetings), without)
    return QueryJudgements(query.id, query.cls, "turn", dict(sorted(grades.items())), meetings, bool(grades),
                           without)


def _meeting_held(m: Meeting, ps: Sequence[Passage], foreign: list[str], stale: list[str]
                  ) -> tuple[MeetingTurns, dict[str, Held]]:
    turns = MeetingTurns(m)
    held: dict[str, Held] = {}
    for p, found in zip(ps, turns.judged_all(ps), strict=True):
        if isinstance(found, str):
            kind, _, why = found.partition(":")
            (foreign if kind == "foreign" else stale).append(why)
            continue
        held[p.id] = found
    return turns, held


class Visitor(Protocol):
    """What sees every meeting as the judge's pass goes by, in two steps, so that a meeting read in another process
    is still seen: ``read`` keeps what it needs of a meeting (where the meeting was read), ``take`` folds that in
    (here, meetings in corpus order)."""

    def read(self, meeting: Meeting) -> Any: ...

    def take(self, found: Any) -> None: ...


@dataclass(frozen=True)
class Parts:
    """A corpus's meetings as two runs of its files, in corpus order: ``judge_all`` reads and judges the first here
    and the second in a forked child at the same time (the judge's pass is most of scoring, and a second core sits
    idle otherwise). Each reader yields its meetings lazily."""

    here: Callable[[], Iterable[Meeting]]
    there: Callable[[], Iterable[Meeting]]


@dataclass
class _Pass:
    """What a pass over some of the meetings found; two passes over consecutive runs merge into the one pass over
    both (``then``), equal to it field for field and in every dict's order."""

    judged: Judged
    grades: dict[str, dict[str, int]]
    known: set[str]
    foreign: list[str]
    stale: list[str]
    digests: dict[str, str]  # the binding digest of each passage a binding may name (``Judging.finish``)
    spooled: int = 0  # meetings whose visitor records were handed on (in the child: written to the spool)

    def then(self, later: _Pass) -> _Pass:
        a, b = self.judged, later.judged
        a.words.update(b.words)
        a.held.update(b.held)
        pairs: tuple[tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]], ...] = (
            (a.gold_held, b.gold_held), (a.gold_spans, b.gold_spans), (a.gold_start, b.gold_start),
            (self.grades, later.grades))  # each pair: one query-keyed dict of dicts
        for mine, theirs in pairs:
            for key, inner in theirs.items():
                mine.setdefault(key, {}).update(inner)
        for key, n in b.gold_words.items():
            a.gold_words[key] = a.gold_words.get(key, 0) + n
        a.by_times += b.by_times
        a.timings |= b.timings
        self.known |= later.known
        self.foreign += later.foreign
        self.stale += later.stale
        self.digests.update(later.digests)
        return self


Filters = tuple[Container[str], Container[str]]  # (words_of, keep_of): what the run ranks, known once it is ordered
BACKLOG_TURNS = 100_000  # a child that does not know the filters yet holds back at most this many meetings' turns


def judge_all(queries: Iterable[Query], meetings: Iterable[Meeting] | Parts, passages: Iterable[Passage],
              policy: RelevancePolicy, *, words_of: Container[str] = (), keep_of: Container[str] = (),
              digests_out: dict[str, str] | None = None, visit: Visitor | None = None) -> Judged:
    """Judge every query against a passage inventory (passages must belong to the corpus's meetings), one meeting
    at a time, none held once passed. ``words_of``: passages whose held word counts the span measures read;
    ``keep_of``: passages (besides every graded one) whose spans the bindings need, with ``digests_out`` receiving
    the binding digest of each of those and of each graded one (``bindings.passage_sha256``, made from the meeting
    while it is read, so that no meeting's text is held for the bindings); ``visit`` sees every meeting as it
    passes. ``meetings`` as ``Parts``: its two runs judged at once, in two processes, with the same outcome (errors
    included: the first run's are raised first, as one pass would)."""
    with Judging(queries, meetings, passages, policy, keep=digests_out is not None, visit=visit) as judging:
        return judging.finish(words_of, keep_of, digests_out)


class Judging:
    """``judge_all`` in two steps, so that judging can start before ``words_of`` and ``keep_of`` are known (they come
    from the run, which is still being ordered): from the ``with`` on, the second run of ``Parts`` is judged in a
    child, which holds back what it keeps of at most ``BACKLOG_TURNS`` turns until ``finish`` hands it the two;
    ``finish`` then judges the first run here and merges. The outcome is ``judge_all``'s, field for field.
    ``start``: how the second run's part is started (``Execution.start``); by default it is judged here, when
    ``finish`` asks for it."""

    def __init__(self, queries: Iterable[Query], meetings: Iterable[Meeting] | Parts, passages: Iterable[Passage],
                 policy: RelevancePolicy, *, keep: bool = False, visit: Visitor | None = None,
                 start: Callable[..., contextlib.AbstractContextManager[Any]] | None = None) -> None:
        self.queries = sorted(queries, key=lambda q: q.id)
        touching: dict[str, list[Query]] = {}  # graded in the meeting
        for q in self.queries:
            if q.gold_level != "meeting":
                for mid in sorted(set(q.gold_turns) | set(q.answer_turns)):
                    touching.setdefault(mid, []).append(q)
        self.by_meeting: dict[str, list[Passage]] = {}
        for p in passages:
            self.by_meeting.setdefault(p.meeting, []).append(p)
        self.meetings, self.take = meetings, None if visit is None else visit.take
        self.args = (self.queries, touching, self.by_meeting, policy, keep, None if visit is None else visit.read)
        self._stack = contextlib.ExitStack()
        self._start = start or INLINE.start

    def __enter__(self) -> Judging:
        if isinstance(self.meetings, Parts):
            # what the visitor read of the child's meetings comes back through a file, read a meeting at a time:
            # held in memory it would be the text of every gold turn the child read (most of a corpus's text)
            self._spool = self._stack.enter_context(tempfile.TemporaryFile())
            self._there = self._stack.enter_context(self._start(_spooled, self._spool, self.meetings.there,
                                                                *self.args, inbox=True))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def finish(self, words_of: Container[str] = (), keep_of: Container[str] = (),
               digests_out: dict[str, str] | None = None, *,
               filters: Callable[[bool], Filters | None] | None = None) -> Judged:
        """Judge what is left here and merge. ``filters``, instead of ``words_of`` and ``keep_of``: a function that
        gives the two once it can (``filters(wait)``, None while they are not known and ``wait`` is false), asked
        after each meeting judged here, so that what it needs can be made here meanwhile (``score_run`` orders its
        run when the run has been read); the child is handed them as soon as they come (and nothing to keep, when
        ``filters(True)`` gives nothing)."""
        known: Filters | None = None if filters is not None else (words_of, keep_of)

        def given(wait: bool) -> Filters | None:
            nonlocal known
            if known is None and filters is not None:
                known = filters(wait) or (((), ()) if wait else None)
                if known is not None and isinstance(self.meetings, Parts):
                    self._there.send(known)
            return known

        take = self.take
        if isinstance(self.meetings, Parts):
            if known is not None:
                self._there.send(known)
            mine = _pass(self.meetings.here, *self.args, given, take)
            theirs = self._there.result()
            if take is not None:
                self._spool.seek(0)
                for _ in range(theirs.spooled):
                    take(pickle.load(self._spool))
            found = mine.then(theirs)
        else:
            meetings = self.meetings
            found = _pass(lambda: meetings, *self.args, given, take)
        if digests_out is not None:
            digests_out.update(found.digests)
        unknown = sorted(set(self.by_meeting) - found.known)
        if unknown:
            raise ForeignInventory(f"the passage inventory names {len(unknown)} meeting(s) that are not in the "
                                   f"corpus, e.g. {', '.join(unknown[:3])}")
        if found.foreign:
            raise ForeignInventory(f"{len(found.foreign)} passage(s) of the inventory do not fit this corpus; first: "
                                   f"{found.foreign[0]}")
        if found.stale:
            raise StaleBinding(f"{len(found.stale)} passage(s) of the inventory carry text this corpus does not; "
                               f"first: {found.stale[0]}")
        out = found.judged
        out.queries = {q.id: _judgements(q, found.grades[q.id], self.by_meeting) for q in self.queries}
        return out


def _spooled(receive: Callable[[bool], Any], spool: IO[bytes], meetings: Callable[[], Iterable[Meeting]],
             queries: Sequence[Query], touching: Mapping[str, list[Query]], by_meeting: Mapping[str, list[Passage]],
             policy: RelevancePolicy, keep: bool, reader: Callable[[Meeting], Any] | None) -> _Pass:
    """``_pass`` in the child: the filters are received when they have come, and what the visitor reads is pickled
    to ``spool``, one record per meeting."""

    def filters(wait: bool) -> Filters | None:
        got: Filters | None = receive(wait)  # None: not yet come
        return got

    found = _pass(meetings, queries, touching, by_meeting, policy, keep, reader, filters,
                  lambda seen: pickle.dump(seen, spool, protocol=pickle.HIGHEST_PROTOCOL))
    spool.flush()
    return found


def _pass(meetings: Callable[[], Iterable[Meeting]], queries: Sequence[Query], touching: Mapping[str, list[Query]],
          by_meeting: Mapping[str, list[Passage]], policy: RelevancePolicy, keep: bool,
          reader: Callable[[Meeting], Any] | None, filters: Callable[[bool], Filters | None],
          take: Callable[[Any], None] | None) -> _Pass:
    """``judge_all``'s pass over ``meetings()``, its findings kept (errors are raised by the caller, once every
    run is merged); what ``reader`` reads of each meeting is handed to ``take`` as it goes. ``filters(wait)`` gives
    (words_of, keep_of), or None while they are not known and ``wait`` is false: what is kept of the meetings judged
    meanwhile waits, in order, for them."""
    out = Judged()
    found = _Pass(out, {q.id: {} for q in queries}, set(), [], [], {})
    grades = found.grades
    known: Filters | None = None
    waiting: list[tuple[MeetingTurns, Sequence[Passage], dict[str, Held], set[str], set[str]]] = []
    held_back = 0
    for m in meetings():
        found.known.add(m.id)
        if reader is not None and take is not None:
            take(reader(m))
            found.spooled += 1
        ps = by_meeting.get(m.id, [])
        if not ps:
            continue
        turns, held = _meeting_held(m, ps, found.foreign, found.stale)
        out.by_times += sum(1 for h in held.values() if h.how == TIMES)
        out.timings.add(m.timing)
        by_turn: dict[int, list[str]] = {}
        for pid, h in held.items():
            for t, _, _ in h.spans:
                by_turn.setdefault(t, []).append(pid)
        graded: set[str] = set()
        holders: set[str] = set()
        for q in touching.get(m.id, ()):
            here = _grades_in(q, m.id, turns, held, by_turn, policy, out)
            grades[q.id].update(here)
            graded.update(here)
            holders.update(pid for pid in out.gold_held[q.id] if pid in held)
        waiting.append((turns, ps, held, graded, holders))
        held_back += len(m.turns)
        if known is None:
            known = filters(held_back >= BACKLOG_TURNS)
        if known is not None:
            for item in waiting:
                _kept(item, known, found, keep)
            waiting, held_back = [], 0
    if known is None:  # received even when nothing waits for it: a sender is never left blocked on a full pipe
        known = filters(True) or ((), ())
    for item in waiting:
        _kept(item, known, found, keep)
    return found


def _kept(item: tuple[MeetingTurns, Sequence[Passage], dict[str, Held], set[str], set[str]], known: Filters,
          found: _Pass, keep: bool) -> None:
    """What the span measures and the bindings read of one judged meeting, once ``known`` says which passages: the
    bindings' digests made here, from the meeting's turns, so that only they outlive it."""
    turns, ps, held, graded, holders = item  # graded and holders are passages of held
    words_of, keep_of = known
    out = found.judged
    # the few passages of a meeting the run ranks, found by set operations in C over its held passages
    ranked, kept = _among(held.keys(), words_of), _among(held.keys(), keep_of)
    out.words.update({pid: held[pid].words for pid in ranked | holders})
    out.held.update({pid: held[pid].spans for pid in graded | holders | kept})
    if keep:
        by_index = turns.by_index
        bound = graded | kept
        found.digests.update({p.id: passage_sha256(p, held[p.id].spans, by_index) for p in ps if p.id in bound})


def _among(keys: KeysView[str], wanted: Container[str]) -> set[str]:
    """The ``keys`` that ``wanted`` holds."""
    if isinstance(wanted, (set, frozenset, KeysView)):
        return keys & wanted
    return {k for k in keys if k in wanted}


def judge(queries: Iterable[Query], meetings: Iterable[Meeting], passages: Iterable[Passage],
          policy: RelevancePolicy) -> dict[str, QueryJudgements]:
    """Every query's judgements (``judge_all`` without the spans)."""
    return judge_all(queries, meetings, passages, policy).queries
