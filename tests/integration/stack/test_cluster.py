"""Several nodes and shards: a 3-node embedded cluster and a 3-shard index give the claim files one node and one
shard give, byte for byte; every node is stopped with the stack; an arm that cannot be searched shard-invariantly
is refused. Marked ``cluster``: three JVMs on a small machine take a minute, so `make test-cluster` runs it (CI
does), not `make test`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turnbench.pipeline.bench import BenchOptions, bench
from turnbench.results.directory import CLAIM_FILES

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "fixtures" / "small"

pytestmark = [pytest.mark.integration, pytest.mark.cluster]


def test_three_nodes_and_three_shards_write_the_one_shard_claim_files(stack, tmp_path):
    from turnbench.processes import Started, is_running
    from turnbench.stack import open_stack

    arms = ["bm25", "bm25-title"]
    one = bench(SMALL, arms, tmp_path / "one", BenchOptions(
        provider="external", index="turnbench-cluster-test",
        stack_options={"opensearch_url": stack.opensearch_url, "postgres_dsn": stack.postgres_dsn}))
    with open_stack("embedded", nodes=3, heap="512m") as cluster:
        started = [Started.from_json(p) for p in cluster.details["processes"]]
        assert len([p for p in started if p.name.startswith("opensearch")]) == 3
        three = bench(SMALL, arms, tmp_path / "three", BenchOptions(
            provider="external", shards=3, concurrency=3, index="turnbench-cluster-test",
            stack_options={"opensearch_url": cluster.opensearch_url, "postgres_dsn": cluster.postgres_dsn}))
    assert not [p.name for p in started if is_running(p.pid, p.ticks)]  # every node and PostgreSQL stopped
    for a, b in zip(one, three, strict=True):
        for name in (*CLAIM_FILES, "answers.md", "run.raw.trec"):
            assert (a.out_dir / name).read_bytes() == (b.out_dir / name).read_bytes(), (a.arm, name)


        info = json.loads((b.out_dir / "runinfo.json").read_text())
        assert info["stack"]["topology"] == {"nodes": 3, "shards": 3, "replicas": 0, "segments_per_shard": [1, 1, 1]}
        assert info["search"]["search_type"] == "dfs_query_then_fetch"
