"""Answerers: ``none`` (declines everything — the floor) and ``reference`` (intent parser + exact mechanisms).

``answer_queries`` answers every answer-scored query of a corpus. The reference answerer sees only the
question text and the stack's product data; it never reads gold, facts or any ``meta`` field.
"""

from __future__ import annotations

from collections.abc import Iterable

from turnbench.corpus.format import Corpus
from turnbench.corpus.records import Query
from turnbench.errors import BadInput
from turnbench.stack.info import StackInfo
from turnbench.submissions import SubmittedAnswer, declined

ANSWERERS = ("reference", "none")


def answer_queries(stack: StackInfo | None, queries: Iterable[Query], *, answerer: str = "reference",
                   index: str | None = None, corpus: Corpus | None = None) -> list[SubmittedAnswer]:
    """One :class:`SubmittedAnswer` per answer-scored query, sorted by query id.

    ``stack`` is the stack description (endpoints); ``index`` overrides the passage index name. Given the
    ``corpus``, the stack must hold exactly it, settled, before a question is answered (else a refusal)."""
    if answerer not in ANSWERERS:
        raise BadInput(f"unknown answerer {answerer!r}; choose one of {', '.join(ANSWERERS)}")
    todo = sorted((q for q in queries if q.scored_on == "answer"), key=lambda q: q.id)
    if answerer == "none":
        return [declined(q.id, "the none answerer declines every question") for q in todo]
    if stack is None:
        raise BadInput("the reference answerer needs a stack holding the corpus")
    from turnbench.engines.answer.mechanisms import ReferenceAnswerer
    from turnbench.stack.clients import stack_errors

    with stack_errors(stack):
        if corpus is not None:
            from turnbench.loading.index import DEFAULT_INDEX
            from turnbench.loading.settled import loaded_marker

            loaded_marker(stack, corpus, index=index or DEFAULT_INDEX)
        with ReferenceAnswerer.connect(stack, index=index) as ref:
            return [ref.answer(q.id, q.text) for q in todo]
