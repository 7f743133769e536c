"""engines.msearch: a batch's answers decoded straight into records give exactly what reading them as dicts gives
(ids, scores to the bit, the server's time), and any answer that does not fit — an error, a time-out, a failed
shard, a hit without its passage id, a batch that is not JSON — is read as dicts and refused as it always was."""

from __future__ import annotations

import json
import random
import struct

import pytest

from turnbench.engines.msearch import answers, hits_of
from turnbench.errors import SearchFailed


class Answering:
    """A client whose ``_msearch`` answer is these bytes: the transport is not what is tested here (the integration
    tests send real batches through both clients), the reading of what comes back is."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def msearch_bytes(self, *, body: bytes, filter_path: str) -> bytes:
        return self.data


def _answer(hits, took=7, **extra):
    return {"took": took, "timed_out": False, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"hits": hits}, "status": 200, **extra}


def _hit(pid, score):
    return {"_score": score, "fields": {"passage_id": [pid]}}


def _both(responses, part, known=None):
    data = json.dumps({"responses": responses}).encode()
    slow = [(qid, *hits_of(qid, r, known, None)) for (qid, _), r in zip(part, responses, strict=True)]
    return answers(Answering(data), b"", part, known, None), slow


def test_records_and_dicts_read_the_same_ids_scores_and_times(monkeypatch):
    from turnbench.engines import msearch

    def not_here(*args: object) -> None:
        raise AssertionError("a batch that fits the records was read as dicts")

    monkeypatch.setattr(msearch, "hits_of", not_here)  # the records are what is read here, not the dicts
    rng = random.Random(7)
    # scores as OpenSearch writes them (float32 values, shortest repr) and as any double's repr
    scores = [struct.unpack("f", struct.pack("f", rng.uniform(0, 40)))[0] for _ in range(5000)]
    scores += [rng.uniform(-1e6, 1e6) for _ in range(5000)] + [0, 1, 2.5, 1e-300, 5e-324, 1.7976931348623157e308]
    responses = [_answer([_hit(f"m{q}:{k:05d}", scores[(q * 100 + k) % len(scores)]) for k in range(100)], took=q)
                 for q in range(101)] + [{"took": 3, "_shards": {"failed": 0}}]  # no hits: no key at all
    part = [(f"q{q:03d}", None) for q in range(102)]
    fast, slow = _both(responses, part)
    assert fast == slow and len(fast) == 102 and fast[-1] == ("q101", [], [], 0.003)
    bits = [[struct.pack("d", s) for row in read for s in row[2]] for read in (fast, slow)]
    assert bits[0] == bits[1]
    ids = {f"m0:{k:05d}": f"m0:{k:05d}" for k in range(100)}
    fast, _ = _both(responses[:1], part[:1], ids)
    assert all(pid is ids[pid] for pid in fast[0][1])  # the inventory's own strings


@pytest.mark.parametrize("odd, refusal", [
    (_answer([], error={"type": "boom"}), r"^query q1: OpenSearch answered an error"),
    (_answer([], timed_out=True), r"^query q1: partial result"),
    ({**_answer([]), "_shards": {"failed": 1}}, r"^query q1: partial result"),
    (_answer([_hit("m:1", 1.0), {"_score": 1.0}]), r"^query q1: hit 2 carries no passage_id"),
    (_answer([_hit("m:1", 1.0), {"_score": 1.0, "fields": {"passage_id": []}}]), r"^query q1: hit 2 carries no"),
])
def test_an_answer_that_does_not_fit_is_refused_as_reading_it_as_dicts_refuses_it(odd, refusal):
    data = json.dumps({"responses": [_answer([_hit("m:0", 2.0)]), odd]}).encode()
    with pytest.raises(SearchFailed, match=refusal):
        answers(Answering(data), b"", [("q0", None), ("q1", None)], None, None)


def test_a_batch_that_is_not_json_fails_as_json_says():
    with pytest.raises(json.JSONDecodeError):
        answers(Answering(b"<html>gateway</html>"), b"", [("q0", None)], None, None)
