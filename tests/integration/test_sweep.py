"""turnbench sweep on the real stack: two chunkings of fixtures/small, one stack, one table and page; every cell a
complete results directory whose comparable measures are scored against the same gold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turnbench.engines.arms import builtin
from turnbench.pipeline import bench as pipeline
from turnbench.pipeline.sweep import grid, sweep
from turnbench.results.directory import read_metrics
from turnbench.results.sweep import from_tree

SMALL = Path(__file__).resolve().parents[2] / "fixtures" / "small"

pytestmark = pytest.mark.integration


def test_a_sweep_writes_each_cell_and_one_summary_byte_identically(stack, tmp_path):
    options = pipeline.BenchOptions(provider="external", index="turnbench-sweep-test", stack_options={
        "opensearch_url": stack.opensearch_url, "postgres_dsn": stack.postgres_dsn})
    cells = grid([30, 200], [0, 10])
    rule = "span:R@10 up on every class"
    docs = [sweep(SMALL, [builtin("bm25")], tmp_path / name, cells, options, rule=rule) for name in ("a", "b")]
    for name in ("sweep.json", "sweep.md", "sweep.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    doc = docs[0]
    assert [c.name for c in doc.cells] == ["w30-o0", "w30-o10", "w200-o0", "w200-o10"]
    counts = [c.passages for c in doc.cells]
    assert counts[0] > counts[2] and counts[1] > counts[0]  # smaller passages are more; overlap adds more
    # the same gold under every cut: the gold-word measures read it, the passage counts move
    metrics = [read_metrics(tmp_path / "a" / c.name / "bm25").tree for c in cells]
    assert len({m["provenance"]["inputs"]["passages"]["sha256"] for m in metrics}) == 4
    assert [m["provenance"]["index"].get("overlap") for m in metrics] == [None, 10, None, 10]
    assert len({m["retrieval"]["counts"]["judged_passages"] for m in metrics}) > 1
    assert all("span:R@10" in m["retrieval"]["comparable_across_chunkings"] for m in metrics)
    (c,) = doc.rule.comparisons
    assert c.baseline == "bm25 @ w30-o0" and len(c.cells) == 3
    md = (tmp_path / "a" / "sweep.md").read_text()
    assert "span:R@10 ⇄" in md and "nDCG@10 †" in md and "Decision rule, fixed before the numbers" in md
    assert from_tree(json.loads((tmp_path / "a" / "sweep.json").read_text())) == doc


def test_a_sweep_ended_by_sigterm_on_the_real_stack_leaves_nothing_and_its_rerun_completes(stack, tmp_path):
    """The staged sweep against real servers: SIGTERM once the first cell's results are written leaves neither OUT
    nor its staging; the same command again writes every cell and the summary."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.childproc import interruptible

    out = tmp_path / "sweep"
    env = {**os.environ, "TURNBENCH_STATE_DIR": str(tmp_path / "state"),
           "TURNBENCH_OPENSEARCH_URL": stack.opensearch_url, "TURNBENCH_POSTGRES_DSN": stack.postgres_dsn}
    args = [sys.executable, "-c", "from turnbench.cli import main; main()", "sweep", "--corpus", str(SMALL), "--arm",
            "bm25", "--max-words", "30,200", "--provider", "external", "--index", "turnbench-sweep-signal", "--out",
            str(out)]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=interruptible)
    deadline = time.monotonic() + 300
    while not list(tmp_path.glob(".sweep.*.partial/w30-o0/bm25/metrics.json")) and proc.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 128 + signal.SIGTERM, proc.stderr.read() if proc.stderr else b""
    assert not out.exists() and not list(tmp_path.glob(".sweep.*"))
    again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert (out / "sweep.json").is_file() and (out / "w30-o0" / "bm25" / "metrics.json").is_file()
    assert (out / "w200-o0" / "bm25" / "metrics.json").is_file()
