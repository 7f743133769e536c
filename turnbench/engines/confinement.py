"""Arms are confined data (docs/design.md §12 rule 6): what an arm's request may hold, checked before any query is
sent.

An arm file is something another team hands over, run against a cluster that may hold more than turnbench's index
(``--provider external``). So a body may search the passage index and nothing else, and must give the same answer
every time:

* the body's top level holds only ``query``, ``min_score``, ``post_filter`` and ``rescore`` (turnbench sets the
  rest, so that every arm's hits are read alike);
* no script runs but the k-NN plugin's exact-scoring script (``lang: knn``, ``source: knn_score``): a script can
  read anything it is given and can be random (``Math.random()`` makes two runs differ);
* nothing reads another index or another document: no ``index`` or ``_index`` key anywhere (terms lookup,
  more_like_this documents, percolate, indexed shapes), no terms lookup, no more_like_this document, no
  ``wrapper`` query (its base64 body would escape every check here);
* nothing depends on the clock or an unseeded generator: no string value that is date math from the clock (``now``,
  ``now-30d``, ``now/d``: a range bound, a term on a date field, an origin), no ``now`` token in the text of a
  ``query_string`` or ``simple_query_string`` (``recorded_date:[now-400d TO *]``), no ``distance_feature`` and no
  decay function (``gauss``, ``exp``, ``linear`` in a ``function_score``) without an explicit origin (on a date
  field a missing origin is the clock), ``random_score`` only with both a seed and a field;
* nothing reads state the cluster keeps beside the index: no ``model_id`` (a model deployed on the cluster), no
  ``neural`` or ``neural_sparse`` query, no ``indexed_shape`` (a shape stored in another index);
* a search pipeline holds exactly one phase-results processor of a kind whose effect turnbench verifies on the
  server's own answers (``turnbench.engines.pipelines``); no request or response processor.

Each refusal is one line naming the arm file and the construct (BadInput, exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from turnbench.errors import BadInput

BODY_KEYS = ("query", "min_score", "post_filter", "rescore")
KNN_SCRIPT = {"lang": "knn", "source": "knn_score"}
KNN_SCRIPT_PARAMS = frozenset({"field", "query_value", "space_type"})
PIPELINE_KEYS = ("phase_results_processors", "description")
FORBIDDEN_QUERIES = {
    "wrapper": "a wrapper query carries its body base64-encoded, past every check",
    "percolate": "a percolate query reads documents of another index",
    "indexed_shape": "an indexed shape is read from another index",
    "neural": "a neural query embeds with a model deployed on the cluster, state outside the index",
    "neural_sparse": "a neural_sparse query encodes with a model deployed on the cluster, state outside the index",
    "model_id": "a model_id names a model deployed on the cluster, state outside the index",
}
CLOCK = re.compile(r"\s*now\s*(?:$|[-+/|])", re.IGNORECASE)  # date math anchored at the clock: now, now-30d, now/d
CLOCK_TOKEN = re.compile(r"(?<![A-Za-z0-9_])now(?![A-Za-z0-9_])", re.IGNORECASE)  # ``now`` inside query-string text
QUERY_STRINGS = ("query_string", "simple_query_string")
DECAY_FUNCTIONS = ("gauss", "exp", "linear")
DECAY_KEYS = frozenset({"multi_value_mode"})  # a decay function's own keys beside its one field


def _walk(value: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """(path, key, value) for every key of every object inside ``value``."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, Mapping):
            for k, v in item.items():
                yield where, str(k), v
                stack.append((v, f"{where}.{k}"))
        elif isinstance(item, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))


def has_key(body: Mapping[str, Any], name: str) -> bool:
    """Whether any object inside ``body`` has the key ``name`` (e.g. a hybrid query anywhere)."""
    return any(key == name for _, key, _ in _walk(body, "body"))


def check_body(body: Mapping[str, Any], where: str) -> None:
    """Refuse a search body (its placeholders already replaced) that is not confined data."""
    extra = sorted(set(body) - set(BODY_KEYS))
    if extra:
        raise BadInput(f"{where}: the body may hold only {', '.join(BODY_KEYS)} at its top level, not "
                       f"{', '.join(extra)}")
    for path, key, value in _walk(body, "body"):
        here = f"{path}.{key}"
        if key in ("index", "_index"):
            raise BadInput(f"{where}: {here} names an index; an arm searches the passage index and reads no other")
        if key in FORBIDDEN_QUERIES:
            raise BadInput(f"{where}: {here}: {FORBIDDEN_QUERIES[key]}; arms are confined to the passage index")
        if key == "script" and isinstance(value, Mapping) and "script" in value:
            raise BadInput(f"{where}: {here} is a script query; arms run no script but the k-NN exact scoring")
        if key == "script" and isinstance(value, (Mapping, str)):
            _check_script(value, here, where)
        if key == "terms" and isinstance(value, Mapping) and any(isinstance(v, Mapping) for k, v in value.items()
                                                                 if k != "boost"):
            raise BadInput(f"{where}: {here} is a terms lookup, which reads another document; list the terms")
        if key == "more_like_this" and isinstance(value, Mapping):
            for side in ("like", "unlike"):
                items = value.get(side)
                for item in items if isinstance(items, list) else [items]:
                    if isinstance(item, Mapping):
                        raise BadInput(f"{where}: {here}.{side} names a document, which reads stored documents; "
                                       "give the text")
        if key == "random_score" and isinstance(value, Mapping) and not ("seed" in value and "field" in value):
            raise BadInput(f"{where}: {here} without both a seed and a field differs from run to run")
        _check_clock(key, value, here, where)


def _check_clock(key: str, value: Any, here: str, where: str) -> None:
    """Refuse what reads the clock: date math from ``now``, a query string naming ``now``, a distance or decay
    function with no fixed origin. A literal date (``2024-01-01``, ``2024-01-01||-30d``) or a geo point is fixed."""
    if key == "distance_feature" and isinstance(value, Mapping):
        origin = value.get("origin")
        if origin is None or (isinstance(origin, str) and CLOCK.match(origin)):
            raise BadInput(f"{where}: {here} has origin {origin!r}: a distance from the clock gives other results "
                           "another day; give a fixed origin (a date or a point)")
    if key == "function_score" and isinstance(value, Mapping):
        functions = value.get("functions")
        for i, function in enumerate([value, *(functions if isinstance(functions, list) else ())]):
            for name in DECAY_FUNCTIONS:
                decay = function.get(name) if isinstance(function, Mapping) else None
                if not isinstance(decay, Mapping):
                    continue
                at = f"{here}.{name}" if i == 0 else f"{here}.functions[{i - 1}].{name}"
                for field_name, spec in decay.items():
                    if field_name in DECAY_KEYS:
                        continue
                    origin = spec.get("origin") if isinstance(spec, Mapping) else None
                    if origin is None or (isinstance(origin, str) and CLOCK.match(origin)):
                        raise BadInput(f"{where}: {at}.{field_name} decays from origin {origin!r}: now (or, on a "
                                       "date field, no origin) is the clock and gives other results another day; "
                                       "give a fixed origin")
    if key in QUERY_STRINGS and isinstance(value, Mapping) and isinstance(value.get("query"), str) \
            and CLOCK_TOKEN.search(value["query"]):
        raise BadInput(f"{where}: {here}.query names now, which a date field reads as the clock: it gives other "
                       "results another day")
    for v in value if isinstance(value, list) else [value]:
        if isinstance(v, str) and CLOCK.match(v):
            raise BadInput(f"{where}: {here} is {v!r}: date math that moves with the clock gives other "
                           "results another day")


def _check_script(script: Mapping[str, Any] | str, here: str, where: str) -> None:
    if isinstance(script, Mapping) and {k: script.get(k) for k in KNN_SCRIPT} == KNN_SCRIPT:
        extra = sorted(set(script) - {"lang", "source", "params"})
        params = script.get("params", {})
        unknown = sorted(set(params) - KNN_SCRIPT_PARAMS) if isinstance(params, Mapping) else ["(not an object)"]
        if not extra and not unknown:
            return
        raise BadInput(f"{where}: {here}: the knn_score script takes params {', '.join(sorted(KNN_SCRIPT_PARAMS))} "
                       f"only, not {', '.join(extra + unknown)}")
    lang = script.get("lang", "painless") if isinstance(script, Mapping) else "painless"
    raise BadInput(f"{where}: {here} runs a {lang} script; the one script an arm may run is the k-NN plugin's "
                   "exact scoring (lang knn, source knn_score)")


def check_pipeline(pipeline: Mapping[str, Any], where: str, processors: Sequence[str]) -> None:
    """Refuse a search pipeline that is not one phase-results processor turnbench can verify."""
    extra = sorted(set(pipeline) - set(PIPELINE_KEYS))
    if extra:
        raise BadInput(f"{where}: [pipeline] may hold only {', '.join(PIPELINE_KEYS)}, not {', '.join(extra)} "
                       "(request and response processors rewrite what was asked or returned)")
    steps = pipeline.get("phase_results_processors")
    if not isinstance(steps, list) or len(steps) != 1 or not isinstance(steps[0], Mapping) or len(steps[0]) != 1:
        raise BadInput(f"{where}: [pipeline] phase_results_processors must hold exactly one processor")
    (name,) = steps[0]
    if name not in processors:
        raise BadInput(f"{where}: [pipeline] processor {str(name)[:60]!r} is not one whose effect turnbench can "
                       f"verify on the server's answers; use {' or '.join(processors)}")
