"""turnbench.engines.fusion against hand-worked examples, and `turnbench fuse` with its refusals.

Two runs of one query over passages a, b, c, d (meeting m, indices 0..3):
  A: a 9.0, b 5.0, c 1.0        B: c 0.8, d 0.6, a 0.2
RRF (k=60): a 1/61 + 1/63 = 0.032266, c 1/63 + 1/61 = 0.032266, b 1/62 = 0.016129, d 1/62 = 0.016129
  -> a and c tie, b and d tie: rule 5 orders ties by passage index: a, c, b, d.
min-max, weights 0.5/0.5: A scales a 1, b 0.5, c 0; B scales c 1, d 0.666667, a 0
  -> a 0.5, c 0.5, d 0.333333, b 0.25: a, c (tie, by index), d, b.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.engines.fusion import Fusion, fuse
from turnbench.errors import BadInput, UnjudgedPassage, UnpairedComparison
from turnbench.passages import Passage, write_passages
from turnbench.rankings import RankedPassage
from turnbench.runfiles import write_jsonl_run, write_trec_run

P = {pid: Passage(pid, "m", "ann", float(i), float(i) + 1, i) for i, pid in enumerate("abcd")}
A = [RankedPassage("q", "a", 1, 9.0), RankedPassage("q", "b", 2, 5.0), RankedPassage("q", "c", 3, 1.0)]
B = [RankedPassage("q", "c", 1, 0.8), RankedPassage("q", "d", 2, 0.6), RankedPassage("q", "a", 3, 0.2)]


def _ids_and_scores(run: dict[str, list[RankedPassage]]) -> list[tuple[str, float]]:
    return [(e.passage_id, round(e.score, 6)) for e in run["q"]]


def test_rrf_by_hand() -> None:
    got = _ids_and_scores(fuse([A, B], P, Fusion("rrf")))
    assert got == [("a", 0.032266), ("c", 0.032266), ("b", 0.016129), ("d", 0.016129)]


def test_minmax_by_hand_and_weights_shift_it() -> None:
    assert _ids_and_scores(fuse([A, B], P, Fusion("minmax"))) == [("a", 0.5), ("c", 0.5), ("d", 0.333333),
                                                                  ("b", 0.25)]
    weighted = _ids_and_scores(fuse([A, B], P, Fusion("minmax", weights=(0.75, 0.25))))
    assert weighted[0] == ("a", 0.75) and [p for p, _ in weighted] == ["a", "b", "c", "d"]


def test_depth_cuts_and_refusals() -> None:
    assert [e.passage_id for e in fuse([A, B], P, Fusion("rrf", depth=2))["q"]] == ["a", "c"]
    with pytest.raises(UnpairedComparison, match="answer different queries"):
        fuse([A, [RankedPassage("other", "a", 1, 1.0)]], P, Fusion("rrf"))
    with pytest.raises(UnjudgedPassage):
        fuse([A, [RankedPassage("q", "zz", 1, 1.0)]], P, Fusion("rrf"))
    with pytest.raises(BadInput, match="2 weights for 3 runs|3 runs"):
        fuse([A, B, A], P, Fusion("minmax", weights=(0.5, 0.5)))
    with pytest.raises(BadInput):
        Fusion("borda")
    with pytest.raises(BadInput):
        Fusion("minmax", weights=(float("nan"), 1.0))


def _run_dir(root: Path, name: str, run: list[RankedPassage], passages: dict[str, Passage]) -> Path:
    d = root / name
    d.mkdir()
    write_passages(d / "passages.jsonl", passages.values())
    write_trec_run(d / "run.trec", {"q": run}, name)
    return d


def test_fuse_cli_writes_a_run_score_takes_and_refuses_other_inventories(tmp_path: Path) -> None:
    a, b = _run_dir(tmp_path, "a", A, P), _run_dir(tmp_path, "b", B, P)
    out = CliRunner().invoke(main, ["fuse", str(a), str(b), "--method", "rrf", "--out", str(tmp_path / "f")])
    assert out.exit_code == 0, out.output
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == ["fuse.json", "passages.jsonl", "run.jsonl",
                                                                   "run.trec"]
    record = json.loads((tmp_path / "f" / "fuse.json").read_text())
    assert record["fusion"] == {"method": "rrf", "depth": 100, "k": 60}
    other = dict(P)
    other["d"] = Passage("d", "m", "bob", 3.0, 4.0, 3)
    c = _run_dir(tmp_path, "c", B, other)
    refused = CliRunner().invoke(main, ["fuse", str(a), str(c), "--method", "rrf", "--out", str(tmp_path / "g")])
    assert refused.exit_code == 3 and "different passage inventories" in refused.stderr
    assert not (tmp_path / "g").exists()
    write_jsonl_run(tmp_path / "only.jsonl", {"q": A})
    bad = CliRunner().invoke(main, ["fuse", str(tmp_path / "only.jsonl"), str(a), "--method", "minmax",
                                    "--weights", "1,x", "--out", str(tmp_path / "h")])
    assert bad.exit_code == 2 and "--weights '1,x' is not a comma-separated list" in bad.stderr
    alone = CliRunner().invoke(main, ["fuse", str(tmp_path / "only.jsonl"), str(tmp_path / "only.jsonl"),
                                      "--method", "rrf", "--out", str(tmp_path / "i")])
    assert alone.exit_code == 2 and "fuse needs the passage inventory" in alone.stderr
