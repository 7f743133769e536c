"""Arms are files (docs/design.md §3 rule 7): what to send OpenSearch for a query, declared, never coded.

An arm file is TOML — chosen over JSON because an arm is something people write and review by hand: it takes
comments (why this boost, why this weight), and its request body can be pasted as a multi-line JSON string
straight from OpenSearch's documentation. The file holds:

    name = "bm25"                       # [a-z0-9][a-z0-9._-]*, also the results directory's name
    description = "..."
    depth = 100                         # passages per query, 1..10000
    approximates = "dense-exact"        # optional: a built-in arm this one approximates; its recall against
                                        # that arm on the same queries is recorded with the results
    body = '''{ ... an OpenSearch _search body, with placeholders ... }'''
    [pipeline]                          # optional: a search pipeline the body runs through
    body = '''{ ... an OpenSearch search pipeline definition ... }'''
    [requires]                          # optional: what the index must hold for the arm
    vector_field = "embedding"
    encoder = "minilm-l6-v2-int8"       # a known encoder (turnbench.engines.encoders)
    vector_index = "hnsw"               # optional: "hnsw" when the body searches the graph (a knn query); the
                                        # default "exact" stores the vectors for scripts to score, no graph
    shards = "one"                      # optional: it cannot be searched shard-invariantly over several shards
    [rerank]                            # optional: a second stage over the first stage's top passages
    scorer = "minilm-l6-v2-int8"        # an encoder (cosine), or "cross-encoder" with model and tokenizer files
    top = 20                            # (turnbench.engines.stages)

Placeholders stand where a JSON value stands and are replaced by JSON values: ``{{query_text}}`` (a string),
``{{query_vector}}`` (the query's embedding, a list of numbers; needs ``requires.encoder``), ``{{filter}}`` (a
list of filter clauses: empty over the whole corpus, the query's gold meetings under the ORACLE scope — an arm
whose body has no ``{{filter}}`` cannot run that scope) and ``{{depth}}`` (a number). The body may not set what
turnbench owns to read hits the same way for every arm: size, from, sort, _source, stored_fields,
docvalue_fields, track_total_hits — nor search_pipeline, which ``[pipeline]`` declares. Everything is checked
when the file is read, before any query is sent; a bad file is refused in one line naming it and the reason.

An arm may declare the engine it runs on: ``engine = "opensearch"`` (the default: everything above), ``"qdrant"`` or
``"sqlite-fts5"``. An arm on another engine keeps name, description, depth, body and ``[rerank]``; its body is that
engine's query template and its settings sit in the engine's own table (turnbench.engines.families, docs/engines.md).

Built-in arms ship as files in ``turnbench/engines/builtin_arms/``; ``--arm NAME`` finds one, ``--arm-file PATH`` takes
anyone's. A results file records the resolved arm in full: its fields, its file's name and sha256, its pipeline.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.engines import confinement, pipelines
from turnbench.engines.stages import RerankSpec, parse_rerank
from turnbench.errors import BadInput, UnknownArm

DEFAULT_DEPTH = 100
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
PLACEHOLDERS = ("query_text", "query_vector", "filter", "depth")
OWNED_BY_TURNBENCH = ("size", "from", "sort", "_source", "stored_fields", "docvalue_fields", "track_total_hits",
                      "search_after", "timeout", "terminate_after", "search_pipeline")
NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
KEYS = {"name", "description", "depth", "body", "pipeline", "requires", "approximates", "rerank", "engine"}
REQUIRES_KEYS = {"vector_field", "encoder", "vector_index", "shards"}
VECTOR_INDEXES = ("exact", "hnsw")  # exact: stored vectors scored by a script; hnsw: a graph for the knn query
BUILTIN_DIR = Path(__file__).with_name("builtin_arms")  # package data read as files: importlib.resources is 17 ms


@dataclass(frozen=True)
class Arm:
    """A resolved arm. ``body`` and ``pipeline`` are the templates as written (JSON text)."""

    name: str
    description: str
    depth: int
    body: str
    file_name: str
    file_sha256: str
    builtin: bool
    pipeline: str | None = None
    requires: Mapping[str, str] = field(default_factory=dict)
    approximates: str | None = None  # a built-in arm whose results this one approximates (recall recorded)
    rerank: RerankSpec | None = None  # a second stage over the first stage's top passages
    engine: str = "opensearch"  # the engine the arm runs on (turnbench.engines.families.ENGINES)
    settings: Mapping[str, Any] = field(default_factory=dict)  # an engine family's own settings, checked

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(PLACEHOLDER.findall(self.body))

    @property
    def encoder(self) -> str | None:
        return self.requires.get("encoder")

    @property
    def vector_field(self) -> str | None:
        return self.requires.get("vector_field")

    @property
    def needs_graph(self) -> bool:
        return self.requires.get("vector_index") == "hnsw"

    @property
    def one_shard(self) -> bool:
        """Whether the arm can only run on a one-shard index: it says so; or it runs a search pipeline (the
        hybrid query's normalisation is skipped under dfs_query_then_fetch, which several shards need — a body with
        a hybrid query is taken to need one); or it searches an HNSW graph (one graph per shard finds other
        neighbours than one graph over all)."""
        return (self.requires.get("shards") == "one" or self.pipeline is not None or self.needs_graph
                or '"hybrid"' in self.body)

    def on_opensearch(self) -> Arm:
        """The arm, refused (BadInput, one line) unless it runs on OpenSearch: what ``run_arm`` sends queries to."""
        if self.engine != "opensearch":
            raise BadInput(f"arm {self.name} runs on {self.engine}, not on OpenSearch: bench it (turnbench bench --arm "
                           "or --arm-file), which runs it in-process on the loaded passages")
        return self

    def request(self, *, query_text: str, filters: Sequence[Mapping[str, Any]], depth: int,
                query_vector: Sequence[float] | None = None) -> dict[str, Any]:
        """The search body for one query: every placeholder replaced by its JSON value."""
        values: dict[str, Any] = {"query_text": query_text, "filter": list(filters), "depth": depth}
        if "query_vector" in self.placeholders:
            if query_vector is None:
                raise BadInput(f"arm {self.name}: its body needs the query's vector and none was given")
            values["query_vector"] = list(query_vector)
        return _substitute(self.body, values, self.file_name)

    def pipeline_body(self) -> dict[str, Any] | None:
        return None if self.pipeline is None else _parse_json(self.pipeline, self.file_name, "[pipeline] body")

    def config(self) -> dict[str, Any]:
        """What a results file records: the arm in full, so anyone can rerun it."""
        return {
            "name": self.name, "description": self.description, "depth": self.depth,
            "body": self.body, "pipeline": self.pipeline, "requires": dict(sorted(self.requires.items())),
            "file": {"name": self.file_name, "sha256": self.file_sha256, "builtin": self.builtin},
            **({"approximates": self.approximates} if self.approximates else {}),
            **({"rerank": self.rerank.config()} if self.rerank is not None else {}),
            # an OpenSearch arm's record is as it always was; an arm on another engine names it and its settings
            **({"engine": self.engine, "settings": dict(self.settings)} if self.engine != "opensearch" else {}),
        }


def _substitute(template: str, values: Mapping[str, Any], where: str) -> dict[str, Any]:
    def value(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise BadInput(f"{where}: unknown placeholder {{{{{key}}}}}; known: "
                           f"{', '.join('{{' + p + '}}' for p in PLACEHOLDERS)}")
        return canonical.dumps(values[key])

    return _parse_json(PLACEHOLDER.sub(value, template), where, "body after its placeholders are replaced")


def _parse_json(text: str, where: str, what: str) -> dict[str, Any]:
    try:
        parsed = canonical.parse_json(text, max_nesting=canonical.MAX_NESTING)
    except ValueError as exc:
        raise BadInput(f"{where}: the {what} is not valid JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise BadInput(f"{where}: the {what} is a JSON {type(parsed).__name__}, not an object")
    return parsed


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a number an arm may send")


def parse_arm(data: bytes, file_name: str, *, builtin: bool) -> Arm:
    """An arm from the bytes of its file, every field checked; BadInput naming ``file_name`` otherwise."""
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadInput(f"{file_name}: an arm file must be UTF-8 text") from None
    except RecursionError:
        raise BadInput(f"{file_name}: not TOML this reader can take (nested too deeply)") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{file_name}: not TOML ({exc})") from None
    from turnbench.engines import families

    engine = families.check_engine(raw.get("engine", families.OPENSEARCH), file_name)
    if engine != families.OPENSEARCH:
        return _family_arm(raw, data, file_name, builtin, engine)
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        raise BadInput(f"{file_name}: unknown key(s) {', '.join(unknown)}; an arm has {', '.join(sorted(KEYS))}")
    name, description, depth = _common(raw, file_name)
    body = raw.get("body")
    if not isinstance(body, str) or not body.strip():
        raise BadInput(f"{file_name}: body must be the search body as JSON text")
    pipeline = raw.get("pipeline")
    if pipeline is not None:
        if not isinstance(pipeline, dict) or set(pipeline) != {"body"} or not isinstance(pipeline["body"], str):
            raise BadInput(f"{file_name}: [pipeline] must hold exactly one key, body, the pipeline as JSON text")
        pipeline = pipeline["body"]
    requires = raw.get("requires", {})
    if not isinstance(requires, dict) or set(requires) - REQUIRES_KEYS or \
            not all(isinstance(v, str) and v for v in requires.values()):
        raise BadInput(f"{file_name}: [requires] may name {', '.join(sorted(REQUIRES_KEYS))}, each a string")
    if requires.get("shards", "one") != "one":
        raise BadInput(f"{file_name}: [requires] shards may only be \"one\" (an arm needing a one-shard index)")
    if requires.get("vector_index", "exact") not in VECTOR_INDEXES or ("vector_index" in requires
                                                                        and "vector_field" not in requires):
        raise BadInput(f"{file_name}: [requires] vector_index is one of {', '.join(VECTOR_INDEXES)}, "
                       "beside a vector_field")
    if "encoder" in requires:
        from turnbench.engines.encoders import check_name

        check_name(requires["encoder"], file_name)
    approximates = raw.get("approximates")
    if approximates is not None and (not isinstance(approximates, str) or approximates not in builtin_names()
                                     or approximates == name or _engine_of(approximates) != "opensearch"):
        raise BadInput(f"{file_name}: approximates must name another built-in arm on OpenSearch "
                       f"({', '.join(n for n in builtin_names() if _engine_of(n) == 'opensearch')}), "
                       f"not {approximates!r}")
    rerank = None if "rerank" not in raw else parse_rerank(raw["rerank"], file_name, depth=depth,
                                                           base=None if builtin else Path(file_name).parent)
    if rerank is not None and approximates is not None:
        raise BadInput(f"{file_name}: an arm that approximates another is measured by its first stage; it takes no "
                       "[rerank]")
    arm = Arm(name, description, depth, body, Path(file_name).name, canonical.sha256_bytes(data), builtin, pipeline,
              dict(requires), approximates, rerank)
    _check(arm, file_name)
    return arm


def _common(raw: Mapping[str, Any], file_name: str) -> tuple[str, str, int]:
    """Name, description and depth: what every arm has, whatever its engine."""
    name, description = raw.get("name"), raw.get("description", "")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise BadInput(f"{file_name}: name {name!r} must be lowercase letters, digits, '.', '_' or '-'")
    if not isinstance(description, str):
        raise BadInput(f"{file_name}: description must be a string")
    depth = raw.get("depth", DEFAULT_DEPTH)
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= 10000:
        raise BadInput(f"{file_name}: depth must be a whole number from 1 to 10000, not {depth!r}")
    return name, description, depth


def _family_arm(raw: Mapping[str, Any], data: bytes, file_name: str, builtin: bool, engine: str) -> Arm:
    """An arm on an engine family's engine (turnbench.engines.families): the common keys, then the family's own
    table and body, each checked by the family."""
    from turnbench.engines import families

    name, description, depth = _common(raw, file_name)
    body = raw.get("body")
    if not isinstance(body, str) or not body.strip():
        raise BadInput(f"{file_name}: body must be the {engine} query template as text")
    fam = families.family(engine)
    unknown = sorted(set(PLACEHOLDER.findall(body)) - set(fam.PLACEHOLDERS))
    if unknown:
        raise BadInput(f"{file_name}: unknown placeholder {{{{{unknown[0]}}}}} for an arm on {engine}; known: "
                       f"{', '.join('{{' + p + '}}' for p in fam.PLACEHOLDERS)}")
    settings = families.parse_settings(engine, raw, body, file_name)
    rerank = None if "rerank" not in raw else parse_rerank(raw["rerank"], file_name, depth=depth,
                                                           base=None if builtin else Path(file_name).parent)
    return Arm(name, description, depth, body, Path(file_name).name, canonical.sha256_bytes(data), builtin,
               rerank=rerank, engine=engine, settings=settings)


def _check(arm: Arm, where: str) -> None:
    """Everything that can be known before a query is sent: placeholders, JSON, keys turnbench owns."""
    unknown = sorted(arm.placeholders - set(PLACEHOLDERS))
    if unknown:
        raise BadInput(f"{where}: unknown placeholder {{{{{unknown[0]}}}}}; known: "
                       f"{', '.join('{{' + p + '}}' for p in PLACEHOLDERS)}")
    if "query_text" not in arm.placeholders and "query_vector" not in arm.placeholders:
        raise BadInput(f"{where}: the body uses neither {{{{query_text}}}} nor {{{{query_vector}}}}, so every query "
                       "would get the same answer")
    if "query_vector" in arm.placeholders and not (arm.encoder and arm.vector_field):
        raise BadInput(f"{where}: the body uses {{{{query_vector}}}}: [requires] must name the encoder and the "
                       "vector_field it fills")
    try:
        sample = arm.request(query_text="a sample question", filters=[{"terms": {"meeting_id": ["m"]}}],
                             depth=arm.depth, query_vector=[0.0] if arm.encoder else None)
        arm.pipeline_body()
    except BadInput as exc:  # name the file as the user gave it, not only its base name
        raise BadInput(str(exc).replace(f"{arm.file_name}: ", f"{where}: ", 1)) from None
    owned = sorted(set(sample) & set(OWNED_BY_TURNBENCH))
    if owned:
        raise BadInput(f"{where}: the body sets {', '.join(owned)}, which turnbench sets so that every arm's hits "
                       "are read alike")
    confinement.check_body(sample, where)
    pipeline = arm.pipeline_body()
    if pipeline is not None:
        confinement.check_pipeline(pipeline, where, pipelines.PROCESSORS)
        pipelines.parse(pipeline, where)
        pipelines.sub_queries(sample, where)
    elif confinement.has_key(sample, "hybrid"):
        raise BadInput(f"{where}: a hybrid query needs a [pipeline] that fuses its sub-queries (score-ranker-processor "
                       "or normalization-processor)")


def builtin_names() -> list[str]:
    return sorted(p.name.removesuffix(".toml") for p in BUILTIN_DIR.iterdir() if p.name.endswith(".toml"))


def _engine_of(name: str) -> str:
    """The engine a built-in arm runs on."""
    return builtin(name).engine


def builtin(name: str) -> Arm:
    """A built-in arm by name; UnknownArm naming the known ones otherwise."""
    known = builtin_names()
    if name not in known:
        raise UnknownArm(f"no retrieval arm named {name!r}; known arms: {', '.join(known)} "
                         "(or give your own with --arm-file)")
    data = (BUILTIN_DIR / f"{name}.toml").read_bytes()
    arm = parse_arm(data, f"{name}.toml", builtin=True)
    if arm.name != name:
        raise UnknownArm(f"the built-in arm file {name}.toml names itself {arm.name!r}")
    return arm


def from_file(path: Path) -> Arm:
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadInput(f"{path}: no such arm file") from None
    except OSError as exc:
        raise BadInput(f"{path}: cannot read the arm file ({exc.strerror})") from None
    return parse_arm(data, str(path), builtin=False)


def resolve(names: Sequence[str] = (), files: Sequence[Path] = ()) -> list[Arm]:
    """The arms named (built-in) and given (files), in that order; two arms of one name are refused."""
    arms = [builtin(n) for n in names] + [from_file(f) for f in files]
    seen: set[str] = set()
    for a in arms:
        if a.name in seen:
            raise BadInput(f"two arms are named {a.name!r}")
        seen.add(a.name)
    return arms
