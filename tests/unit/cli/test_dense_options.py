"""The dense options, refused in one line before any stack is looked for."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main

SMALL = str(Path(__file__).resolve().parents[3] / "fixtures" / "small")


@pytest.mark.parametrize("args, code, says", [
    (["load", "--corpus", SMALL, "--encoder", "bert-huge"], 2, "--encoder: unknown encoder 'bert-huge'; known "
                                                               "encoders: bge-small-en-v15-int8, minilm-l6-v2-int8"),
    (["load", "--corpus", SMALL, "--knn-engine", "faiss"], 2, "--knn-engine chooses the engine of the vector field"),
    (["load", "--corpus", SMALL, "--encoder", "minilm-l6-v2-int8", "--vector-index", "ivf"], 2, "'ivf' is not one of"),
    (["bench", "--corpus", SMALL, "--arm", "dense-exact", "--knn-engine", "faiss", "--provider", "embedded",
      "--out", "never"], 2, "the embedded node has no native k-NN libraries"),
])
def test_a_bad_dense_option_is_one_line_and_its_exit_code(args, code, says, monkeypatch, tmp_path):
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path))  # no recorded stack to find
    monkeypatch.delenv("TURNBENCH_OPENSEARCH_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, args)
    assert r.exit_code == code, r.output
    assert len(r.output.strip().splitlines()) == 1 and says in r.output, r.output
    assert not (tmp_path / "never").exists()
