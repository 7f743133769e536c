"""A results directory is trusted only as written: a digest of its claim, and a document consistent with itself.

``write_digest`` records, beside the files, the sha256 of every file of a results directory except
``runinfo.json`` (timings legitimately differ between runs) in ``claim.sha256`` — the format ``sha256sum``
writes, so ``sha256sum -c claim.sha256`` checks it without turnbench. ``read_results`` refuses a directory
whose files do not match it, then checks the document itself: no NaN or infinity anywhere, every per-query
value a number in [0, 1], every row the mean of its per-query values (recomputed exactly as the scorer
computes it), and every answer's scores what its gold and submitted answers give under the recorded policy.
A hand-edited file is refused (exit 3) naming what differs; it can never pass a gate.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from turnbench.canonical import q6
from turnbench.corpus.records import Answer
from turnbench.errors import BadInput, ResultsIntegrityError
from turnbench.harness.answers import AnswerPolicy, AnswerResults, AnswerScore, score_answer
from turnbench.harness.rows import aggregate_rows
from turnbench.results.tables import query_values
from turnbench.submissions import SubmittedAnswer

# -- the document consistent with itself -----------------------------------------------------------------------


def check_document(doc: Any, where: str) -> None:
    """Refuse a metrics.json whose numbers disagree with each other; BadInput when it is not one at all."""
    if not isinstance(doc, Mapping):
        raise BadInput(f"{where}: metrics.json holds a {type(doc).__name__}, not a results document")
    for key in ("schema_version", "provenance", "scope", "retrieval"):
        if key not in doc:
            raise BadInput(f"{where}: metrics.json has no {key!r}; not a results document")
    if not _all_finite(doc):
        _check_finite(doc, where, "metrics.json")
    try:
        _check_retrieval(doc["retrieval"], where)
        for name in ("strict", "extra"):
            if name in doc:
                _check_retrieval(doc[name], where, name)
        if "answers" in doc:
            _check_answers(doc["answers"], where)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BadInput(f"{where}: metrics.json is malformed ({type(exc).__name__}: {exc})") from None


def _all_finite(value: Any) -> bool:
    """No NaN or infinity anywhere in ``value``: the C encoder refuses both, in a fraction of a walk's time (the
    walk then names where)."""
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


def _check_finite(value: Any, where: str, path: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ResultsIntegrityError(f"{where}: {path} is {value}, which no measure can be")
    if isinstance(value, Mapping):
        for k, v in value.items():
            _check_finite(v, where, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_finite(v, where, f"{path}[{i}]")


def _unit(value: Any, where: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ResultsIntegrityError(f"{where}: {what} is {value!r}, not a number in [0, 1]")
    return float(value)


def _check_retrieval(block: Mapping[str, Any], where: str, name: str = "retrieval") -> None:
    """Every per-query value a number in [0, 1]; every row — by class, and by class within each surface and domain —
    the mean of its per-query values, recomputed exactly as the scorer computes it."""
    measures = list(block["measures"])
    per_query = list(block["per_query"])
    # every value a float in [0, 1] (NaN is not) in one pass; otherwise the walk names the first that is not
    if not all(type(v) is float and 0.0 <= v <= 1.0 for r in per_query for v in r["values"].values()):
        for r in per_query:
            for m, v in r["values"].items():
                _unit(v, where, f"query {r['query_id']} {m}")
    tables: list[tuple[str | None, Any, list[Any]]] = [(None, None, list(block["rows"]))]
    for grouping in ("surface", "domain"):
        tables += [(grouping, value, rows) for value, rows in sorted(block.get(f"rows_by_{grouping}", {}).items())]
    queries = [query_values(r) for r in per_query]
    for key, value, rows in tables:
        mine = queries if key is None else [r for r in queries if (r.surface if key == "surface" else r.domain)
                                            == value]
        corpora = sorted({row["corpus"] for row in rows})
        for corpus in corpora:
            claimed = [row for row in rows if row["corpus"] == corpus]
            dropped = {row["class"]: row["dropped_unjudgeable"] for row in claimed if row["class"] != "all"}
            again = aggregate_rows(corpus, [r for r in mine if r.corpus == corpus], measures, dropped)
            _same_rows(claimed, [r.to_json() for r in again], where, name if key is None else f"{name} ({key} {value})")


def _same_rows(claimed: Sequence[Mapping[str, Any]], again: Sequence[Mapping[str, Any]], where: str,
               block: str) -> None:
    by_key = {(r["corpus"], r.get("class", r.get("rule")), r.get("surface"), r.get("grammar")): r for r in again}
    if len(claimed) != len(again):
        raise ResultsIntegrityError(f"{where}: the {block} block has {len(claimed)} rows, its per-query rows "
                                    f"give {len(again)}")
    for row in claimed:
        key = (row["corpus"], row.get("class", row.get("rule")), row.get("surface"), row.get("grammar"))
        mine = by_key.get(key)
        if mine is None:
            raise ResultsIntegrityError(f"{where}: {block} row {key[1]} is not one its per-query rows give")
        for k in sorted(set(row) | set(mine)):
            said, given = row.get(k), mine.get(k)
            if said == given:
                continue
            if isinstance(said, Mapping) and isinstance(given, Mapping):  # name the one measure that differs
                k = next(m for m in sorted(set(said) | set(given)) if said.get(m) != given.get(m))
                said, given = said.get(k), given.get(k)
            raise ResultsIntegrityError(
                f"{where}: {block} row {'/'.join(str(x) for x in key[1:] if x)} says {k} = {said!r}, "
                f"its per-query rows give {given!r}")


def _check_answers(block: Mapping[str, Any], where: str) -> None:

    again = rebuild(block)
    for claimed, mine in zip(block["per_query"], (s.recorded(r.corpus).to_json() for r in again for s in r.scores),
                             strict=True):
        for k in ("em", "partial", "set_f1", "answered"):
            if claimed.get(k) != mine.get(k):
                raise ResultsIntegrityError(
                    f"{where}: answer {claimed['query_id']} says {k} = {claimed.get(k)!r}, but its gold and "
                    f"submitted answers give {mine.get(k)!r}")
    _same_rows(list(block["rows"]), [row.to_json() for r in again for row in r.rows()], where, "answers")


def rebuild(block: Mapping[str, Any]) -> list[AnswerResults]:
    """The answer results an ``answers`` block records, re-scored from its gold and submitted answers under its
    recorded policy: what a block must equal to be trusted."""
    policy_json = block["policy"]
    policy = AnswerPolicy(policy_json["count_tolerance"], policy_json["set_credit"])
    # a corpus with no answer-scored query (QMSum) still has its rows, all counting 0 questions
    by_corpus: dict[str, list[AnswerScore]] = {str(row["corpus"]): [] for row in block["rows"]}
    for rec in block["per_query"]:
        gold = Answer.from_json(rec["gold"])
        given = Answer.from_json(rec["submitted"]) if rec["submitted"] is not None else None
        sub = SubmittedAnswer(str(rec["query_id"]), given, str(rec["mechanism"]),
                              {str(k): str(v) for k, v in dict(rec["intent"]).items()})
        em, partial, f1 = score_answer(gold, given, policy)
        by_corpus.setdefault(str(rec["corpus"]), []).append(
            AnswerScore(sub.query_id, str(rec["rule"]), str(rec["surface"]), str(rec["grammar"]), gold, sub, q6(em),
                        q6(partial), None if f1 is None else q6(f1), given is not None))
    return [AnswerResults(corpus, str(block["answerer"]), policy, tuple(sorted(scores, key=lambda s: s.query_id)))
            for corpus, scores in sorted(by_corpus.items())]
