"""Arms are confined data: every construct that could read outside the passage index, run code or change from run to
run is refused in one line naming the file, before any query is sent; what the built-in arms use is accepted."""

from __future__ import annotations

import pytest

from turnbench.engines.arms import builtin, builtin_names, parse_arm
from turnbench.errors import BadInput

KNN = ('{"script_score": {"query": {"match_all": {}}, "script": {"lang": "knn", "source": "knn_score", '
       '"params": {"field": "embedding", "query_value": {{query_vector}}, "space_type": "cosinesimil"}}}}')
REQUIRES = '[requires]\nvector_field = "embedding"\nencoder = "minilm-l6-v2-int8"\n'


def arm(query: str, extra: str = "", top: str = "") -> bytes:
    body = f'{{"query": {query}{top}}}'
    return f"name = \"x\"\nbody = '''{body}'''\n{extra}".encode()


@pytest.mark.parametrize("name", builtin_names())
def test_every_built_in_arm_is_confined_data(name: str) -> None:
    assert builtin(name).name == name


@pytest.mark.parametrize(("content", "reason"), [
    # scripts: painless (Math.random() would make two runs differ), a stored script, a script query
    (arm('{"script_score": {"query": {"match": {"content": {{query_text}}}}, '
         '"script": {"source": "Math.random()"}}}'), "runs a painless script"),
    (arm('{"function_score": {"query": {"match": {"content": {{query_text}}}}, '
         '"functions": [{"script_score": {"script": {"id": "stored"}}}]}}'), "runs a painless script"),
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], '
         '"filter": [{"script": {"script": "doc.x.value > 1"}}]}}'), "is a script query"),
    (arm('{"script_score": {"query": {"match": {"content": {{query_text}}}}, '
         '"script": {"lang": "knn", "source": "knn_score", "params": {"field": "embedding", "extra": 1}}}}'),
     "takes params field, query_value, space_type only"),
    # reading another index or another document
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], "filter": [{"terms": {"meeting_id": '
         '{"index": "products", "id": "1", "path": "ids"}}}]}}'), "is a terms lookup"),
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], "filter": [{"terms": {"meeting_id": '
         '{"id": "1", "path": "ids"}}}]}}'), "is a terms lookup"),
    (arm('{"more_like_this": {"fields": ["content"], "like": [{"_index": "products", "_id": "1"}, {{query_text}}]}}'),
     "names a document"),
    (arm('{"geo_shape": {"location": {"indexed_shape": {"index": "shapes", "id": "1", "path": "s"}}}}',
         top=', "min_score": {{depth}}, "post_filter": {"match": {"content": {{query_text}}}}'),
     "read from another index"),
    (arm('{"more_like_this": {"fields": ["content"], "like": [{"_id": "p1"}, {{query_text}}]}}'), "names a document"),
    (arm('{"wrapper": {"query": "eyJtYXRjaF9hbGwiOnt9fQ=="}}', top=', "x": {{query_text}}'), "may hold only"),
    (arm('{"bool": {"should": [{"match": {"content": {{query_text}}}}, {"wrapper": {"query": "e30="}}]}}'),
     "wrapper query carries its body base64-encoded"),
    (arm('{"percolate": {"field": "q", "document": {"content": {{query_text}}}}}'), "percolate query"),
    # the clock and unseeded randomness
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], '
         '"filter": [{"range": {"recorded_date": {"gte": "now-30d"}}}]}}'), "moves with the clock"),
    (arm('{"function_score": {"query": {"match": {"content": {{query_text}}}}, "random_score": {}}}'),
     "without both a seed and a field"),
    # the clock in every position it can stand: date math from now, a query string naming now, an origin that is
    # the clock or missing (a date field's missing origin is now)
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], '
         '"filter": [{"range": {"recorded_date": {"lt": " NOW/d"}}}]}}'), "moves with the clock"),
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], '
         '"filter": [{"term": {"recorded_date": "now/d"}}]}}'), "'now/d': date math"),
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], '
         '"filter": [{"terms": {"recorded_date": ["2024-01-01", "now"]}}]}}'), "'now': date math"),
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], '
         '"filter": [{"query_string": {"query": "recorded_date:[now-400d TO *]"}}]}}'),
     "query_string.query names now"),
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], "should": [{"simple_query_string": '
         '{"query": "now", "fields": ["recorded_date"], "lenient": true}}]}}'), "simple_query_string.query names now"),
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], "should": [{"distance_feature": '
         '{"field": "recorded_date", "origin": "now", "pivot": "7d"}}]}}'), "distance_feature has origin 'now'"),
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], "should": [{"distance_feature": '
         '{"field": "recorded_date", "pivot": "7d"}}]}}'), "distance_feature has origin None"),
    (arm('{"function_score": {"query": {"match": {"content": {{query_text}}}}, '
         '"gauss": {"recorded_date": {"origin": "now-1y", "scale": "30d"}}}}'),
     "function_score.gauss.recorded_date decays from origin 'now-1y'"),
    (arm('{"function_score": {"query": {"match": {"content": {{query_text}}}}, '
         '"functions": [{"weight": 2}, {"exp": {"recorded_date": {"scale": "30d"}, "multi_value_mode": "min"}}]}}'),
     "functions\\[1\\].exp.recorded_date decays from origin None"),
    (arm('{"function_score": {"query": {"match": {"content": {{query_text}}}}, '
         '"functions": [{"linear": {"recorded_date": {"scale": "30d", "decay": 0.5}}}]}}'),
     "functions\\[0\\].linear.recorded_date decays from origin None"),
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}]}}',
         top=', "rescore": {"window_size": 10, "query": {"rescore_query": {"function_score": '
             '{"linear": {"recorded_date": {"origin": "now", "scale": "1d"}}}}}}'), "decays from origin 'now'"),
    # scripts wherever they hide: a script_score function, a scripted sort or script field inside inner_hits
    (arm('{"function_score": {"query": {"match": {"content": {{query_text}}}}, '
         '"functions": [{"script_score": {"script": "_score * 2"}}]}}'), "runs a painless script"),
    (arm('{"nested": {"path": "turns", "query": {"match": {"content": {{query_text}}}}, "inner_hits": {"sort": '
         '[{"_script": {"type": "number", "script": {"source": "Math.random()"}}}]}}}'), "runs a painless script"),
    (arm('{"nested": {"path": "turns", "query": {"match": {"content": {{query_text}}}}, "inner_hits": '
         '{"script_fields": {"t": {"script": {"source": "System.currentTimeMillis()"}}}}}}'),
     "runs a painless script"),
    # state the cluster keeps beside the index
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], "should": [{"neural": {"embedding": '
         '{"query_text": {{query_text}}, "model_id": "abc", "k": 10}}}]}}'), "neural query embeds with a model"),
    (arm('{"bool": {"must": [{"match": {"content": {{query_text}}}}], "filter": [{"geo_shape": {"location": '
         '{"indexed_shape": {"id": "1", "path": "s"}}}}]}}'), "indexed shape is read from another index"),
    # top-level keys turnbench does not read alike for every arm
    (arm('{"match": {"content": {{query_text}}}}', top=', "aggs": {"m": {"terms": {"field": "meeting_id"}}}'),
     "may hold only query, min_score, post_filter, rescore"),
    (arm('{"match": {"content": {{query_text}}}}', top=', "script_fields": {"s": {"script": "1"}}'), "may hold only"),
    # pipelines: only a processor whose effect is verified, configured where the server reads it
    (arm(f'{{"hybrid": {{"queries": [{{"match": {{"content": {{{{query_text}}}}}}}}, {KNN}]}}}}',
         '[pipeline]\nbody = \'{"response_processors": [{"rename_field": {"field": "a", "target_field": "b"}}]}\'\n'
         + REQUIRES), "may hold only phase_results_processors"),
    (arm(f'{{"hybrid": {{"queries": [{{"match": {{"content": {{{{query_text}}}}}}}}, {KNN}]}}}}',
         '[pipeline]\nbody = \'{"phase_results_processors": [{"score-ranker-processor": {"combination": '
         '{"technique": "rrf", "rank_constant": 20}}}]}\'\n' + REQUIRES), "where OpenSearch 2.19.6 ignores it"),
    (arm(f'{{"hybrid": {{"queries": [{{"match": {{"content": {{{{query_text}}}}}}}}, {KNN}]}}}}',
         '[pipeline]\nbody = \'{"phase_results_processors": [{"normalization-processor": {"normalization": '
         '{"technique": "z_score"}}}]}\'\n' + REQUIRES), "turnbench verifies min_max, l2"),
    (arm(f'{{"hybrid": {{"queries": [{{"match": {{"content": {{{{query_text}}}}}}}}, {KNN}]}}}}',
         '[pipeline]\nbody = \'{"phase_results_processors": [{"normalization-processor": {"combination": '
         '{"technique": "arithmetic_mean", "parameters": {"weights": [0.7, 0.7]}}}}]}\'\n' + REQUIRES),
     "weights must add up to 1"),
    (arm(f'{{"hybrid": {{"queries": [{{"match": {{"content": {{{{query_text}}}}}}}}, {KNN}]}}}}',
         '[pipeline]\nbody = \'{"phase_results_processors": [{"normalization-processor": {"combination": '
         '{"technique": "arithmetic_mean", "paramters": {"weights": [0.5, 0.5]}}}}]}\'\n' + REQUIRES),
     "would be silently ignored"),
    (arm(f'{{"hybrid": {{"queries": [{{"match": {{"content": {{{{query_text}}}}}}}}, {KNN}]}}}}', REQUIRES),
     "a hybrid query needs a \\[pipeline\\]"),
    (arm('{"match": {"content": {{query_text}}}}', '[pipeline]\nbody = \'{"phase_results_processors": '
         '[{"score-ranker-processor": {}}]}\'\n'), "fuses the sub-queries of a hybrid query"),
])
def test_an_arm_that_is_not_confined_data_is_refused_naming_the_file(content: bytes, reason: str) -> None:
    with pytest.raises(BadInput, match=reason) as err:
        parse_arm(content, "mine.toml", builtin=False)
    assert str(err.value).startswith("mine.toml: ")


@pytest.mark.parametrize("query", [
    '{"distance_feature": {"field": "recorded_date", "origin": "2024-01-01", "pivot": "7d"}}',
    '{"distance_feature": {"field": "location", "origin": [-71.3, 41.15], "pivot": "1km"}}',
    '{"function_score": {"query": {"match_all": {}}, "gauss": {"recorded_date": {"origin": "2024-01-01||-30d", '
    '"scale": "30d"}}}}',
    '{"function_score": {"query": {"match_all": {}}, "functions": [{"exp": {"location": {"origin": "41.1,-71.3", '
    '"scale": "2km"}, "multi_value_mode": "min"}}]}}',
    '{"range": {"recorded_date": {"gte": "2024-01-01", "lt": "2024-01-01||+1M/M"}}}',
    '{"query_string": {"query": "known nowhere snow", "default_field": "content"}}',
])
def test_a_fixed_origin_or_a_literal_date_is_accepted(query: str) -> None:
    body = f'{{"bool": {{"must": [{{"match": {{"content": {{{{query_text}}}}}}}}], "should": [{query}]}}}}'
    assert parse_arm(arm(body), "mine.toml", builtin=False).name == "x"


def test_deeply_nested_bodies_and_tables_are_refused_in_one_line() -> None:
    deep_json = '{"bool": {"must": [' * 40 + '{"match": {"content": {{query_text}}}}' + "]}}" * 40
    with pytest.raises(BadInput, match="nested deeper than 64 levels"):
        parse_arm(arm(deep_json), "deep.toml", builtin=False)
    deep_toml = ("name = \"x\"\nbody = '{\"query\": {\"match\": {\"content\": {{query_text}}}}}'\nz = "
                 + "[" * 100_000 + "]" * 100_000 + "\n").encode()
    with pytest.raises(BadInput, match="deep.toml: "):
        parse_arm(deep_toml, "deep.toml", builtin=False)


def test_a_name_with_a_trailing_newline_is_refused() -> None:
    with pytest.raises(BadInput, match="name 'evil\\\\n' must be"):
        parse_arm(b'name = "evil\\n"\nbody = \'{"query": {"match": {"content": {{query_text}}}}}\'\n', "e.toml",
                  builtin=False)
