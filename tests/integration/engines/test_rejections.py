"""A request OpenSearch rejects as malformed is the arm file's fault: one line naming the file (exit 2), not a
failed stack (exit 1 or 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main

pytestmark = pytest.mark.integration

SMALL = Path(__file__).resolve().parents[3] / "fixtures" / "small"


@pytest.mark.parametrize("body", [
    '{"query": {"match": {"content": {"query": {{query_text}}, "bogus_parameter": 1}}}}',  # an unknown parameter
    '{"query": {"match": {"no_such_field_type_of_query": {{query_text}}}}, "min_score": "high"}',  # a bad value
    '{"query": {"frobnicate": {"content": {{query_text}}}}}',  # an unknown query
])
def test_a_request_the_server_rejects_names_the_arm_file(stack, tmp_path, monkeypatch, body):
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", stack.opensearch_url)
    monkeypatch.setenv("TURNBENCH_POSTGRES_DSN", stack.postgres_dsn)
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))
    arm = tmp_path / "odd.toml"
    arm.write_text(f"name = \"odd\"\nbody = '{body}'\n")
    runner = CliRunner()
    assert runner.invoke(main, ["load", "--corpus", str(SMALL), "--index", "turnbench-rejections"]).exit_code == 0
    r = runner.invoke(main, ["run", "--corpus", str(SMALL), "--arm-file", str(arm), "--index", "turnbench-rejections",
                             "--out", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    assert r.output.startswith(f"turnbench: BadInput: {arm.name}: OpenSearch rejected the arm's request")
    assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
