"""The pull-request job (scripts/pr_job.sh) is one script that the composite action (action.yml) and .ci/run both run:
its steps are make targets, .ci/run runs every one of them (the README's `make test` last), a step prints its stage
time, and a failing step stops the job with its exit code. Run with a stand-in `make` on PATH that records what it
was asked to do (the real targets are what .ci/run runs)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "scripts" / "pr_job.sh"


def steps() -> list[str]:
    return subprocess.run([str(JOB), "--list"], capture_output=True, text=True, check=True).stdout.split()


def job(tmp_path: Path, *args: str, fail: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """scripts/pr_job.sh ARGS with a `make` that appends its arguments to tmp_path/made and fails (exit 7) on
    ``fail``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    make = bin_dir / "make"
    make.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(tmp_path / "made"))}\n'
                    f'[ "$1" != {shlex.quote(fail or "-")} ] || exit 7\n')
    make.chmod(0o755)
    clean = {k: v for k, v in os.environ.items() if k not in ("STAGE_LOG", "RUN_T0", "GITHUB_STEP_SUMMARY")}
    return subprocess.run([str(JOB), *args], capture_output=True, text=True, timeout=60,
                          env={**clean, "PATH": f"{bin_dir}:{clean['PATH']}", **(env or {})})


def made(tmp_path: Path) -> list[str]:
    path = tmp_path / "made"
    return path.read_text().splitlines() if path.exists() else []


def makefile_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][a-z0-9-]*):", text, re.M))


def test_the_jobs_steps_are_make_targets_and_ci_runs_every_one_the_readmes_test_last():
    assert steps() == ["setup", "jars", "lint", "verify", "verify-answers-none", "test"]
    assert set(steps()) <= makefile_targets()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    calls = [line.split()[1:] for line in ci.splitlines() if line.startswith("scripts/pr_job.sh")]
    assert [s for call in calls for s in call] == steps()  # every step, once, in the job's order
    assert ci.rstrip().splitlines()[-2] == "scripts/pr_job.sh test"  # then only the closing list of stage times
    assert not re.search(r"^stage (setup|jars|lint|verify|verify-answers-none|test) ", ci, re.M)  # not run twice


def test_the_action_runs_the_same_script_with_every_step():
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert "using: composite" in action
    assert 'bash "$GITHUB_ACTION_PATH/scripts/pr_job.sh" $STEPS' in action
    default = re.search(r"default: \"([^\"]*)\"", action.split("steps:\n", 1)[1])
    assert default is not None and default.group(1).split() == steps()
    workflow = (ROOT / ".github" / "workflows" / "pull-request.yml").read_text(encoding="utf-8")
    assert re.search(r"^      - uses: \./$", workflow, re.M)


def test_every_step_runs_make_in_order_and_prints_its_stage_time(tmp_path):
    summary = tmp_path / "summary.md"
    out = job(tmp_path, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert out.returncode == 0, out.stderr
    assert made(tmp_path) == steps()
    for step in steps():
        assert re.search(rf"^=== stage {re.escape(step)}: ok in \d+\.\d s \(run \d+\.\d s\)$", out.stdout, re.M)
    assert "=== stage times" in out.stdout
    assert all(f"=== stage {s}: ok" in summary.read_text() for s in steps())


def test_named_steps_run_in_the_jobs_order_and_add_to_the_callers_list(tmp_path):
    log = tmp_path / "stages"
    log.write_text("=== stage install: ok in 1.0 s (run 1.0 s)\n")
    out = job(tmp_path, "test", "lint", env={"STAGE_LOG": str(log)})
    assert out.returncode == 0, out.stderr
    assert made(tmp_path) == ["lint", "test"]
    lines = log.read_text().splitlines()
    assert [line.split()[2].rstrip(":") for line in lines] == ["install", "lint", "test"]
    assert "=== stage times" not in out.stdout  # the caller (.ci/run) closes with the list


def test_a_failing_step_stops_the_job_with_its_exit_code(tmp_path):
    out = job(tmp_path, fail="lint")
    assert out.returncode == 7
    assert made(tmp_path) == ["setup", "jars", "lint"]  # verify and later never ran
    assert "=== stage lint: FAILED (exit 7)" in out.stdout


@pytest.mark.parametrize("step", ["bench", "perf", "--all"])
def test_a_step_that_is_not_the_jobs_is_refused_in_one_line(tmp_path, step):
    out = job(tmp_path, "lint", step)
    assert out.returncode == 2 and made(tmp_path) == []
    assert out.stderr.strip().splitlines() == [
        f"pr_job: '{step}' is not a step of the pull-request job (setup jars lint verify verify-answers-none test)"]
