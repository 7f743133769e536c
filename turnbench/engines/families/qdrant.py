"""Qdrant arms (``engine = "qdrant"``): Qdrant's own engine in-process (qdrant-edge-py, pinned), one shard built from
the load's passages per run.

An arm declares the shard in its ``[qdrant]`` table — at least one of::

    bm25 = { k = 1.2, b = 0.75, avg_len = 32.0, language = "english" }
                                  # a sparse vector "bm25": each passage's BM25 term weights by qdrant-edge's own
                                  # Bm25 model (its tokenizer, the language's stop words and stemmer), the IDF left
                                  # to the shard (modifier "idf")
    modifier = "idf"              # optional: the sparse vector's modifier, "idf" (default) or "none"
    dense = { encoder = "minilm-l6-v2-int8", distance = "cosine" }
                                  # a dense vector "dense": a turnbench encoder's cached, rounded vectors (passages
                                  # as passages, the question as a query); distance cosine, dot or euclid

and its body is a Qdrant query request, as JSON (the shape of Qdrant's Query API), with the placeholders
``{{query_text}}`` (a string), ``{{query_vector}}`` (the question's vector by the dense encoder) and ``{{depth}}``::

    {"prefetch": [{"query": {"text": {{query_text}}}, "using": "bm25", "limit": {{depth}}},
                  {"query": {{query_vector}}, "using": "dense", "limit": {{depth}}}],
     "query": {"rrf": {"k": 60, "weights": [1.0, 1.0]}}, "params": {"exact": true}}

A request holds ``query`` and ``using`` and may hold ``params`` (``exact``, ``hnsw_ef``); or it holds a
``prefetch`` list of such requests, each with its ``limit``, and ``"query": {"rrf": {"k": K, "weights": [...]}}``.
A query is ``{"text": ...}`` on the sparse vector (embedded as a query by the shard's Bm25 model) or a list of
numbers on the dense one. ``limit`` of the request itself is the arm's depth: turnbench owns it. Every key is checked
when the file is read, and the request is built from sample values before any stack starts.

Built and read back. The shard is created in a temporary directory (removed when the run ends) with the declared
vectors; points are the inventory in order (point id = position), each with its passage id and the build's id in its
payload. The build — encoder and its provenance, the Bm25 model's settings, the modifier, the distance — is a record
whose sha256 names it (``build``); a shard whose points do not all carry the declared build is refused as a mixed
build. After the load, before any question, the configuration the shard stored (its ``edge_config.json``) is read back
and compared with the declared one: a vector, a size, a distance or a modifier missing or different refuses the arm
(``SettingIgnored``, exit 3, one line), as do a point count that is not the inventory's and a point of another build.

The same bytes in every process. qdrant-edge orders equal scores differently from one process to the next, and a BM25
score's last bit moves with the order its sum over terms runs in. So each query asks the engine for twice its limit;
a BM25 score is made again as the exact sum (``math.fsum``) of the engine's score of the point for each query term
alone; hits go in (-score, inventory position) order and are cut by turnbench, a query whose kept scores reach
(within :data:`NOISE`) the last one returned being asked again deeper. RRF fuses those lists with qdrant-edge's own
formula (:func:`fuse_rrf`), computed here: the engine's fusion of its own tie orders is not the same twice.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.canonical import OWNER
from turnbench.engines.families.qdrant_request import DENSE, DISTANCES, SPARSE, fill

# the family interface's: the arm file's table and its checking (turnbench.engines.families)
from turnbench.engines.families.qdrant_request import TABLE as TABLE
from turnbench.engines.families.qdrant_request import parse as parse
from turnbench.errors import BadInput, SettingIgnored
from turnbench.processes import is_running, start_ticks

PLACEHOLDERS = ("query_text", "query_vector", "depth")
BATCH = 16
PACKAGE = "qdrant-edge-py"
UPSERT = 1000
MAX_LIMIT = 10000
SHARD_PREFIX = "turnbench-qdrant-"
NOISE = 1e-5  # relative: far above the last-bit differences of a float32 score between processes
THREADS = 1  # the shard's search pool: one thread, on a machine whose cores the stack shares
VERIFIED = ("after the load, before any question: the shard's stored configuration (edge_config.json: each vector, "
            "its size and distance, the sparse modifier) against the declared one; the point count; every point's "
            "build (encoder, tokenizer and settings) against the declared build")


def versions() -> dict[str, str]:
    from importlib import metadata

    try:
        return {PACKAGE: metadata.version(PACKAGE)}
    except metadata.PackageNotFoundError:
        raise BadInput(f"an arm on qdrant needs {PACKAGE} (pinned in pyproject.toml; `make setup` installs it)") \
            from None


def build_record(settings: Mapping[str, Any]) -> dict[str, Any]:
    """What the shard is built under: encoder (with its provenance), tokenizer and settings; its sha256 is the
    build's id, carried by every point."""
    out: dict[str, Any] = {"qdrant_edge": versions()[PACKAGE]}
    if SPARSE in settings:
        out["sparse"] = {"name": SPARSE, "model": "qdrant_edge.Bm25", "config": dict(settings[SPARSE]),
                         "effective": bm25_effective(settings[SPARSE]), "modifier": settings["modifier"]}
    if DENSE in settings:
        from turnbench.engines import encoders

        enc = encoders.get(settings[DENSE]["encoder"])
        out["dense"] = {"name": DENSE, "encoder": enc.provenance(), "dim": enc.dim,
                        "distance": settings[DENSE]["distance"], "rounding": "6 decimals (turnbench's cache)"}
    return out


def bm25_effective(declared: Mapping[str, Any]) -> dict[str, Any]:
    """The Bm25 model's settings as qdrant-edge reads them back, each default written out (docs/design.md §3 rule 1):
    what the tokenizer, stop words and stemmer are when the arm does not say."""
    from qdrant_edge import Bm25Config

    c = Bm25Config(**declared)
    language = c.language or "english"
    return {"k": c.k, "b": c.b, "avg_len": c.avg_len, "tokenizer": str(c.tokenizer).rsplit(".", 1)[-1],
            "language": language, "lowercase": True if c.lowercase is None else c.lowercase,
            "ascii_folding": False if c.ascii_folding is None else c.ascii_folding,
            "stopwords": f"{language}'s" if c.stopwords is None else repr(c.stopwords),
            "stemmer": f"{language}'s" if c.stemmer is None else repr(c.stemmer),
            "min_token_len": c.min_token_len, "max_token_len": c.max_token_len}


def check(arm: Any) -> None:
    """The arm's request and Bm25 model built from sample values: what qdrant-edge would refuse is refused before
    any stack starts."""
    where = f"{arm.file_name}"
    try:
        model = _bm25_model(arm.settings) if SPARSE in arm.settings else None
        _request(fill(arm.body, "a sample question", [0.0] * 4, arm.depth, where), model, arm.depth)
    except (ValueError, TypeError) as exc:
        raise BadInput(f"{where}: qdrant-edge refuses the arm ({str(exc).splitlines()[0][:200]})") from None


def open(arm: Any) -> QdrantStore:  # noqa: A001 - the family interface's name
    return QdrantStore(arm)


def _bm25_model(settings: Mapping[str, Any]) -> Any:
    from qdrant_edge import Bm25, Bm25Config

    return Bm25(Bm25Config(**settings[SPARSE]))


def _request(req: Mapping[str, Any], model: Any, depth: int, *, top: bool = True) -> Any:
    """The qdrant_edge request (or prefetch) a checked JSON request stands for."""
    from qdrant_edge import Fusion, Prefetch, Query, QueryRequest, SearchParams

    query = req["query"]
    if isinstance(query, dict) and "rrf" in query:
        scoring: Any = Fusion.Rrf(int(query["rrf"]["k"]), [float(w) for w in query["rrf"]["weights"]]
                                  if query["rrf"].get("weights") is not None else None)
    elif req.get("using") == SPARSE:
        scoring = Query.Nearest(model.embed_query(query["text"]), using=SPARSE)
    else:
        scoring = Query.Nearest([float(x) for x in query], using=DENSE)
    prefetches = [_request(p, model, depth, top=False) for p in req.get("prefetch", [])] or None
    params = SearchParams(**req["params"]) if "params" in req else None
    if top:
        return QueryRequest(limit=depth, query=scoring, prefetches=prefetches, params=params, with_payload=False)
    return Prefetch(limit=int(req["limit"]), query=scoring, prefetches=prefetches, params=params)


def fuse_rrf(lists: Sequence[Sequence[tuple[int, float]]], k: int, weights: Sequence[float] | None
             ) -> list[tuple[int, float]]:
    """Qdrant's reciprocal rank fusion of ranked lists: a point at 0-based rank ``r`` of a list of weight ``w``
    scores ``1 / (k - 1 + (r + 1) / w)`` (with weight 1, ``1 / (k + r)``), summed over the lists; (-score,
    position) order. The formula is qdrant-edge's own (tests/unit/engines/test_qdrant_family.py holds it to the
    engine's fusion on a shard without ties)."""
    ws = [1.0] * len(lists) if weights is None else [float(w) for w in weights]
    parts: dict[int, list[float]] = {}
    for hits, w in zip(lists, ws, strict=True):
        for r, (n, _) in enumerate(hits):
            parts.setdefault(n, []).append(1.0 / (k - 1 + (r + 1) / w))
    return sorted(((n, math.fsum(v)) for n, v in parts.items()), key=lambda h: (-h[1], h[0]))


def _sweep_stale_shards() -> None:
    """Remove the shard directories of runs killed outright (SIGKILL: nothing of theirs ran to remove them): only
    those whose recorded owner process is gone, so a bench running beside this one keeps its own."""
    for stage in Path(tempfile.gettempdir()).glob(f"{SHARD_PREFIX}*"):
        try:
            owner = json.loads((stage / OWNER).read_text())
            pid, ticks = int(owner["pid"]), owner.get("ticks")
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not one of ours, or not readable: left alone
        if not is_running(pid, ticks):
            shutil.rmtree(stage, ignore_errors=True)


class QdrantStore:
    """One run's shard, in a temporary directory removed by :meth:`close`."""

    batch = BATCH

    def __init__(self, arm: Any) -> None:
        self.arm, self.settings = arm, dict(arm.settings)
        self.where = f"arm {arm.name} (qdrant)"
        self.model: Any = _bm25_model(self.settings) if SPARSE in self.settings else None
        self.record = build_record(self.settings)
        self.build = canonical.sha256_bytes(canonical.dumps(self.record).encode())
        _sweep_stale_shards()
        self.dir = Path(tempfile.mkdtemp(prefix=SHARD_PREFIX))
        (self.dir / OWNER).write_text(json.dumps({"pid": os.getpid(), "ticks": start_ticks(os.getpid())}))
        self.shard: Any = None
        self.ids: list[str] = []
        self.encoder: Any = None

    def declared(self) -> dict[str, Any]:
        """The configuration the shard must store, as its edge_config.json writes it."""
        out: dict[str, Any] = {}
        if DENSE in self.settings:
            out["vectors"] = {DENSE: {"size": self.record["dense"]["dim"],
                                      "distance": DISTANCES[self.settings[DENSE]["distance"]]}}
        if SPARSE in self.settings:
            out["sparse_vectors"] = {SPARSE: {"modifier": "idf"} if self.settings["modifier"] == "idf" else {}}
        return out

    def config(self) -> Any:
        from qdrant_edge import Distance, EdgeConfig, EdgeSparseVectorParams, EdgeVectorParams, Modifier

        declared = self.declared()
        vectors = {name: EdgeVectorParams(size=v["size"], distance=getattr(Distance, v["distance"]))
                   for name, v in declared.get("vectors", {}).items()}
        sparse = {name: EdgeSparseVectorParams(modifier=Modifier.Idf if v.get("modifier") == "idf" else None)
                  for name, v in declared.get("sparse_vectors", {}).items()}
        return EdgeConfig(vectors=vectors or None, sparse_vectors=sparse or None, max_search_threads=THREADS)

    def load(self, passages: Sequence[Any]) -> None:
        from qdrant_edge import EdgeShard, Point, UpdateOperation

        self.shard = EdgeShard.create(str(self.dir / "shard"), self.config())
        (self.dir / "build.json").write_text(canonical.dumps(self.record))
        vectors = None
        if DENSE in self.settings:
            from turnbench.engines import encoders
            from turnbench.engines.embeddings import embed

            self.encoder = encoders.get(self.settings[DENSE]["encoder"])
            vectors = embed(self.encoder, [(p.id, p.text or "") for p in passages], role="passage")
        self.ids = [p.id for p in passages]
        for lo in range(0, len(passages), UPSERT):
            points = []
            for n, p in enumerate(passages[lo:lo + UPSERT], lo):
                vec: dict[str, Any] = {}
                if self.model is not None:
                    vec[SPARSE] = self.model.embed_document(p.text or "")
                if vectors is not None:
                    vec[DENSE] = vectors.vector(p.id)
                points.append(Point(n, vec, {"passage": p.id, "build": self.build}))
            self.shard.update(UpdateOperation.upsert_points(points))
        self.shard.flush()

    def verify(self) -> dict[str, Any]:
        from qdrant_edge import ScrollRequest

        stored = json.loads((self.dir / "shard" / "edge_config.json").read_text())
        for kind, vectors in self.declared().items():
            for name, fields in vectors.items():
                got = (stored.get(kind) or {}).get(name)
                if got is None:
                    raise SettingIgnored(f"{self.where}: the shard stored no {kind} {name!r}; the arm declares it")
                for key, value in fields.items():
                    if got.get(key) != value:
                        raise SettingIgnored(f"{self.where}: the shard stored {kind} {name!r} with {key} "
                                             f"{got.get(key)!r}, not {value!r} as declared (a dropped setting)")
        if SPARSE in self.settings and self.settings["modifier"] == "none" and \
                (stored.get("sparse_vectors") or {}).get(SPARSE, {}).get("modifier") not in (None, "none"):
            raise SettingIgnored(f"{self.where}: the shard stored sparse modifier "
                                 f"{stored['sparse_vectors'][SPARSE]['modifier']!r}; the arm declares none")
        count = self.shard.info().points_count
        if count != len(self.ids):
            raise SettingIgnored(f"{self.where}: the shard holds {count} points, not the {len(self.ids)} passages")
        if json.loads((self.dir / "build.json").read_text()) != self.record:
            raise SettingIgnored(f"{self.where}: the shard's build record is not the arm's build")
        mixed, offset = 0, None
        while True:
            records, offset = self.shard.scroll(ScrollRequest(offset=offset, limit=1000, with_payload=True))
            for r in records:
                payload = r.payload or {}
                if payload.get("build") != self.build or payload.get("passage") != self.ids[int(r.id)]:
                    mixed += 1
            if offset is None:
                break
        if mixed:
            raise SettingIgnored(f"{self.where}: {mixed} point(s) of the shard carry another build or passage than "
                                 "the arm's (encoder, tokenizer and settings): a mixed build is not searched")
        return {"stored": stored, "points": count, "build": self.build}

    def query(self, questions: Sequence[Any], depth: int) -> list[list[tuple[str, float]]]:
        asked = None
        if self.encoder is not None:
            from turnbench.engines.embeddings import embed

            asked = embed(self.encoder, [(x.id, x.text) for x in questions], role="query")
        out = []
        for x in questions:
            body = fill(self.arm.body, x.text, asked.vector(x.id) if asked is not None else [0.0], depth, self.where)
            if body.get("prefetch"):
                rrf = body["query"]["rrf"]
                lists = [self._ranked(p, int(p["limit"])) for p in body["prefetch"]]
                hits = fuse_rrf(lists, int(rrf["k"]), rrf.get("weights"))[:depth]
            else:
                hits = self._ranked(body, depth)
            out.append([(self.ids[n], score) for n, score in hits])
        return out

    def _ranked(self, leaf: Mapping[str, Any], limit: int) -> list[tuple[int, float]]:
        """One query's top ``limit`` points, ``(position, score)`` in (-score, position) order: the engine is asked
        for more, and asked deeper while points tied (within float noise) with the last one kept may lie beyond
        what it returned."""
        request = {k: v for k, v in leaf.items() if k != "limit"}
        ask = min(max(2 * limit, limit + 10), MAX_LIMIT)
        while True:
            points = self.shard.query(_request(request, self.model, ask))
            ranked = sorted(self._scores(request, points).items(), key=lambda h: (-h[1], h[0]))
            if len(ranked) <= limit or len(ranked) < ask or ask >= MAX_LIMIT or \
                    ranked[limit - 1][1] - ranked[-1][1] > NOISE * max(1.0, abs(ranked[limit - 1][1])):
                return ranked[:limit]
            ask = min(2 * ask, MAX_LIMIT)

    def _scores(self, request: Mapping[str, Any], points: Sequence[Any]) -> dict[int, float]:
        """Each point's score, the same in every process: a dense score as the engine gives it; a sparse one as the
        exact sum (math.fsum) of the engine's own score of the point for each query term alone — one product of the
        shard's IDF and the point's weight, where the engine's sum over terms comes out in another order (another
        last bit) from one process to the next."""
        if request.get("using") != SPARSE or not points:
            return {int(p.id): float(p.score) for p in points}
        from qdrant_edge import (
            Filter,
            HasIdCondition,
            Query,
            QueryBatchRequest,
            QueryRequest,
            SearchParams,
            SparseVector,
        )

        wanted = {int(p.id) for p in points}
        vector = self.model.embed_query(request["query"]["text"])
        params = SearchParams(**request["params"]) if "params" in request else None
        terms = [QueryRequest(limit=len(wanted), query=Query.Nearest(SparseVector([t], [v]), using=SPARSE),
                              filter=Filter(must=[HasIdCondition(set(wanted))]), params=params,
                              with_payload=False)
                 for t, v in zip(vector.indices, vector.values, strict=True)]
        parts: dict[int, list[float]] = {n: [] for n in wanted}
        for answer in self.shard.query_batch(QueryBatchRequest(terms)):
            for p in answer:
                parts[int(p.id)].append(float(p.score))
        return {n: math.fsum(v) for n, v in parts.items()}

    def close(self) -> None:
        if self.shard is not None:
            with contextlib.suppress(Exception):
                self.shard.close()
            self.shard = None
        shutil.rmtree(self.dir, ignore_errors=True)
