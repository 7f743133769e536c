"""A Python engine run in-process over turnbench's own passages (the engine protocol: turnbench.engines.protocol).

The sequence mirrors an arm's run: verify the loaded index and its inventory → hand the engine every passage with
its text (``Engine.index``) → ask every retrieval-scored question, ``batch`` at a time → check each answer → ask
the first questions again (the same hits and scores, or NondeterministicRun) → the rerank stage, when the engine
declares one. What comes back is a :class:`RunResult` like an arm's, so judging, scoring, the gate and the report
never know which made it.

Latency is the wall time of each ``search`` call divided by the questions in it (one question per call unless
the engine sets ``batch``): what the engine costs in this process, measured where an arm's is measured by the
server (OpenSearch's ``took``). runinfo.json says which.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from typing import Any

from turnbench.corpus.format import Corpus
from turnbench.engines import fence
from turnbench.engines.protocol import EngineContext, EngineRef, Question, read_answers
from turnbench.engines.rerank import with_rerank
from turnbench.engines.retrieval import RunResult
from turnbench.errors import BadInput, NondeterministicRun, TurnbenchError
from turnbench.passages import Passage
from turnbench.rankings import Ranking
from turnbench.stack.info import StackInfo
from turnbench.vocab import get_scope

REPEATED_QUESTIONS = 10
LATENCY = "wall time of Engine.search in this process, per question (a call's time divided by its questions)"


def run_engine(stack: StackInfo, corpus: Corpus, ref: EngineRef, *, scope: str = "corpus", index: str | None = None,
               progress: Callable[[int, int], None] | None = None,
               inventory: tuple[Sequence[Passage], str] | None = None,
               texts: Sequence[Passage] | None = None) -> RunResult:
    """Run every retrieval-scored question of ``corpus`` through the engine, over the passages loaded into ``index``
    (``inventory``: the load's passages and sha256, as for ``run_arm``; ``texts``: the same passages with their
    texts, cut again from the corpus when not given)."""
    from turnbench.stack.clients import stack_errors

    sc = get_scope(scope)
    if sc.oracle:
        raise BadInput(f"engine {ref.name}: the {sc.name} scope restricts each search to the question's gold meetings, "
                       "which an engine is never told; bench an engine with the corpus scope")
    with stack_errors(stack):
        return _run_engine(stack, corpus, ref, sc.name, index, progress, inventory, texts)


def _run_engine(stack: StackInfo, corpus: Corpus, ref: EngineRef, scope: str, index: str | None,
                progress: Callable[[int, int], None] | None, inventory: tuple[Sequence[Passage], str] | None,
                texts: Sequence[Passage] | None) -> RunResult:
    from turnbench.engines import rerank
    from turnbench.engines.texts import TEXT_RULE, passages_with_texts
    from turnbench.engines.verified import verified_index
    from turnbench.loading.index import DEFAULT_INDEX, check_index_name

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    index = check_index_name(index or DEFAULT_INDEX)
    marker, passages, sha, _lines = verified_index(stack, corpus, index, inventory)
    if ref.rerank is not None:
        rerank.scorer(ref.rerank, f"engine {ref.name}")  # a stage that cannot load is refused before any question
    timings["verify_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    handed = tuple(texts) if texts is not None else passages_with_texts(corpus, marker)
    if [p.id for p in handed] != [p.id for p in passages]:
        raise BadInput(f"engine {ref.name}: the passages with texts are not the loaded inventory")
    timings["texts_s"] = time.perf_counter() - t0
    queries = sorted((q for q in corpus.queries() if q.scored_on == "retrieval"), key=lambda q: q.id)
    questions = [Question(q.id, q.text) for q in queries]
    per_query, latencies, repeat, notes = _index_and_ask(ref, handed, questions, progress, timings, EngineContext(
        corpus.id, ref.depth, stack.postgres_dsn, stack.opensearch_url, stack))
    entries = Ranking.build(per_query)

    config = {
        "arm": {"name": ref.name, "description": ref.description,
                "depth": ref.depth, "engine": ref.describe()},
        "scope": {"name": scope, "oracle": False, "label": get_scope(scope).label},
        "queries": {"scored_on": "retrieval", "count": len(questions)},
        "passages": {"max_words": marker["max_words"], "sha256": marker["passages_sha256"], "texts": TEXT_RULE},
        "repeat_check": repeat,
    }
    result = RunResult(arm_config=config, latencies=latencies, timings=timings, passages=passages,
                       passages_sha256=sha, entries=entries,
                       client={"client": "in-process Python engine", "batch": ref.batch, "latency": LATENCY,
                               **({"notes": notes} if notes else {})}, notes=tuple(notes))
    if ref.rerank is None:
        return result
    return with_rerank(result, ref.rerank, handed, queries, f"engine {ref.name}")


def _index_and_ask(ref: EngineRef, handed: Sequence[Passage], questions: Sequence[Question],
                   progress: Callable[[int, int], None] | None, timings: dict[str, float], context: EngineContext
                   ) -> tuple[list[tuple[str, list[str], list[float]]], list[float], dict[str, Any], list[str]]:
    """Index, ask every question, ask the first ones again; the engine's ``close`` (if it has one) is called at the
    end whatever happened, so an engine holding a connection or a temporary table leaves nothing behind. Every call
    is fenced (turnbench.engines.fence); the non-daemon threads the engine left running are named in the notes and
    not waited for when the process exits."""
    running = fence.threads()
    t0 = time.perf_counter()
    try:
        _call(ref, "index", lambda: ref.engine.index(handed, context))
        timings["index_s"] = time.perf_counter() - t0
        known = {p.id: p.id for p in handed}
        t0 = time.perf_counter()
        per_query, latencies = _ask(ref, questions, known, progress)
        timings["search_s"] = time.perf_counter() - t0
        timings["queries"] = float(len(questions))
        timings["queries_per_s"] = len(questions) / timings["search_s"] if timings["search_s"] > 0 else 0.0
        t0 = time.perf_counter()
        repeat = _repeat_check(ref, questions, known, per_query)
        timings["checks_s"] = time.perf_counter() - t0
    except BaseException:
        _close(ref, quiet=True)
        fence.threads_left(running)
        raise
    _close(ref, quiet=False)
    left = fence.threads_left(running)
    notes = [f"engine {ref.name} left {len(left)} thread(s) running ({', '.join(t.name for t in left[:3])}"
             f"{', …' if len(left) > 3 else ''}); turnbench does not wait for them"] if left else []
    return per_query, latencies, repeat, notes


def _close(ref: EngineRef, *, quiet: bool) -> None:
    try:
        close = _call(ref, "close", lambda: getattr(ref.engine, "close", None))
        if callable(close):
            _call(ref, "close", close)
    except TurnbenchError:
        if not quiet:  # a failure already on its way is the one to report
            raise


def _call(ref: EngineRef, method: str, fn: Callable[[], Any]) -> Any:
    """``fn()`` fenced (turnbench.engines.fence): an engine's own failure, whatever it raises, named as the engine's
    (a turnbench error it raises passes through); a fork it made killed and refused."""
    return fence.call(f"engine {ref.name}", method, fn)


def _ask(ref: EngineRef, questions: Sequence[Question], known: dict[str, str],
         progress: Callable[[int, int], None] | None) -> tuple[list[tuple[str, list[str], list[float]]], list[float]]:
    """Every question, ``ref.batch`` at a time: the checked answers and each question's share of its call's time."""
    per_query: list[tuple[str, list[str], list[float]]] = []
    latencies: list[float] = []
    for lo in range(0, len(questions), ref.batch):
        part = questions[lo:lo + ref.batch]
        # one fence around the call and the reading of what it returned (the engine's objects: len, iteration and
        # float are its code too); timed inside, so the latency is the engine's own, not the fence's checks
        read, took = _call(ref, "search", functools.partial(_search, ref, part, known))
        per_query.extend(read)
        latencies.extend([took / len(part)] * len(part))
        if progress is not None:
            progress(len(part), len(questions))
    return per_query, latencies


def _search(ref: EngineRef, part: Sequence[Question], known: dict[str, str]
            ) -> tuple[list[tuple[str, list[str], list[float]]], float]:
    """One ``search`` call's answers, read and checked, and the call's own time."""
    t0 = time.perf_counter()
    answer = ref.engine.search(list(part), ref.depth)
    took = time.perf_counter() - t0
    return read_answers(ref, part, answer, known), took


def _repeat_check(ref: EngineRef, questions: Sequence[Question], known: dict[str, str],
                  first: Sequence[tuple[str, list[str], list[float]]]) -> dict[str, Any]:
    """Refuse (NondeterministicRun) unless the first questions, asked again, get the same hits with the same scores:
    compared as sets of (passage, score), so tied hits returned in another order are the same answer (their order
    is rule 5's, never the engine's: docs/engines.md)."""
    sample = list(questions[:REPEATED_QUESTIONS])
    again, _ = _ask(ref, sample, known, None)
    for (qid, pids, scores), (_, pids2, scores2) in zip(first, again, strict=False):
        if set(zip(pids, scores, strict=True)) != set(zip(pids2, scores2, strict=True)):
            raise NondeterministicRun(f"engine {ref.name}: question {qid} asked twice got different hits; a run whose "
                                      "answers change cannot be reproduced or compared")
    return {"rule": f"the first {len(sample)} questions asked twice give the same hits and scores",
            "queries": len(sample)}
