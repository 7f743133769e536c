"""Answer scoring for aggregation questions (docs/design.md §8) and the answers.md / metrics.json ``answers`` block.

Exact match is the measure; everything else is a diagnostic beside it:

* a count is exact within ``count_tolerance`` (default 0, written into every result); partial = EM;
* a meeting set is exact for EM; set F1 is reported beside it and is the partial credit unless the
  policy says ``set_credit="exact"``;
* a speaker answer needs name and count for EM; partial is the share of the two fields that are right;
  names compare casefolded with whitespace collapsed — the only tolerance anywhere;
* an unanswered (declined or missing) query scores 0 and is counted: the gold query set is iterated, never
  the submissions (``trec_eval -c`` semantics), and ``answered`` is reported beside EM.

Column names are deliberately disjoint from the retrieval table's (``questions``/``declined``/``em``/
``partial``/``answered``/``set_f1``), so an answer score cannot be read as a retrieval score.
Scoring may read ``Query.meta["grammar"]`` (to label out-of-grammar surfaces); answerers never may.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from turnbench.canonical import q6
from turnbench.corpus.records import AGGREGATION_RULES, Answer, Query
from turnbench.errors import BadInput
from turnbench.results.record import AnswerQuery, AnswerRow, Answers
from turnbench.submissions import SubmittedAnswer

SET_CREDITS = ("f1", "exact")
NAME_MATCH = "casefold, whitespace collapsed"
GRAMMAR_IN = "in"
GRAMMAR_OUT = "out"
ALL = "all"
# The per-query and per-row measures, in report order. None of these names is a retrieval column.
MEASURES = ("em", "partial", "answered", "set_f1")
@dataclass(frozen=True)
class AnswerPolicy:
    """The scoring rules as values, so each one is written into the results and can be challenged."""

    count_tolerance: int = 0
    set_credit: str = "f1"

    def __post_init__(self) -> None:
        if isinstance(self.count_tolerance, bool) or not isinstance(self.count_tolerance, int) \
                or self.count_tolerance < 0:
            raise BadInput(f"count tolerance must be a non-negative integer, not {self.count_tolerance!r}")
        if self.set_credit not in SET_CREDITS:
            raise BadInput(f"set credit must be one of {', '.join(SET_CREDITS)}, not {self.set_credit!r}")

    def to_json(self) -> dict[str, Any]:
        return {"count_tolerance": self.count_tolerance, "set_credit": self.set_credit, "name_match": NAME_MATCH,
                "unanswered": "scored 0 and counted"}


@dataclass(frozen=True)
class AnswerScore:
    """One query's scores. ``set_f1`` is ``None`` unless the gold answer is a meeting set."""

    query_id: str
    rule: str
    surface: str
    grammar: str
    gold: Answer
    submitted: SubmittedAnswer
    em: float
    partial: float
    set_f1: float | None
    answered: bool

    def recorded(self, corpus: str) -> AnswerQuery:
        """This score as the results record holds it (the answers block's ``per_query``)."""
        sub = self.submitted
        return AnswerQuery(self.query_id, corpus, self.rule, self.surface, self.grammar, self.answered, self.em,
                           self.partial, self.set_f1, self.gold.to_json(),
                           sub.answer.to_json() if sub.answer is not None else None,
                           {k: sub.intent[k] for k in sorted(sub.intent)}, sub.mechanism)


@dataclass(frozen=True)
class AnswerResults:
    """Every answer-scored query of one corpus, scored under one policy, by one answerer."""

    corpus: str
    answerer: str
    policy: AnswerPolicy
    scores: tuple[AnswerScore, ...]  # sorted by query id

    def rule_rows(self) -> list[AnswerRow]:
        rules = sorted({s.rule for s in self.scores}, key=_rule_key)
        rows = [_row(self.corpus, r, ALL, ALL, [s for s in self.scores if s.rule == r]) for r in rules]
        rows.append(_row(self.corpus, ALL, ALL, ALL, self.scores))
        return rows

    def grammar_rows(self) -> list[AnswerRow]:
        return [_row(self.corpus, ALL, ALL, g, [s for s in self.scores if s.grammar == g])
                for g in (GRAMMAR_IN, GRAMMAR_OUT)] + [_row(self.corpus, ALL, ALL, ALL, self.scores)]

    def surface_rows(self) -> list[AnswerRow]:
        keys = sorted({(s.rule, s.surface) for s in self.scores}, key=lambda k: (_rule_key(k[0]), k[1]))
        rows = []
        for rule, surface in keys:
            group = [s for s in self.scores if s.rule == rule and s.surface == surface]
            grammars = {s.grammar for s in group}
            rows.append(_row(self.corpus, rule, surface, grammars.pop() if len(grammars) == 1 else "mixed", group))
        return rows

    def rows(self) -> list[AnswerRow]:
        """Every row once: per rule, per surface, per grammar side, and ``all``."""
        by_rule = self.rule_rows()
        return by_rule[:-1] + self.surface_rows() + self.grammar_rows()[:-1] + by_rule[-1:]

    def em_by_query(self) -> dict[str, float]:
        return {s.query_id: s.em for s in self.scores}


def _rule_key(rule: str) -> tuple[int, str]:
    return (AGGREGATION_RULES.index(rule) if rule in AGGREGATION_RULES else len(AGGREGATION_RULES), rule)


def _mean(values: Sequence[float]) -> float | None:
    # the caller passes values in query-id order, so the float sum cannot depend on dict or set order
    return q6(math.fsum(values) / len(values)) if values else None


def _row(corpus: str, rule: str, surface: str, grammar: str, group: Sequence[AnswerScore]) -> AnswerRow:
    group = sorted(group, key=lambda s: s.query_id)
    f1s = [s.set_f1 for s in group if s.set_f1 is not None]
    return AnswerRow(corpus, rule, surface, grammar, len(group), sum(1 for s in group if not s.answered),
                     _mean([s.em for s in group]), _mean([s.partial for s in group]),
                     _mean([1.0 if s.answered else 0.0 for s in group]), _mean(f1s))


def normalise_name(name: str) -> str:
    """The only tolerance in answer scoring: casefold and collapse whitespace."""
    return " ".join(name.casefold().split())


def set_f1(submitted: Iterable[str], gold: Iterable[str]) -> float:
    """F1 of two meeting sets; two empty sets agree perfectly (a correct answer of "none")."""
    s, g = set(submitted), set(gold)
    if not s and not g:
        return 1.0
    return 2.0 * len(s & g) / (len(s) + len(g))


def score_answer(gold: Answer, submitted: Answer | None, policy: AnswerPolicy = AnswerPolicy()
                 ) -> tuple[float, float, float | None]:
    """(em, partial, set_f1) of one submitted answer against its gold answer; ``None`` = declined."""
    is_set = gold.type == "meeting_set"
    if submitted is None or submitted.type != gold.type:
        return 0.0, 0.0, (0.0 if is_set else None)
    if gold.type == "count":
        ok = _count_ok(submitted.count, gold.count, policy)
        return float(ok), float(ok), None
    if is_set:
        exact = set(submitted.meetings or ()) == set(gold.meetings or ())
        f1 = set_f1(submitted.meetings or (), gold.meetings or ())
        return float(exact), (f1 if policy.set_credit == "f1" else float(exact)), f1
    if gold.type == "speaker_count":
        name_ok = submitted.speaker is not None and gold.speaker is not None \
            and normalise_name(submitted.speaker) == normalise_name(gold.speaker)
        count_ok = _count_ok(submitted.count, gold.count, policy)
        return float(name_ok and count_ok), (int(name_ok) + int(count_ok)) / 2.0, None
    raise BadInput(f"unknown gold answer type {gold.type!r}")


def _count_ok(submitted: int | None, gold: int | None, policy: AnswerPolicy) -> bool:
    if submitted is None or gold is None or isinstance(submitted, bool):
        return False
    return abs(int(submitted) - int(gold)) <= policy.count_tolerance


def answer_queries_of(queries: Iterable[Query]) -> list[tuple[Query, Answer]]:
    """The answer-scored queries with their gold answers, sorted by id; each must carry one."""
    out = []
    for q in queries:
        if q.scored_on != "answer":
            continue
        if q.answer is None:
            raise BadInput(f"query {q.id} is scored on the answer but has no gold answer")
        out.append((q, q.answer))
    return sorted(out, key=lambda qa: qa[0].id)


def score_answers(queries: Iterable[Query], submitted: Iterable[SubmittedAnswer], *, tolerance: int = 0,
                  set_credit: str = "f1", corpus: str = "corpus", answerer: str = "unnamed") -> AnswerResults:
    """Score submissions against every answer-scored query of ``queries``.

    A query with no submission scores 0 and counts as declined; a submission for a query that is not in the
    gold set, or two for one query, is refused rather than silently dropped."""
    policy = AnswerPolicy(tolerance, set_credit)
    gold_queries = answer_queries_of(queries)
    by_id: dict[str, SubmittedAnswer] = {}
    for sub in submitted:
        if sub.query_id in by_id:
            raise BadInput(f"two answers were submitted for query {sub.query_id}")
        by_id[sub.query_id] = sub
    unknown = sorted(set(by_id) - {q.id for q, _ in gold_queries})
    if unknown:
        raise BadInput(f"{len(unknown)} answers name queries that are not answer-scored in this corpus, "
                       f"e.g. {', '.join(unknown[:3])}")
    scores = []
    for q, gold in gold_queries:
        sub = by_id.get(q.id) or SubmittedAnswer(q.id, None, "declined", {"reason": "no answer submitted"})
        em, partial, f1 = score_answer(gold, sub.answer, policy)
        scores.append(AnswerScore(q.id, q.rule, q.surface, _grammar(q), gold, sub, q6(em), q6(partial),
                                  None if f1 is None else q6(f1), sub.answer is not None))
    return AnswerResults(corpus, answerer, policy, tuple(scores))


def _grammar(q: Query) -> str:
    return GRAMMAR_OUT if q.meta.get("grammar") == GRAMMAR_OUT else GRAMMAR_IN


# -- reports ---------------------------------------------------------------------------------------------


def check_same(results: Sequence[AnswerResults]) -> tuple[str, AnswerPolicy]:
    if not results:
        raise BadInput("no answer results to report")
    answerers = {r.answerer for r in results}
    policies = {r.policy for r in results}
    if len(answerers) != 1 or len(policies) != 1:
        raise BadInput("answer results of different answerers or policies cannot share one report")
    return answerers.pop(), policies.pop()


def answers_block(results: Sequence[AnswerResults]) -> Answers:
    """The ``answers`` block of a results record: policy, rows and per-query records, all in sorted order."""
    answerer, policy = check_same(results)
    results = sorted(results, key=lambda r: r.corpus)
    return Answers(answerer, policy.to_json(),
                   tuple(row for r in results for row in r.rows()),
                   tuple(s.recorded(r.corpus) for r in results for s in r.scores), mechanisms_used(results))


GRAMMAR_LABELS = {GRAMMAR_IN: "in grammar", GRAMMAR_OUT: "OUT of grammar", ALL: "all", "mixed": "mixed"}


def mechanisms_used(results: Sequence[AnswerResults]) -> dict[str, int]:
    """How many answers each mechanism produced, for the report's provenance."""
    counts: dict[str, int] = {}
    for r in results:
        for s in r.scores:
            counts[s.submitted.mechanism] = counts.get(s.submitted.mechanism, 0) + 1
    return dict(sorted(counts.items()))
