"""What bench and compare print by default: a summary that fits a 100 x 40 terminal, naming the headline numbers as
metrics.json holds them; ``--full`` prints the tables as before (turnbench.render.summary)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench import api
from turnbench.cli import main
from turnbench.harness.power import HEADLINE
from turnbench.pipeline.bench import BenchedArm

ROOT = Path(__file__).resolve().parents[3]
BASELINES = ROOT / "baselines"
NAMES = {"meeting:nDCG@10": "mtg nDCG@10"}


def _fits(text: str) -> list[str]:
    lines = text.splitlines()
    assert len(lines) <= 40, len(lines)
    assert all(len(line) <= 100 for line in lines), max(lines, key=len)
    assert all(line == line.rstrip() for line in lines)
    return lines


def _names_the_headline(lines: list[str], arm: str) -> None:
    """Every class row's headline means and the answers' EM, as metrics.json holds them."""
    doc = json.loads((BASELINES / arm / "metrics.json").read_text(encoding="utf-8"))
    header = next(i for i, line in enumerate(lines) if line.startswith(f"{arm} on "))
    assert lines[header + 1].split() == ["class", "n", "unanswered", *" ".join(NAMES.get(m, m) for m in HEADLINE)
                                                                         .split()]
    for row in doc["retrieval"]["rows"]:
        line = next(x for x in lines[header + 2:] if x.split()[0] == row["class"])
        cells = line.split()
        assert [float(c) for c in cells[-2:]] == [row["means"][m] for m in HEADLINE], (row["class"], line)
        assert cells[1] == str(row["queries"]) and cells[2] == str(row["unanswered"])
    (overall,) = [r for r in doc["answers"]["rows"] if r["rule"] == r["surface"] == r["grammar"] == "all"]
    answers = next(x for x in lines[header:] if x.startswith("answers ("))
    assert answers.endswith(f"{overall['questions']} questions, {overall['declined']} declined, "
                            f"EM {overall['em']:.6f}")
    assert float(answers.rsplit(" ", 1)[1]) == overall["em"]


def _outcomes(out: Path) -> list[BenchedArm]:
    return [BenchedArm(arm, arm, out / arm, api.Results.read(BASELINES / arm).scored, {"bench": 1.0})
            for arm in ("bm25", "bm25-title")]


def _old_output(outcomes: list[BenchedArm], out: Path) -> str:
    """What bench printed before the summary (and prints with --full): each arm's metrics.md, its answers, where."""
    text = ""
    for o in outcomes:
        results = api.Results(o.results, o.out_dir)
        text += f"## {o.out_dir.relative_to(out)} (arm {o.arm})\n\n{results.to_markdown()}\n"
        row = results.record.answers.overall
        text += (f"answers ({results.record.answers.answerer}): {row.questions} questions, {row.declined} declined, "
                 f"EM {row.em:.4f}\n\n")
        text += f"wrote {o.out_dir}/\n"
    return text


def test_the_summary_of_one_results_directory_fits_and_names_its_headline():
    results = api.Results.read(BASELINES / "bm25")
    lines = _fits(results.to_summary())
    _names_the_headline(lines, "bm25")
    assert lines[-1] == f"wrote {BASELINES / 'bm25'}/: metrics.md (the full tables), report.html (the report)"


@pytest.fixture
def benched(tmp_path, monkeypatch):
    """bench of two arms, the stack's work replaced by the two baselines' results, into results/ as make bench does."""
    monkeypatch.chdir(tmp_path)
    out = Path("results")
    outcomes = _outcomes(out)
    monkeypatch.setattr(api, "bench_outcomes", lambda *a, **k: outcomes)
    return out, outcomes


def test_bench_of_two_arms_prints_a_summary_that_fits_whatever_the_terminal(benched):
    out, outcomes = benched
    args = ["bench", "--corpus", str(ROOT / "fixtures" / "small"), "--arm", "bm25", "--arm", "bm25-title",
            "--out", str(out)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    lines = _fits(done.stdout)
    for o in outcomes:
        _names_the_headline(lines, o.arm)
        assert f"wrote {o.out_dir}/: metrics.md (the full tables), report.html (the report)" in lines
    assert "| **all** |" not in done.stdout and done.stderr == "stages: bench 1.0 s; total 1.0 s\n"
    narrow = CliRunner().invoke(main, args, env={"COLUMNS": "40", "LINES": "10", "NO_COLOR": "1", "TERM": "dumb"})
    assert narrow.stdout == done.stdout


def test_bench_full_prints_the_tables_as_before(benched):
    out, outcomes = benched
    done = CliRunner().invoke(main, ["bench", "--corpus", str(ROOT / "fixtures" / "small"), "--arm", "bm25",
                                     "--arm", "bm25-title", "--out", str(out), "--full"])
    assert done.exit_code == 0, done.output
    assert done.stdout == _old_output(outcomes, out)
    assert done.stdout.count("| synthetic-s20261130-m200 | **all** |") == 16  # eight tables an arm


def test_compare_prints_a_summary_that_fits_and_full_prints_the_markdown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["compare", str(BASELINES / "bm25"), str(BASELINES / "bm25-title"), "--gate", "--resamples", "1000"]
    done = CliRunner().invoke(main, [*args, "--out", "summary.md"])
    assert done.exit_code == 0, done.output
    lines = _fits(done.stdout)
    doc = json.loads((BASELINES / "bm25" / "metrics.json").read_text(encoding="utf-8"))
    for row in doc["retrieval"]["rows"]:
        for m in HEADLINE:
            (line,) = [x for x in lines if x.split()[:2] == [row["class"], "nDCG@10"] and m == "nDCG@10"
                       or x.split()[:3] == [row["class"], "mtg", "nDCG@10"] and m != "nDCG@10"]
            assert f"{row['means'][m]:.4f}     {row['means'][m]:.4f}" in line, line
            assert line.endswith("no measurable difference")
    assert lines[0] == "compare: bm25-title against baseline bm25 on synthetic-s20261130-m200"
    assert "Gate: PASS" in lines
    assert lines[-2:] == ["full tables: summary.md", "report: --html FILE.html"]
    full = CliRunner().invoke(main, [*args, "--full", "--out", "full.md"])
    assert full.exit_code == 0 and full.stdout == Path("full.md").read_text(encoding="utf-8")
    assert Path("full.md").read_bytes() == Path("summary.md").read_bytes() and "**Gate: PASS**" in full.stdout


def test_the_stages_line_wraps_at_100_columns(benched, monkeypatch):
    out, outcomes = benched
    stages = {f"judge + score arm-{i}": 12.3 for i in range(8)}
    long = [BenchedArm(o.name, o.arm, o.out_dir, o.results, stages) for o in outcomes]
    monkeypatch.setattr(api, "bench_outcomes", lambda *a, **k: long)
    done = CliRunner().invoke(main, ["bench", "--corpus", str(ROOT / "fixtures" / "small"), "--arm", "bm25",
                                     "--arm", "bm25-title", "--out", str(out)])
    assert done.exit_code == 0, done.output
    lines = done.stderr.splitlines()
    assert len(lines) > 1 and lines[0].startswith("stages: ") and all(x.startswith("  ") for x in lines[1:])
    assert all(len(x) <= 100 for x in lines)
    assert " ".join(done.stderr.split()) == "stages: " + ", ".join(f"{k} 12.3 s" for k in stages) + "; total 98.4 s"
