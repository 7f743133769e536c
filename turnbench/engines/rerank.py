"""The rerank stage: the first stage's top N rescored on the client, and the list scored in the order the stage
returns it (docs/arms.md, "A rerank stage").

The order, per query:

1. The first stage's list in the order it is scored — docs/design.md §3 rule 5: falling raw score, ties by the inventory
   order — so the stage sees exactly the candidates a metric of the first stage would.
2. Its first ``top`` passages are rescored by the scorer and put in falling stage score; two equal stage scores keep
   their first-stage order.
3. The passages beyond ``top`` follow, in their first-stage order. They are never mixed in by their raw scores:
   a first-stage score and a stage score are on different scales, and sorting one list by both floats whichever
   scale is larger to the top (the reference harness measured exactly that defect).
4. The final list is handed on with strictly decreasing scores by position (``n, n-1, ..., 1``), so the rule-5
   normalisation every run goes through finds it already in order and cannot move it.

Both stages' own scores stay visible: ``rerank.jsonl`` beside the results holds, per query and in the final order,
each passage's first-stage rank and raw score and its stage score (null beyond ``top``).

Scorers. An encoder (``scorer = "minilm-l6-v2-int8"``, any id ``turnbench.engines.encoders`` knows): the question
embedded as a query, each passage as a passage (cached, rounded to 6 decimals as every turnbench vector is), scored
by the exact integer dot product of the rounded unit vectors — a cosine no CPU can round differently. A
cross-encoder (``scorer = "cross-encoder"``): an ONNX model at a path the user gives, with its tokenizer.json, both
read from the bytes their sha256 pins; each (question, passage) pair is tokenized as the tokenizer's pair template
says (truncated to 512 tokens, longest first) and run alone (a quantised graph scales activations per batch
tensor, so a batched pair could score otherwise); its one output is the score, rounded to 6 decimals.

Determinism: the first queries' pairs are scored again after the stage and must give the same scores, or the run
is refused (NondeterministicRun), as a first stage is.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from turnbench import canonical
from turnbench.corpus.records import Query
from turnbench.engines.stages import CROSS_ENCODER, RerankSpec
from turnbench.errors import BadInput, NondeterministicRun
from turnbench.passages import Passage
from turnbench.rankings import Ranking, normalised_order

TRACE_FILE = "rerank.jsonl"
REPEATED_QUERIES = 10
MAX_TOKENS = 512
ORDER = ("the first stage's top passages by falling stage score (ties: first-stage order), then the rest in "
         "first-stage order; scores n..1 by final position")
CROSS_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class Staged(Protocol):
    """What a stage is applied to: a run result (turnbench.engines.retrieval.RunResult) with its entries."""

    @property
    def entries(self) -> Ranking: ...

    @property
    def timings(self) -> Mapping[str, float]: ...

    @property
    def arm_config(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=Staged)


class Scorer(Protocol):
    """Scores a question's candidates as whole numbers (higher is better); ``scale`` turns them into the shown
    score (``units / scale``)."""

    scale: int

    def config(self) -> dict[str, Any]: ...

    def score(self, query: Query, passages: Sequence[Passage]) -> list[int]: ...


@dataclass(frozen=True)
class Reranked:
    """A run after its rerank stage: the final entries, the first stage's, the stage scores and their cost."""

    entries: Ranking  # final order, strictly decreasing scores
    first: Ranking  # the first stage as it was handed over (raw scores)
    stage_units: Mapping[str, Sequence[int]]  # per query, the stage's whole-number scores of its top, final order
    scale: int
    config: dict[str, Any]
    latencies: Mapping[str, float]  # per reranked query (one the first stage answered), seconds
    timings: dict[str, float] = field(default_factory=dict)

    def trace(self, passages: Mapping[str, Passage]) -> bytes:
        """``rerank.jsonl``: per query (id order), in the final order, ``[passage, first-stage rank, first-stage raw
        score, stage score or null]``."""
        best: dict[str, Sequence[float]] = {}
        first = normalised_order(self.first, passages, best)
        lines = []
        for k, qid in enumerate(self.entries.query_ids):
            ids, _ = self.entries.hits(k)
            rank = {pid: r for r, pid in enumerate(first[qid], 1)}
            raw = dict(zip(first[qid], best[qid], strict=True))
            units = self.stage_units[qid]
            rows = [[pid, rank[pid], raw[pid], units[i] / self.scale if i < len(units) else None]
                    for i, pid in enumerate(ids)]
            lines.append(canonical.dumps_line({"query": qid, "passages": rows}))
        return b"".join(lines)


class EncoderScorer:
    """Cosine of a turnbench encoder's rounded unit vectors: the question as a query, passages as passages."""

    def __init__(self, name: str) -> None:
        from turnbench.engines import encoders

        self._encoder = encoders.get(name)
        self.scale = 10 ** 12  # two rounded components multiply to units of 1e-12

    def config(self) -> dict[str, Any]:
        from turnbench.engines.embeddings import ROUNDING

        return {"encoder": self._encoder.provenance(), "rounding": ROUNDING, "roles": {"question": "query",
                                                                                       "passage": "passage"},
                "similarity": "dot product of the rounded unit vectors as whole numbers (cosine, exact)"}

    def score(self, query: Query, passages: Sequence[Passage]) -> list[int]:
        import numpy as np

        from turnbench.engines.embeddings import embed

        q = embed(self._encoder, [(query.id, query.text)], role="query").micro[0].astype(np.int64)
        found = embed(self._encoder, [(p.id, p.text or "") for p in passages], role="passage")
        return [int(found.micro[found.index[p.id]].astype(np.int64) @ q) for p in passages]


class CrossEncoderScorer:
    """An ONNX cross-encoder a user gives: one output per (question, passage) pair, each pair run alone."""

    def __init__(self, spec: RerankSpec, where: str) -> None:
        from tokenizers import Tokenizer

        from turnbench.engines.encoders import onnx_runtime

        if spec.model is None or spec.tokenizer is None:
            raise BadInput(f"{where}: [rerank] a cross-encoder needs model and tokenizer")
        model, vocab = (_pinned_bytes(f, k, where) for f, k in ((spec.model, "model"), (spec.tokenizer, "tokenizer")))
        try:
            self._tokenizer = Tokenizer.from_str(vocab.decode("utf-8"))
        except Exception as exc:  # the tokenizers library raises its own exception types
            raise BadInput(f"{where}: [rerank] tokenizer {spec.tokenizer.path.name} is not a tokenizer.json the "
                           f"tokenizers library can read ({str(exc)[:120]})") from None
        self._tokenizer.enable_truncation(MAX_TOKENS, strategy="longest_first")
        self._tokenizer.no_padding()
        try:
            self._session = onnx_runtime.session(model)
        except Exception as exc:  # onnxruntime raises its own exception types
            raise BadInput(f"{where}: [rerank] model {spec.model.path.name} is not an ONNX model onnxruntime can load "
                           f"({str(exc)[:120]})") from None
        self._inputs = [i.name for i in self._session.get_inputs()]
        if "input_ids" not in self._inputs or set(self._inputs) - set(CROSS_INPUTS):
            raise BadInput(f"{where}: [rerank] model {spec.model.path.name} takes {', '.join(self._inputs)}; a "
                           f"cross-encoder takes input_ids and any of {', '.join(CROSS_INPUTS[1:])}")
        self.scale = 10 ** 6
        self._where, self._name = where, spec.model.path.name
        self._runtime = onnx_runtime.runtime_provenance()
        self._pair("a sample question", "a sample passage", "a sample pair")  # another shape: refused before any query

    def config(self) -> dict[str, Any]:
        return {"runtime": self._runtime, "inputs": list(self._inputs),
                "tokens": {"max": MAX_TOKENS, "truncation": "longest_first", "pair": "the tokenizer's own template",
                           "padding": "none: each pair runs alone"},
                "score": "the model's one output per pair, rounded to 6 decimals"}

    def _pair(self, question: str, text: str, pair: str) -> int:
        """The model's score of one pair, ``pair`` naming it (its query and passage) in a refusal."""
        import numpy as np

        enc = self._tokenizer.encode(question, text)
        columns = {"input_ids": enc.ids, "attention_mask": enc.attention_mask, "token_type_ids": enc.type_ids}
        feeds = {name: np.asarray([columns[name]], dtype=np.int64) for name in self._inputs}
        out = np.asarray(self._session.run(None, feeds)[0], dtype=np.float64)
        if out.size != 1:
            raise BadInput(f"{self._where}: [rerank] model {self._name} answers {pair} with {out.size} value(s) "
                           f"of shape {list(out.shape)}; a cross-encoder gives one finite score per pair")
        if not np.isfinite(out).all():
            raise BadInput(f"{self._where}: [rerank] model {self._name} scores {pair} {float(out.reshape(-1)[0])}; "
                           "a cross-encoder gives one finite score per pair")
        value = float(out.reshape(-1)[0])
        scaled = value * self.scale
        # a finite score beyond ±1.8e302 has no float times the scale: it is a whole number already, scaled exactly
        return int(np.rint(scaled)) if math.isfinite(scaled) else int(value) * self.scale

    def score(self, query: Query, passages: Sequence[Passage]) -> list[int]:
        return [self._pair(query.text, p.text or "", f"query {query.id} and passage {p.id}") for p in passages]


def _pinned_bytes(pinned: Any, key: str, where: str) -> bytes:
    """A stage file's bytes, refused unless they are still the ones its declaration pinned."""
    try:
        data: bytes = pinned.path.read_bytes()
    except OSError as exc:
        raise BadInput(f"{where}: [rerank] {key} {pinned.path.name} cannot be read ({exc.strerror})") from None
    if canonical.sha256_bytes(data) != pinned.sha256:
        raise BadInput(f"{where}: [rerank] {key} {pinned.path.name} changed after it was declared (sha256 "
                       f"{pinned.sha256[:12]}…); bench again")
    return data


_scorers: dict[tuple[str, str], Scorer] = {}


def scorer(spec: RerankSpec, where: str) -> Scorer:
    """The stage's scorer, built once per process and declaration: a model is loaded (and a cross-encoder's shape
    checked) before any query is sent."""
    key = (spec.scorer, canonical.dumps(spec.config()))
    if key not in _scorers:
        _scorers[key] = CrossEncoderScorer(spec, where) if spec.scorer == CROSS_ENCODER else EncoderScorer(spec.scorer)
    return _scorers[key]


def apply(first: Ranking, passages: Mapping[str, Passage], queries: Sequence[Query], spec: RerankSpec,
          where: str, stage: Scorer | None = None) -> Reranked:
    """The stage over ``first`` (what the first stage handed over; ``passages``: the inventory with texts), scored
    by ``stage`` (default: the declaration's own scorer)."""
    stage = stage or scorer(spec, where)
    t_all = time.perf_counter()
    order = normalised_order(first, passages)
    text_of = {q.id: q for q in queries}
    per_query, units, asked, latencies = [], {}, {}, {}
    for qid in sorted(order):
        ids = order[qid]
        top = [passages[pid] for pid in ids[:spec.top]]
        t0 = time.perf_counter()
        got = stage.score(text_of[qid], top)
        latencies[qid] = time.perf_counter() - t0
        new = sorted(range(len(top)), key=lambda i: (-got[i], i))
        final = [top[i].id for i in new] + list(ids[spec.top:])
        units[qid], asked[qid] = [got[i] for i in new], got
        per_query.append((qid, final, [float(len(final) - r) for r in range(len(final))]))
    seconds = time.perf_counter() - t_all
    t0 = time.perf_counter()
    repeat = _repeat_check(stage, order, passages, text_of, spec, asked, where)
    timings = {"rerank_s": seconds, "rerank_repeat_check_s": time.perf_counter() - t0,
               "rerank_pairs": float(sum(len(u) for u in units.values()))}
    config = {**spec.config(), **stage.config(), "order": ORDER, "repeat_check": repeat, "trace": TRACE_FILE}
    return Reranked(Ranking.build(per_query), first, units, stage.scale, config, latencies, timings)


def _repeat_check(stage: Scorer, order: Mapping[str, Sequence[str]], passages: Mapping[str, Passage],
                  queries: Mapping[str, Query], spec: RerankSpec, asked: Mapping[str, Sequence[int]],
                  where: str) -> dict[str, Any]:
    """Refuse (NondeterministicRun) unless the first queries' candidates, scored again, get the same scores."""
    sample = sorted(order)[:REPEATED_QUERIES]
    for qid in sample:
        again = stage.score(queries[qid], [passages[pid] for pid in order[qid][:spec.top]])
        if list(again) != list(asked[qid]):
            raise NondeterministicRun(f"{where}: [rerank] {spec.scorer}: query {qid} scored twice got different "
                                      "scores; a stage whose answers change cannot be reproduced or compared")
    return {"rule": f"the first {len(sample)} queries' pairs scored twice give the same scores",
            "queries": len(sample)}


def with_rerank(result: R, spec: RerankSpec, texts: Sequence[Passage], queries: Sequence[Query], where: str) -> R:
    """``result`` (a frozen dataclass: a RunResult) after its rerank stage: the stage's order is the run, its
    declaration and scorer in the resolved configuration, its time beside the first stage's."""
    from dataclasses import replace

    done = apply(result.entries, {p.id: p for p in texts}, queries, spec, where)
    return replace(result, entries=done.entries, rerank=done,  # type: ignore[type-var]
                   timings={**result.timings, **done.timings}, arm_config={**result.arm_config, "rerank": done.config})
