"""Smoke tests against the real stack: what turnbench relies on from each server works as a distribution's would."""

from __future__ import annotations

import io

import pytest

from turnbench.stack import pins
from turnbench.stack.net import http_json

pytestmark = pytest.mark.integration


def _os(stack, path, body=None, method=None):
    return http_json(stack.opensearch_url + path, method=method or ("POST" if body is not None else "GET"), body=body)


def test_versions_equal_the_pins(stack):
    assert stack.opensearch_version == pins.OPENSEARCH_VERSION
    assert stack.lucene_version == pins.LUCENE_VERSION
    assert stack.postgres_version.split(".")[0] == pins.POSTGRES_MAJOR
    assert stack.versions() == {"opensearch": pins.OPENSEARCH_VERSION, "lucene": pins.LUCENE_VERSION,
                                "postgresql": pins.POSTGRES_MAJOR}
    assert stack.full_versions()["postgresql"] == stack.postgres_version


def test_every_pinned_plugin_is_loaded(stack):
    """The embedded node loads exactly the pinned classes as classpath plugins; a distribution (an image) ships the
    same classes as modules, except k-NN and neural-search, which it installs as plugins."""
    nodes = _os(stack, "/_nodes/plugins")["nodes"]
    plugins = sorted(p.get("classname") or p["name"] for node in nodes.values() for p in node["plugins"])
    modules = sorted(p["classname"] for node in nodes.values() for p in node["modules"])
    if stack.provider == "embedded":
        assert plugins == sorted(pins.plugin_classes()) and modules == []
    else:
        from turnbench.loading.vectors import PLUGIN_CLASSES

        installed = set(PLUGIN_CLASSES.values())
        assert installed and installed <= set(plugins), sorted(installed - set(plugins))
        assert set(pins.plugin_classes()) - installed <= set(modules), \
            sorted(set(pins.plugin_classes()) - installed - set(modules))


def test_english_analyzer_stems_and_drops_stopwords(stack):
    out = _os(stack, "/_analyze", {"analyzer": "english", "text": "The meetings were deferred twice"})
    assert [t["token"] for t in out["tokens"]] == ["meet", "were", "defer", "twice"]


def test_painless_script_runs(stack):
    out = _os(stack, "/_scripts/painless/_execute", {"script": {"source": "params.a * 2 + params.b.length()",
                                                                  "params": {"a": 20, "b": "xy"}}})
    assert out == {"result": "42"}


def test_terms_aggregation_and_reindex_and_search_pipeline(stack):
    docs = [("m1", "alpha"), ("m1", "beta"), ("m2", "alpha"), ("m3", "alpha")]
    _os(stack, "/smoke-src", {"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                              "mappings": {"properties": {"meeting": {"type": "keyword"}, "text": {"type": "text"}}}},
        method="PUT")
    for i, (meeting, text) in enumerate(docs):
        _os(stack, f"/smoke-src/_doc/{i}", {"meeting": meeting, "text": text}, method="PUT")
    _os(stack, "/smoke-src/_refresh", {})

    agg = _os(stack, "/smoke-src/_search", {"size": 0, "query": {"match": {"text": "alpha"}},
                                            "aggs": {"m": {"terms": {"field": "meeting", "size": 10}}}})
    buckets = {b["key"]: b["doc_count"] for b in agg["aggregations"]["m"]["buckets"]}
    assert buckets == {"m1": 1, "m2": 1, "m3": 1}
    assert agg["aggregations"]["m"]["sum_other_doc_count"] == 0

    out = _os(stack, "/_reindex?refresh=true", {"source": {"index": "smoke-src"}, "dest": {"index": "smoke-dst"}})
    assert out["created"] == 4 and out["failures"] == []
    assert _os(stack, "/smoke-dst/_count")["count"] == 4

    # filter_query comes from search-pipeline-common: only m2 survives it
    _os(stack, "/_search/pipeline/smoke-only-m2", {"request_processors": [
        {"filter_query": {"query": {"term": {"meeting": "m2"}}}}]}, method="PUT")
    hits = _os(stack, "/smoke-dst/_search?search_pipeline=smoke-only-m2", {"query": {"match": {"text": "alpha"}}})
    assert [h["_source"]["meeting"] for h in hits["hits"]["hits"]] == ["m2"]
    for index in ("smoke-src", "smoke-dst"):
        _os(stack, f"/{index}", method="DELETE")
    _os(stack, "/_search/pipeline/smoke-only-m2", method="DELETE")


def test_postgres_copy_round_trip(stack):
    import psycopg

    rows = [(1, "alpha", 0.5), (2, "tab\there", 1.25), (3, "quote ' and \\ backslash", 2.0), (4, "ünïcødé", 3.5)]
    with psycopg.connect(stack.postgres_dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS smoke_copy")
        conn.execute("CREATE TABLE smoke_copy (id int PRIMARY KEY, text text NOT NULL, start real NOT NULL)")
        with conn.cursor() as cur:
            with cur.copy("COPY smoke_copy (id, text, start) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            buf = io.BytesIO()
            with cur.copy("COPY (SELECT id, text, start FROM smoke_copy ORDER BY id) TO STDOUT") as copy:
                for chunk in copy:
                    buf.write(chunk)
        back = conn.execute("SELECT id, text, start FROM smoke_copy ORDER BY id").fetchall()
        conn.execute("DROP TABLE smoke_copy")
    assert back == rows
    assert buf.getvalue().decode().splitlines()[1] == "2\ttab\\there\t1.25"


def test_external_record_and_auto_reuse_leave_the_stack_running(stack, tmp_path, monkeypatch):
    """`stack up --provider external` records someone else's stack; auto then reuses it; down only forgets it."""
    import json
    import re

    from click.testing import CliRunner

    from turnbench.cli import main
    from turnbench.stack import open_stack

    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))
    runner = CliRunner()
    stack_dsn = stack.postgres_dsn
    password = re.search(r"password=(\S+)", stack_dsn)
    if password:  # the docker leg's PostgreSQL has one: stack up refuses to write it to the state file, so libpq
        # reads it from PGPASSWORD, as a user recording a password-protected stack would give it
        refused = runner.invoke(main, ["stack", "up", "--provider", "external", "--opensearch-url",
                                       stack.opensearch_url, "--postgres-dsn", stack_dsn])
        assert refused.exit_code == 2 and "no password is written to a file" in refused.stderr, refused.stderr
        assert not (tmp_path / "state" / "stack.json").exists()
        monkeypatch.setenv("PGPASSWORD", password.group(1))
        stack_dsn = " ".join(w for w in stack_dsn.split() if not w.startswith("password="))
    up = runner.invoke(main, ["stack", "up", "--provider", "external", "--opensearch-url", stack.opensearch_url,
                              "--postgres-dsn", stack_dsn])
    assert up.exit_code == 0, up.stderr
    assert json.loads(up.stdout)["provider"] == "external"
    said = []
    with open_stack("auto", echo=said.append) as reused:
        assert reused.opensearch_url == stack.opensearch_url
        assert reused.versions() == stack.versions()
    state_file = tmp_path / "state" / "stack.json"
    assert said == [f"turnbench: stack provider recorded: the external stack recorded in {state_file} answers"]
    assert runner.invoke(main, ["stack", "down"]).exit_code == 0
    assert _os(stack, "/_cluster/health")["status"] in ("green", "yellow")  # still running: it was not ours
