"""One ``_msearch`` batch sent and its answers read (``engines.retrieval.run_queries`` sends them): each answer's hits
as columns, and every way a search can fail — a refused batch, an answer's error, a partial result, a hit without
its passage id — refused, never skipped. Either client a run searches with (``stack.clients.search_client``) fails
alike here."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from turnbench.errors import BadInput, SearchFailed

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

# Only what a run needs comes back: the passage id (from doc values), the score, and what proves completeness.
MSEARCH_FILTER = ",".join(f"responses.{k}" for k in ("hits.hits.fields", "hits.hits._score", "took", "timed_out",
                                                      "_shards", "error", "status"))


class _Fields(msgspec.Struct):
    passage_id: list[str]


class _Hit(msgspec.Struct):
    score: float = msgspec.field(name="_score")
    fields: _Fields


class _Hits(msgspec.Struct):
    hits: list[_Hit] = msgspec.field(default_factory=list)


class _Shards(msgspec.Struct):
    failed: int = 0


class _Answer(msgspec.Struct):
    """One query's answer as a run reads it; anything else in it (an error, a time-out, a failed shard, a hit that
    lacks a part) sends the whole batch to ``hits_of``, which refuses it by name."""

    took: float
    timed_out: bool = False
    shards: _Shards = msgspec.field(name="_shards", default_factory=_Shards)
    hits: _Hits = msgspec.field(default_factory=_Hits)
    error: Any = msgspec.UNSET


class _Batch(msgspec.Struct):
    responses: list[_Answer]


_DECODER = msgspec.json.Decoder(_Batch)

Answered = list[tuple[str, list[str], list[float], float]]  # per query: its id, its hits' ids and scores, took (s)


def answers(client: OpenSearch, payload: bytes, part: Sequence[tuple[str, Any]], known: Mapping[str, str] | None,
            where: str | None) -> Answered:
    """Each of ``part``'s queries (``payload``, the batch's bodies) answered: its hits as columns and the server's
    time. The light client's answer is decoded straight into records (``_Batch``: half the time of parsing it into
    dicts and reading those, for the same numbers — JSON's floats are read correctly rounded either way); any answer
    that does not fit them is read as dicts by ``hits_of``, which refuses it as it always has. ``known`` and
    ``where`` as ``hits_of`` takes them."""
    raw = getattr(client, "msearch_bytes", None)
    data = send_batch(client, payload, part, where, raw=raw is not None)
    if isinstance(data, bytes):
        try:
            batch = _DECODER.decode(data)
        except msgspec.DecodeError:  # not of that shape (or not JSON): json says what it is
            batch = None
        if batch is not None and not any(a.error is not msgspec.UNSET or a.timed_out or a.shards.failed
                                         for a in batch.responses):
            out: Answered = []
            for (qid, _body), a in zip(part, batch.responses, strict=True):
                pids = [h.fields.passage_id[0] if h.fields.passage_id else None for h in a.hits.hits]
                if None in pids:
                    break
                out.append((qid, pids if known is None else list(map(known.get, pids, pids)),  # type: ignore[arg-type]
                            [h.score for h in a.hits.hits], a.took / 1000.0))
            else:
                return out
        data = json.loads(data)
    return [(qid, *hits_of(qid, r, known, where)) for (qid, _body), r in zip(part, data["responses"], strict=True)]


def send_batch(client: OpenSearch, payload: bytes, part: Sequence[tuple[str, Any]], where: str | None, *,
               raw: bool = False) -> Any:
    """The answers to one batch of ``part``'s queries (their bytes, with ``raw``, from a client that hands them
    over); a batch the server refuses or does not answer is refused (``where``: the arm file whose request a 4xx
    rejects, BadInput naming it)."""
    try:
        if raw:
            return client.msearch_bytes(body=payload, filter_path=MSEARCH_FILTER)  # type: ignore[attr-defined]
        resp: dict[str, Any] = client.msearch(body=payload, filter_path=MSEARCH_FILTER)
    except Exception as exc:
        if not _transport_error(exc):
            raise
        status = exc.status_code if isinstance(exc.status_code, int) else 0  # type: ignore[attr-defined]
        if where is not None and 400 <= status < 500:
            raise BadInput(f"{where}: OpenSearch rejected the arm's request (queries {part[0][0]}..{part[-1][0]}): "
                           f"{_reason(exc.info)}") from None  # type: ignore[attr-defined]
        raise SearchFailed(f"queries {part[0][0]}..{part[-1][0]}: OpenSearch refused the _msearch batch: "
                           f"{exc}") from None
    return resp


def _transport_error(exc: Exception) -> bool:
    """Whether ``exc`` is a request the server refused or did not answer, from either client a run may search with
    (``stack.clients.search_client``)."""
    from turnbench.stack.clients import loaded_exceptions

    return any(isinstance(exc, found) for module in ("turnbench.stack.lightclient", "opensearchpy.exceptions")
               for found in loaded_exceptions(module, "TransportError"))


def _reason(error: Any) -> str:
    """The first root cause of an OpenSearch error, as its type and reason."""
    if isinstance(error, Mapping):
        inner = error.get("error", error)
        causes = inner.get("root_cause") if isinstance(inner, Mapping) else None
        first = causes[0] if isinstance(causes, list) and causes and isinstance(causes[0], Mapping) else inner
        if isinstance(first, Mapping):
            return f"{first.get('type', 'error')}: {first.get('reason', '')}"[:240]
    return str(error)[:240]


def hits_of(qid: str, r: Mapping[str, Any], known: Mapping[str, str] | None,
            where: str | None = None) -> tuple[list[str], list[float], float]:
    """One answer's hits as (passage ids, scores) and the server's time in seconds; ``known`` maps passage ids to the
    inventory's own strings, which the hits then share."""
    if "error" in r:
        status = r.get("status")
        if where is not None and isinstance(status, int) and 400 <= status < 500:
            raise BadInput(f"{where}: OpenSearch rejected the arm's request for query {qid}: {_reason(r['error'])}")
        raise SearchFailed(f"query {qid}: OpenSearch answered an error: {r['error']}")
    shards = r.get("_shards", {})
    if r.get("timed_out") or shards.get("failed", 0):  # a skipped shard could not match: not partial
        raise SearchFailed(f"query {qid}: partial result (timed out or shards failed): {shards}")
    hits = r.get("hits", {}).get("hits", ())  # filter_path drops an empty hit list entirely: no key means no hit
    try:  # a hundred thousand hits read by comprehensions; a hit lacking a part is found and named hit by hit
        pids = [hit["fields"]["passage_id"][0] for hit in hits]
        scores = [float(hit["_score"]) for hit in hits]
    except (KeyError, IndexError, TypeError, AttributeError):
        pids, scores = _hits_one_by_one(qid, hits)
    return (pids if known is None else list(map(known.get, pids, pids))), scores, r["took"] / 1000.0


def _hits_one_by_one(qid: str, hits: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[float]]:
    pids: list[str] = []
    scores: list[float] = []
    for rank, hit in enumerate(hits, 1):
        pid = hit.get("fields", {}).get("passage_id")
        if not pid:
            raise SearchFailed(f"query {qid}: hit {rank} carries no passage_id; the index is not a passage index")
        pids.append(pid[0])
        scores.append(float(hit["_score"]))
    return pids, scores
