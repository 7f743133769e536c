"""Judgements: from a corpus's gold turn ranges to graded passages (DESIGN §6).

Relevance is keyed on turns, never on passage ids, so any chunking — ours or another engine's — is
judged against the same gold. The rule, stated once:

* A passage covers a turn of its own meeting when the turn's speaker is the passage's speaker and their
  times overlap by more than ``EPSILON_SECONDS``. The speaker restriction matters: in overlapping
  speech a neighbour's turn shares the passage's time window, and without it a neighbour's words would
  be attributed to the passage.
* A covered turn weighs ``words × (seconds inside the passage ÷ turn duration)``, words being
  ``len(text.split())``; a long monologue cut into sub-passages is thereby shared out by time.
* A zero-duration turn (end − start ≤ ``EPSILON_SECONDS``) has no seconds to share: it counts with its
  full word weight in every same-speaker passage whose closed interval ``[start, end]`` contains its
  instant (within ``EPSILON_SECONDS``). Two same-speaker passages that meet exactly at that instant both
  hold it; the harness cannot know which one an engine put it in, so neither is penalised.
* A query's gold ranges in one meeting are unioned into one set of turns before any grading, so two
  adjacent ranges cannot each fall short of a threshold that their union clears.
* coverage = Σ weight of covered gold turns ÷ Σ weight of all covered turns (0 when the passage covers
  only wordless turns). Grade 3 when the passage covers an answer turn; 2 when coverage ≥ high; 1 when
  coverage > low; else 0 (``RelevancePolicy``). Binary collapses every positive grade to 1.
* Qrels hold the positive grades only. Every other passage is unjudged, which for the measures reported
  here (nDCG@k with linear gain, recall@k, reciprocal rank) is the same as judged non-relevant: each
  scores zero gain and still takes its rank slot. Measures that separate the two (bpref, infAP) are
  not reported, so the qrels stay proportional to the gold rather than to the meetings.
* A turn-level query none of whose gold turns reaches a passage is dropped and counted
  (``queries_dropped_unjudgeable``): keeping it would score every system zero on it.
* Meeting level (every ranked class): qrels are the query's gold meetings at grade 1. A meeting-level
  query is unjudgeable only when none of its gold meetings holds a passage; a gold meeting without
  passages stays in the qrels (it lowers every arm's recall alike) and is counted.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from turnbench.corpus.records import Meeting, Query, Turn
from turnbench.errors import BadInput, ForeignInventory, StaleBinding
from turnbench.harness.inventory import problems_in
from turnbench.passages import Passage

EPSILON_SECONDS = 1e-6
ZERO_DURATION_RULE = (
    "a turn with end - start <= 1e-06 s counts with its full word weight in every same-speaker passage whose "
    "closed interval contains its start"
)
COVERAGE_RULE = (
    "same speaker and time overlap > 1e-06 s; weight = words x seconds inside / turn duration; "
    "coverage = gold weight / covered weight; gold ranges unioned per meeting"
)
GRADE_ANSWER = 3
GRADE_HIGH = 2
GRADE_LOW = 1


@dataclass(frozen=True)
class RelevancePolicy:
    """The grading thresholds as a value; its canonical string is what results files record and compare."""

    high: float = 0.5
    low: float = 0.0
    binary: bool = False

    def __post_init__(self) -> None:
        for name in ("high", "low"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
                raise BadInput(f"relevance {name} must be a number in [0, 1], not {v!r}")
            object.__setattr__(self, name, float(v))
        if self.low > self.high:
            raise BadInput(f"relevance low ({self.low}) must not exceed relevance high ({self.high})")
        if not isinstance(self.binary, bool):
            raise BadInput(f"binary relevance must be true or false, not {self.binary!r}")

    def __str__(self) -> str:
        return f"{'binary' if self.binary else 'graded'}(high={self.high!r},low={self.low!r})"

    @classmethod
    def parse(cls, text: str) -> RelevancePolicy:
        """Inverse of ``str``: ``graded(high=0.5,low=0.0)`` → ``RelevancePolicy(0.5, 0.0, False)``."""
        try:
            kind, rest = text.split("(", 1)
            fields = dict(part.split("=", 1) for part in rest.rstrip(")").split(","))
            if kind not in ("graded", "binary") or set(fields) != {"high", "low"}:
                raise ValueError
            return cls(float(fields["high"]), float(fields["low"]), kind == "binary")
        except ValueError:
            raise BadInput(f"{text!r} is not a relevance policy (expected e.g. 'graded(high=0.5,low=0.0)')") from None

    def grade(self, coverage: float, holds_answer: bool) -> int:
        if holds_answer:
            g = GRADE_ANSWER
        elif coverage >= self.high and coverage > 0.0:
            g = GRADE_HIGH
        elif coverage > self.low:
            g = GRADE_LOW
        else:
            g = 0
        return min(g, 1) if self.binary else g

    def to_json(self) -> dict:
        """Everything a reader needs to challenge a grade, written in full (DESIGN §3 rule 1)."""
        return {
            "name": str(self),
            "high": self.high,
            "low": self.low,
            "binary": self.binary,
            "grades": {"3": "covers an answer turn", "2": "coverage >= high", "1": "coverage > low", "0": "otherwise"}
            if not self.binary else {"1": "graded 1, 2 or 3 under the same thresholds", "0": "otherwise"},
            "gain": "linear (trec_eval)",
            "coverage": COVERAGE_RULE,
            "zero_duration_turns": ZERO_DURATION_RULE,
            "qrels": "positive grades only; unjudged passages score 0 and take a rank slot",
            "meeting_level": "gold meetings at grade 1; run collapsed to meetings by first occurrence",
        }


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


def turn_words(text: str) -> int:
    return len(text.split())


def covered_turns(passage: Passage, turns: Sequence[Turn]) -> tuple[tuple[int, float], ...]:
    """``(turn index, weight)`` for every turn ``passage`` covers, in turn order. ``turns`` are the meeting's."""
    out = []
    for t in turns:
        w = _weight(passage, t)
        if w is not None:
            out.append((t.index, w))
    return tuple(out)


def _weight(p: Passage, t: Turn, words: int | None = None) -> float | None:
    """The turn's weight inside the passage, or None when the passage does not cover it."""
    if t.speaker != p.speaker:
        return None
    if words is None:
        words = turn_words(t.text)
    duration = t.end - t.start
    if duration <= EPSILON_SECONDS:
        inside = p.start - EPSILON_SECONDS <= t.start <= p.end + EPSILON_SECONDS
        return float(words) if inside else None
    overlap = min(t.end, p.end) - max(t.start, p.start)
    if overlap <= EPSILON_SECONDS:
        return None
    return words * (min(overlap, duration) / duration)


def union_ranges(ranges: Iterable[tuple[int, int]]) -> frozenset[int]:
    """The turn indices of inclusive ``[first, last]`` ranges, unioned."""
    out: set[int] = set()
    for first, last in ranges:
        if last < first:
            raise BadInput(f"gold range [{first}, {last}] ends before it starts")
        out.update(range(first, last + 1))
    return frozenset(out)


class MeetingCover:
    """For one meeting: which passages cover which turns, with weights (computed once, shared by all queries)."""

    __slots__ = ("by_turn", "covered", "total")

    def __init__(self, meeting: Meeting, passages: Sequence[Passage]) -> None:
        by_speaker: dict[str, list[Turn]] = {}
        for t in meeting.turns:
            by_speaker.setdefault(t.speaker, []).append(t)
        starts: dict[str, list[float]] = {}
        max_len: dict[str, float] = {}
        for sp, spoken in by_speaker.items():
            spoken.sort(key=lambda t: (t.start, t.end, t.index))
            starts[sp] = [t.start for t in spoken]
            max_len[sp] = max(t.end - t.start for t in spoken)
        words = {t.index: turn_words(t.text) for t in meeting.turns}
        self.by_turn: dict[int, list[str]] = {}
        self.covered: dict[str, tuple[tuple[int, float], ...]] = {}
        self.total: dict[str, float] = {}
        for p in passages:
            ts = by_speaker.get(p.speaker)
            cov: list[tuple[int, float]] = []
            if ts:
                # a turn can only overlap p if it starts before p ends and ends after p starts; turns are
                # sorted by start, so the ones starting after p.end are cut off by bisect and the long-turn
                # bound limits how far back to look
                lo = bisect.bisect_left(starts[p.speaker], p.start - max_len[p.speaker] - 2 * EPSILON_SECONDS)
                hi = bisect.bisect_right(starts[p.speaker], p.end + EPSILON_SECONDS)
                for t in ts[lo:hi]:
                    w = _weight(p, t, words[t.index])
                    if w is not None:
                        cov.append((t.index, w))
            cov.sort()
            self.covered[p.id] = tuple(cov)
            self.total[p.id] = sum(w for _, w in cov)
            for i, _ in cov:
                self.by_turn.setdefault(i, []).append(p.id)


def covering(meeting: Meeting, passages: Sequence[Passage]) -> dict[str, tuple[int, ...]]:
    """For each passage of ``meeting``, the indices of the turns it covers (the rule above), in turn order."""
    cover = MeetingCover(meeting, passages)
    return {p.id: tuple(i for i, _ in cover.covered[p.id]) for p in passages}


def _grades_in(query: Query, meeting_id: str, cover: MeetingCover, policy: RelevancePolicy) -> dict[str, int]:
    """The positive grades of ``meeting_id``'s passages for ``query``: a meeting's grades need only its cover."""
    gold = union_ranges(query.gold_turns.get(meeting_id, ()))
    answer = frozenset(query.answer_turns.get(meeting_id, ()))
    candidates: set[str] = set()
    for i in gold | answer:
        candidates.update(cover.by_turn.get(i, ()))
    grades: dict[str, int] = {}
    for pid in candidates:
        cov = cover.covered[pid]
        total = cover.total[pid]
        coverage = (sum(w for i, w in cov if i in gold) / total) if total > 0.0 else 0.0
        holds = any(i in answer for i, _ in cov)
        g = policy.grade(coverage, holds)
        if g > 0:
            grades[pid] = g
    return grades


def _judgements(query: Query, grades: Mapping[str, int], covered: Container[str]) -> QueryJudgements:
    """``covered``: the meetings that have passages."""
    meetings = {m: 1 for m in sorted(query.gold_meetings)}
    without = sum(1 for m in meetings if m not in covered)
    if query.gold_level == "meeting":
        return QueryJudgements(query.id, query.cls, "meeting", {}, meetings, without < len(meetings), without)
    return QueryJudgements(query.id, query.cls, "turn", dict(sorted(grades.items())), meetings, bool(grades),
                           without)


def judge(queries: Iterable[Query], meetings: Iterable[Meeting], passages: Iterable[Passage],
          policy: RelevancePolicy, covered_of: Container[str] = (),
          covered_out: dict[str, tuple[int, ...]] | None = None,
          kept_out: dict[str, Meeting] | None = None,
          visit: Callable[[Meeting], None] | None = None) -> dict[str, QueryJudgements]:
    """Judge every query against a passage inventory. Passages must belong to the corpus's meetings.

    One pass over the meetings: each is checked against its passages, covered, and every query naming it in its
    gold or answer turns graded there; then its cover and text are dropped, so a large corpus is never held whole.
    ``covered_out`` receives the turns each passage covers, for the passages in ``covered_of`` and every passage
    that was graded; ``kept_out`` each meeting with only those turns (what the passages' bindings read); ``visit``
    sees every meeting as it passes (the queries' bindings are hashed there, not from a kept copy of the corpus:
    summaries' gold spans whole meetings)."""
    queries = sorted(queries, key=lambda q: q.id)
    touching: dict[str, list[Query]] = {}  # graded in the meeting
    for q in queries:
        for mid in sorted(set(q.gold_turns) | set(q.answer_turns)):
            if q.gold_level != "meeting":
                touching.setdefault(mid, []).append(q)
    by_meeting: dict[str, list[Passage]] = {}
    for p in passages:
        by_meeting.setdefault(p.meeting, []).append(p)
    grades: dict[str, dict[str, int]] = {q.id: {} for q in queries}
    known: set[str] = set()
    foreign: list[str] = []
    stale: list[str] = []
    for m in meetings:
        known.add(m.id)
        if visit is not None:
            visit(m)
        ps = by_meeting.get(m.id, [])
        wanted: dict[str, tuple[int, ...]] = {}
        if ps:
            wrong_place, wrong_text = problems_in(m, ps)
            foreign += wrong_place
            stale += wrong_text
            cover = MeetingCover(m, ps)
            graded: set[str] = set()
            for q in touching.get(m.id, ()):
                here = _grades_in(q, m.id, cover, policy)
                grades[q.id].update(here)
                graded.update(here)
            wanted = {p.id: tuple(i for i, _ in cover.covered[p.id]) for p in ps
                      if p.id in graded or p.id in covered_of}
        if covered_out is not None:
            covered_out.update(wanted)
        if kept_out is not None and wanted:
            turns = {i for idx in wanted.values() for i in idx}
            kept_out[m.id] = replace(m, turns=tuple(t for t in m.turns if t.index in turns), agenda=(), meta={})
    unknown = sorted(set(by_meeting) - known)
    if unknown:
        raise ForeignInventory(f"the passage inventory names {len(unknown)} meeting(s) that are not in the corpus, "
                               f"e.g. {', '.join(unknown[:3])}")
    if foreign:
        raise ForeignInventory(f"{len(foreign)} passage(s) of the inventory do not fit this corpus; first: "
                               f"{foreign[0]}")
    if stale:
        raise StaleBinding(f"{len(stale)} passage(s) of the inventory carry text this corpus does not; first: "
                           f"{stale[0]}")
    return {q.id: _judgements(q, grades[q.id], by_meeting) for q in queries}

