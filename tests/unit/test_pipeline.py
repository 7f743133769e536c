"""bench refuses before starting a stack; the example CI workflow uses only make targets and variables that exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnbench.errors import BadInput
from turnbench.pipeline import result_dirs

ROOT = Path(__file__).resolve().parents[3]
WORKFLOW = ROOT / "examples" / "github-actions" / "turnbench-pr.yml"


def test_result_directories_one_per_arm_or_the_control_name(tmp_path):
    assert result_dirs(tmp_path, ["bm25", "bm25-title"], None) == [
        ("bm25", tmp_path / "bm25"), ("bm25-title", tmp_path / "bm25-title")]
    assert result_dirs(tmp_path, ["bm25"], "control") == [("bm25", tmp_path / "control")]
    with pytest.raises(BadInput, match="exactly one arm"):
        result_dirs(tmp_path, ["bm25", "bm25-title"], "control")
    with pytest.raises(BadInput, match="more than once"):
        result_dirs(tmp_path, ["bm25", "bm25"], None)
    (tmp_path / "bm25").mkdir()
    (tmp_path / "bm25" / "metrics.json").write_text("{}")
    with pytest.raises(BadInput, match="not empty"):
        result_dirs(tmp_path, ["bm25"], None)
    with pytest.raises(BadInput):
        result_dirs(tmp_path, ["bm25"], "../up")






