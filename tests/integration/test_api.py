"""The façade, exercised as a newcomer would: the examples of docs/api.md run verbatim as scripts, against the
session's real stack (reached through TURNBENCH_OPENSEARCH_URL / TURNBENCH_POSTGRES_DSN, which `open_stack()` picks
up), with `corpora/default` standing for the small fixture corpus so the session stays quick."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SMALL = REPO / "fixtures" / "small"
EXAMPLES = re.findall(r"```python\n(.*?)```", (REPO / "docs" / "api.md").read_text(encoding="utf-8"), re.S)


def _run(code: str, cwd: Path, stack) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TURNBENCH_OPENSEARCH_URL": stack.opensearch_url, "TURNBENCH_POSTGRES_DSN": stack.postgres_dsn,
           "TURNBENCH_STATE_DIR": str(cwd / "state"), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "default").symlink_to(SMALL)
    return tmp_path


def test_the_docs_hold_the_two_five_line_examples() -> None:
    assert len(EXAMPLES) == 2
    assert all(len(code.strip().splitlines()) <= 5 for code in EXAMPLES), [len(c.splitlines()) for c in EXAMPLES]


def test_bench_and_compare_example_runs_and_writes_what_the_command_line_writes(stack, workdir: Path) -> None:
    done = _run(EXAMPLES[0], workdir, stack)
    assert done.returncode == 0, done.stderr
    assert "## turnbench compare: `bm25-title` vs baseline `bm25`" in done.stdout
    for arm in ("bm25", "bm25-title"):
        doc = json.loads((workdir / "results" / arm / "metrics.json").read_text())
        assert doc["provenance"]["arm"]["arm"]["name"] == arm
    # the two means it printed are the rows the results directories claim
    last = done.stdout.strip().splitlines()[-1].split()
    claimed = [next(r for r in json.loads((workdir / "results" / a / "metrics.json").read_text())["retrieval"]["rows"]
                    if r["class"] == "lookup")["means"]["nDCG@10"] for a in ("bm25", "bm25-title")]
    assert [float(x) for x in last] == claimed


def test_score_your_own_engine_example_gives_what_turnbench_score_gives(stack, workdir: Path) -> None:
    from click.testing import CliRunner

    from turnbench.cli import main
    from turnbench.corpus.format import open_corpus
    from turnbench.engines.retrieval import run_arm
    from turnbench.loading.load import load_corpus
    from turnbench.pipeline.runs import write_run

    corpus = open_corpus(SMALL)
    loaded = load_corpus(stack, corpus)
    write_run(workdir / "their", run_arm(stack, corpus, "bm25", index=loaded.index))
    (workdir / "their" / "run.jsonl").unlink()  # the example reads run.trec, as another team would hand it over
    done = _run(EXAMPLES[1], workdir, stack)
    assert done.returncode == 0, done.stderr
    assert "# Retrieval metrics: " in done.stdout
    by_cli = workdir / "by-cli"
    r = CliRunner().invoke(main, ["score", "--corpus", str(SMALL), "--passages", str(workdir / "their/passages.jsonl"),
                                  "--run", str(workdir / "their/run.trec"), "--out", str(by_cli)])
    assert r.exit_code == 0, r.output
    mine = json.loads((workdir / "results" / "theirs" / "metrics.json").read_text())
    theirs = json.loads((by_cli / "metrics.json").read_text())
    assert mine["retrieval"] == theirs["retrieval"]
    assert mine["provenance"]["arm"] == {"name": "theirs"} and theirs["provenance"]["arm"] == "external/unknown"
