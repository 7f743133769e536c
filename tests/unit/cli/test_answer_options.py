"""The answer-scoring options (count tolerance, set credit) on `bench` as on `answer` and the API: they reach the
scoring, a hostile value is refused in one line (exit 2) before anything runs or is written, and the defaults are
the scoring's own, so no claim byte moves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from turnbench import api
from turnbench.cli import main
from turnbench.cli.evaluate import SET_CREDITS
from turnbench.errors import BadInput
from turnbench.harness.answers import SET_CREDITS as SCORED_CREDITS
from turnbench.harness.answers import AnswerPolicy
from turnbench.pipeline.bench import BenchOptions

SMALL = str(Path(__file__).resolve().parents[3] / "fixtures" / "small")


def _bench(tmp_path: Path, *args: str):
    return CliRunner().invoke(main, ["bench", "--corpus", SMALL, "--arm", "bm25", "--provider", "external", *args,
                                     "--out", str(tmp_path / "out")])


@pytest.mark.parametrize("args, message", [
    (("--tolerance", "-1"), "Invalid value for '--tolerance': -1 is not in the range x>=0"),
    (("--tolerance", "two"), "Invalid value for '--tolerance'"),
    (("--set-credit", "partial"), "Invalid value for '--set-credit': 'partial' is not one of 'f1', 'exact'"),
])
def test_bench_refuses_hostile_answer_options_in_one_line_nothing_written(tmp_path: Path, args, message):
    before = sorted(p.name for p in tmp_path.iterdir())
    result = _bench(tmp_path, *args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("turnbench: BadInput: ") and message in lines[0], result.stderr
    assert not (tmp_path / "out").exists() and sorted(p.name for p in tmp_path.iterdir()) == before


def test_bench_hands_the_answer_options_to_the_bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    seen: list[Any] = []

    def outcomes(corpus, arms, out, options, **kw):
        seen.append(options)
        return []

    monkeypatch.setattr(api, "bench_outcomes", outcomes)
    assert _bench(tmp_path, "--tolerance", "2", "--set-credit", "exact").exit_code == 0
    assert _bench(tmp_path).exit_code == 0
    (given, default) = seen
    assert (given.tolerance, given.set_credit) == (2, "exact")
    assert (default.tolerance, default.set_credit) == (0, "f1")


@pytest.mark.parametrize("kwargs, message", [
    ({"tolerance": -1}, "count tolerance must be a non-negative integer, not -1"),
    ({"tolerance": True}, "count tolerance must be a non-negative integer, not True"),
    ({"tolerance": 1.5}, "count tolerance must be a non-negative integer"),
    ({"set_credit": "partial"}, "set credit must be one of f1, exact, not 'partial'"),
])
def test_bench_options_refuse_hostile_answer_options(kwargs, message):
    with pytest.raises(BadInput, match=message):
        BenchOptions(**kwargs)


def test_the_defaults_are_the_scorings_own():
    # a bench without the options scores answers exactly as before: the same policy, so the same claim bytes
    options = BenchOptions()
    assert AnswerPolicy(options.tolerance, options.set_credit) == AnswerPolicy()
    assert SET_CREDITS == SCORED_CREDITS


def _partial(out: Path) -> float:
    doc = json.loads((out / "answers.json").read_text())
    (row,) = [r for r in doc["answers"]["per_query"] if r["query_id"] == "q00111"]
    return row["partial"]


def test_set_credit_reaches_the_score_on_answer(tmp_path: Path):
    answers = tmp_path / "a.jsonl"  # two of the eight meetings of a meeting-set question
    answers.write_text(json.dumps({"query_id": "q00111", "answer": {"type": "meeting_set",
                                                                    "meetings": ["m0001", "m0002"]}}) + "\n")
    runner = CliRunner()
    base = ["answer", "--corpus", SMALL, "--answers", str(answers)]
    assert runner.invoke(main, [*base, "--out", str(tmp_path / "f1")]).exit_code == 0
    assert runner.invoke(main, [*base, "--set-credit", "exact", "--out", str(tmp_path / "ex")]).exit_code == 0
    assert _partial(tmp_path / "f1") == 0.4 and _partial(tmp_path / "ex") == 0.0
    refused = runner.invoke(main, [*base, "--set-credit", "half", "--out", str(tmp_path / "no")])
    assert refused.exit_code == 2 and not (tmp_path / "no").exists()
    with pytest.raises(BadInput, match="set credit must be one of f1, exact"):
        api.answer(SMALL, tmp_path / "api", answerer="none", set_credit="half")
    with pytest.raises(BadInput, match="count tolerance must be a non-negative integer"):
        api.answer(SMALL, tmp_path / "api", answerer="none", tolerance=-1)
    assert not (tmp_path / "api").exists()
