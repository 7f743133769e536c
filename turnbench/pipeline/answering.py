"""The answer stage: answer a corpus's aggregation questions on a stack and score them (docs/design.md §8).

``answer`` runs the answer engine and scores what it submitted; ``attach`` adds the scored answers to a retrieval
result, so any arm's results directory is complete on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from turnbench.corpus.format import Corpus
from turnbench.harness.answers import AnswerResults, answers_block
from turnbench.harness.score import ResultsFiles
from turnbench.render.markdown import render_answers_md
from turnbench.results.directory import ANSWERS_MD
from turnbench.stack.info import StackInfo
from turnbench.submissions import SubmittedAnswer


def answer(stack: StackInfo | None, corpus: Corpus, *, answerer: str = "reference", tolerance: int = 0,
           index: str | None = None, set_credit: str = "f1") -> tuple[AnswerResults, list[SubmittedAnswer]]:
    """Answer every answer-scored query of ``corpus`` on ``stack`` (which must hold it) and score them (counts
    within ``tolerance``; a meeting set credited by ``set_credit``: f1 or exact)."""
    from turnbench.engines.answer.engine import answer_queries
    from turnbench.harness.answers import score_answers

    queries = corpus.queries()
    submitted = answer_queries(stack, queries, answerer=answerer, index=index, corpus=corpus)
    return (score_answers(queries, submitted, tolerance=tolerance, set_credit=set_credit, corpus=corpus.id,
                          answerer=answerer), submitted)


def answer_provenance(corpus: Corpus, stack: StackInfo | None, answerer: str, index: str | None) -> dict[str, Any]:
    """What answers.json records about where its answers came from (docs/design.md §3 rule 1)."""
    from turnbench.engines.answer.mechanisms import MECHANISMS
    from turnbench.loading.index import DEFAULT_INDEX

    return {
        "corpus": corpus.provenance(),
        "stack": stack.versions() if stack is not None else f"not used by the {answerer} answerer",
        "index": (index or DEFAULT_INDEX) if stack is not None else "not used",
        "answerer": {"name": answerer, "mechanisms": dict(MECHANISMS) if answerer == "reference" else {},
                     "is_production_path": False},
    }


def attach(results: ResultsFiles, answer_results: Sequence[AnswerResults]) -> ResultsFiles:
    """``results`` with the ``answers`` block and answers.md."""
    return results.with_answers(answers_block(answer_results),
                              {ANSWERS_MD: render_answers_md(answer_results).encode("utf-8")})
