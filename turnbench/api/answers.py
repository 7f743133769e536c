"""Answers from Python: answer a corpus's aggregation questions (or score another engine's answers) by exact match
and write the answers' results directory (``answer``); the answers block of a scored run at a glance
(``answers_overall``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnbench.api._args import PathLike, _corpus, _int, _path, _stack, _typed
from turnbench.api.results import Results

if TYPE_CHECKING:
    from turnbench.harness.answers import AnswerResults
    from turnbench.results.record import AnswerRow
    from turnbench.stack.info import StackInfo

CorpusLike = Any  # a Corpus or its directory
EXTERNAL = "external"


@dataclass(frozen=True)
class Answered:
    """A corpus's aggregation questions answered and scored: by whom (``answerer``; ``external`` for submitted
    answers), the scores, where the results directory was written."""

    corpus_id: str
    answerer: str
    results: AnswerResults
    out_dir: Path

    def grammar_rows(self) -> list[tuple[str, Any]]:
        """(label, row) per grammar — in grammar, OUT of grammar, all — each row with its questions, declined, EM
        and answered share (None when no question of the row was asked)."""
        from turnbench.harness.answers import GRAMMAR_LABELS

        return [(GRAMMAR_LABELS[row.grammar], row) for row in self.results.grammar_rows()]


def answer(corpus: CorpusLike, out: PathLike, *, answerer: str = "reference", tolerance: int = 0,
           index: str | None = None, answers: PathLike | None = None,
           stack: StackInfo | None = None, set_credit: str = "f1") -> Answered:
    """Answer a corpus's aggregation questions with ``answerer`` (reference: the intent parser and exact
    aggregations, on the stack that holds the corpus; none: declines everything) — or score another engine's
    ``answers`` (answers.jsonl; no stack needed) — by exact match (counts within ``tolerance``; a meeting set
    credited by ``set_credit``: f1, its set F1, or exact), and write the
    results directory ``out`` (answers.md, answers.json, answers.jsonl; new or empty). ``stack`` None: the recorded
    stack, held for reading, when the answerer needs one."""
    from turnbench.harness.answers import AnswerPolicy, score_answers
    from turnbench.pipeline.answering import answer as run_answers
    from turnbench.pipeline.answering import answer_provenance
    from turnbench.results.directory import write_answer_results
    from turnbench.stack import current_stack
    from turnbench.stack.state import use_lock
    from turnbench.submissions import read_answers

    target = _path(out, "out")
    _typed(answerer, str, "answerer", "an answerer's name (str)")
    _int(tolerance, "tolerance")
    _typed(set_credit, str, "set_credit", "f1 or exact (str)")
    AnswerPolicy(tolerance, set_credit)  # refused before any answer is asked for
    _typed(index, str, "index", "an index name (str)", optional=True)
    submitted_file = None if answers is None else _path(answers, "answers")
    _stack(stack, optional=True)
    opened = _corpus(corpus)
    used = None
    if submitted_file is not None:
        answerer = EXTERNAL
        submitted = read_answers(submitted_file)
        results = score_answers(opened.queries(), submitted, tolerance=tolerance, set_credit=set_credit,
                                corpus=opened.id, answerer=answerer)
    elif stack is not None:
        used = stack if answerer == "reference" else None
        results, submitted = run_answers(used, opened, answerer=answerer, tolerance=tolerance, index=index,
                                             set_credit=set_credit)
    else:
        with use_lock(writes=False):
            used = current_stack() if answerer == "reference" else None
            results, submitted = run_answers(used, opened, answerer=answerer, tolerance=tolerance, index=index,
                                             set_credit=set_credit)
    write_answer_results(target, results, submitted, answer_provenance(opened, used, answerer, index))
    return Answered(opened.id, answerer, results, target)


def answers_overall(results: Results) -> AnswerRow | None:
    """The answers a bench scored beside a run, over every question (rule, surface and grammar ``all``: questions,
    declined, EM, ...); None when the run has no answers."""
    answers = _typed(results, Results, "results", "Results").record.answers
    return answers.overall if answers is not None else None
