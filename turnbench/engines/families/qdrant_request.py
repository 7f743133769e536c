"""The checking half of Qdrant arms (turnbench.engines.families.qdrant): an arm file's ``[qdrant]`` table and its
body, a Qdrant query request as JSON, checked in full when the file is read — without importing qdrant-edge, so a
bad file is refused in one line before anything starts (docs/engines.md, "Qdrant (qdrant-edge)")."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from turnbench import canonical
from turnbench.errors import BadInput

TABLE = "qdrant"
SPARSE, DENSE = "bm25", "dense"
SETTINGS = {"bm25", "modifier", "dense"}
BM25_KEYS = {"k": "number", "b": "number", "avg_len": "number", "language": "str", "lowercase": "bool",
             "ascii_folding": "bool"}
MODIFIERS = ("idf", "none")
DISTANCES = {"cosine": "Cosine", "dot": "Dot", "euclid": "Euclid"}
REQUEST_KEYS = {"query", "using", "prefetch", "params"}
PREFETCH_KEYS = REQUEST_KEYS | {"limit"}
PARAMS_KEYS = {"exact", "hnsw_ef"}
OWNED = ("limit", "offset", "filter", "with_payload", "with_vector", "score_threshold")


def parse(raw: Mapping[str, Any], body: str, where: str) -> dict[str, Any]:
    """The ``[qdrant]`` settings, checked, and the body checked as a request over them (no qdrant import)."""
    table = raw[TABLE]
    unknown = sorted(set(table) - SETTINGS)
    if unknown:
        raise BadInput(f"{where}: [qdrant] has unknown key(s) {', '.join(unknown)}; it takes "
                       f"{', '.join(sorted(SETTINGS))}")
    if SPARSE not in table and DENSE not in table:
        raise BadInput(f"{where}: [qdrant] declares no vector: give bm25 (sparse), dense, or both")
    settings: dict[str, Any] = {}
    if SPARSE in table:
        settings[SPARSE] = _bm25(table[SPARSE], where)
        modifier = table.get("modifier", "idf")
        if modifier not in MODIFIERS:
            raise BadInput(f"{where}: [qdrant] modifier is idf or none, not {modifier!r}")
        settings["modifier"] = modifier
    elif "modifier" in table:
        raise BadInput(f"{where}: [qdrant] modifier belongs to the sparse vector: declare bm25 beside it")
    if DENSE in table:
        settings[DENSE] = _dense(table[DENSE], where)
    sample = fill(body, "a sample question", [0.0] * 4, 10, where)
    _check_request(sample, settings, where, top=True)
    if "query_vector" in set(re.findall(r"\{\{\s*([A-Za-z_]+)\s*\}\}", body)) and DENSE not in settings:
        raise BadInput(f"{where}: the body uses {{{{query_vector}}}}: [qdrant] must declare the dense vector")
    return settings


def _bm25(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or set(value) - set(BM25_KEYS):
        raise BadInput(f"{where}: [qdrant] bm25 is a table of {', '.join(BM25_KEYS)}, not {value!r}")
    out: dict[str, Any] = {}
    for key, kind in BM25_KEYS.items():
        if key not in value:
            continue
        v = value[key]
        ok = (isinstance(v, bool) if kind == "bool" else isinstance(v, str) and re.fullmatch(r"[a-z]+", v) is not None
              if kind == "str" else not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v))
        if not ok or (key == "b" and not 0 <= v <= 1) or (key in ("k",) and v < 0) or (key == "avg_len" and v <= 0):
            raise BadInput(f"{where}: [qdrant] bm25 {key} {v!r} is not allowed (k >= 0, 0 <= b <= 1, avg_len > 0, "
                           "language a lowercase name, lowercase and ascii_folding true or false)")
        out[key] = float(v) if kind == "number" else v
    return out


def _dense(value: Any, where: str) -> dict[str, Any]:
    from turnbench.engines.encoders import check_name

    if not isinstance(value, dict) or set(value) - {"encoder", "distance"} or "encoder" not in value:
        raise BadInput(f"{where}: [qdrant] dense is a table of encoder (required) and distance, not {value!r}")
    distance = value.get("distance", "cosine")
    if distance not in DISTANCES:
        raise BadInput(f"{where}: [qdrant] dense distance is one of {', '.join(DISTANCES)}, not {distance!r}")
    return {"encoder": check_name(value["encoder"], where), "distance": distance}


def fill(body: str, text: str, vector: Sequence[float], depth: int, where: str) -> dict[str, Any]:
    values = {"query_text": text, "query_vector": list(vector), "depth": depth}
    filled = re.sub(r"\{\{\s*([A-Za-z_]+)\s*\}\}", lambda m: canonical.dumps(values[m.group(1)]), body)
    try:
        parsed = canonical.parse_json(filled, max_nesting=canonical.MAX_NESTING)
    except ValueError as exc:
        raise BadInput(f"{where}: the body is not valid JSON once its placeholders are filled ({exc})") from None
    if not isinstance(parsed, dict):
        raise BadInput(f"{where}: the body is a JSON {type(parsed).__name__}, not a query request")
    return parsed


def _check_request(req: Any, settings: Mapping[str, Any], where: str, *, top: bool) -> None:
    what = "the request" if top else "a prefetch"
    if not isinstance(req, dict):
        raise BadInput(f"{where}: {what} is not a JSON object")
    owned = sorted(set(req) & set(OWNED) - (set() if top else {"limit"}))
    if owned:
        raise BadInput(f"{where}: {what} sets {', '.join(owned)}, which turnbench sets (the depth) or does not send")
    unknown = sorted(set(req) - (REQUEST_KEYS if top else PREFETCH_KEYS))
    if unknown:
        raise BadInput(f"{where}: {what} has unknown key(s) {', '.join(unknown)}; it takes "
                       f"{', '.join(sorted(REQUEST_KEYS if top else PREFETCH_KEYS))}")
    if not top and (isinstance(req.get("limit"), bool) or not isinstance(req.get("limit"), int)
                    or not 1 <= req["limit"] <= 10000):
        raise BadInput(f"{where}: a prefetch's limit is a whole number from 1 to 10000, not {req.get('limit')!r}")
    prefetch = req.get("prefetch", [])
    if not isinstance(prefetch, list) or (prefetch and not top):
        raise BadInput(f"{where}: prefetch is a list of prefetches, each a query on one vector (not nested)")
    for p in prefetch:
        _check_request(p, settings, where, top=False)
    if prefetch and "params" in req:
        raise BadInput(f"{where}: params of an rrf request would search nothing: give them to its prefetches")
    params = req.get("params", {})
    if not isinstance(params, dict) or set(params) - PARAMS_KEYS or not isinstance(params.get("exact", False), bool) \
            or ("hnsw_ef" in params and (isinstance(params["hnsw_ef"], bool) or not isinstance(params["hnsw_ef"], int)
                                         or params["hnsw_ef"] < 1)):
        raise BadInput(f"{where}: params takes exact (true or false) and hnsw_ef (a whole number >= 1), not "
                       f"{params!r}")
    _check_query(req.get("query"), req.get("using"), len(prefetch), settings, where)


def _check_query(query: Any, using: Any, fused: int, settings: Mapping[str, Any], where: str) -> None:
    if isinstance(query, dict) and set(query) == {"rrf"}:
        rrf = query["rrf"]
        if not isinstance(rrf, dict) or set(rrf) - {"k", "weights"} or isinstance(rrf.get("k"), bool) \
                or not isinstance(rrf.get("k"), int) or rrf["k"] < 1:
            raise BadInput(f"{where}: rrf takes k (a whole number >= 1) and weights, not {rrf!r}")
        weights = rrf.get("weights")
        if not fused or using is not None:
            raise BadInput(f"{where}: an rrf query fuses prefetches: give a prefetch list and no using beside it")
        if weights is not None and (not isinstance(weights, list) or len(weights) != fused or not all(
                not isinstance(w, bool) and isinstance(w, (int, float)) and math.isfinite(w) and w > 0
                for w in weights)):
            raise BadInput(f"{where}: rrf weights are numbers > 0, one per prefetch ({fused}), not {weights!r}")
        return
    if fused:
        raise BadInput(f"{where}: a query over prefetches is an rrf fusion of them, not {query!r}"[:300])
    if using not in (SPARSE, DENSE) or using not in settings:
        raise BadInput(f"{where}: using {using!r} names no vector [qdrant] declares "
                       f"({', '.join(v for v in (SPARSE, DENSE) if v in settings)})")
    if using == SPARSE and not (isinstance(query, dict) and set(query) == {"text"} and isinstance(query["text"], str)):
        raise BadInput(f'{where}: a query on bm25 is {{"text": {{{{query_text}}}}}}, not {query!r}'[:300])
    if using == DENSE and not (isinstance(query, list) and query and all(
            not isinstance(x, bool) and isinstance(x, (int, float)) for x in query)):
        raise BadInput(f"{where}: a query on dense is a vector ({{{{query_vector}}}}), not {query!r}"[:300])
