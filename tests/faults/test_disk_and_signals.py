"""A full disk and a killed `generate`: one line, and nothing partial left — not even a hidden staging directory.

The full disk is real: a small tmpfs mounted for the test (root, as CI runs) — or, without root, a file-size
limit, which the kernel reports the same way to a writer (EFBIG instead of ENOSPC).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.childproc import interruptible
from turnbench.processes import is_running

CLI = [sys.executable, "-c", "from turnbench.cli import main; main()"]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[tuple[Path, dict[str, object]]]:
    """(a directory on a nearly full filesystem, Popen keyword arguments that make writes fail there)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() == 0:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], check=True)
        try:
            yield mount, {}
        finally:
            subprocess.run(["umount", "-l", str(mount)], check=False)
        return

    def limit() -> None:  # without root: a file may not grow past 64 KiB, and the signal is ignored
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    yield mount, {"preexec_fn": limit}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_generate_on_a_full_disk_is_one_line_exit_3_and_leaves_nothing(small_disk, workers: str) -> None:
    disk, kw = small_disk
    done = subprocess.run([*CLI, "generate", "--meetings", "200", "--workers", workers, "--out", str(disk / "c")],
                          capture_output=True, text=True, timeout=300, cwd=REPO, **kw)  # type: ignore[arg-type]
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("turnbench: DiskFull: "), done.stderr
    assert list(disk.iterdir()) == []


def test_score_on_a_full_disk_leaves_no_partial_results(small_disk, tmp_path: Path) -> None:
    disk, kw = small_disk
    from turnbench.corpus.format import open_corpus
    from turnbench.loading.chunking import chunk_meeting
    from turnbench.passages import write_passages

    small = REPO / "fixtures" / "small"
    passages = [c.passage for m in open_corpus(small).iter_meetings() for c in chunk_meeting(m.id, m.turns)]
    write_passages(tmp_path / "p.jsonl", passages)
    (tmp_path / "run.trec").write_text(f"q00001 Q0 {passages[0].id} 1 1.0 x\n")
    if not kw:  # fill the 256 KiB tmpfs so that only 24 KiB remain: less than metrics.json needs
        (disk / "filler").write_bytes(b"\0" * (232 * 1024))
    done = subprocess.run([*CLI, "score", "--corpus", str(small), "--passages", str(tmp_path / "p.jsonl"), "--run",
                           str(tmp_path / "run.trec"), "--out", str(disk / "results")], capture_output=True,
                          text=True, timeout=300, cwd=REPO, **kw)  # type: ignore[arg-type]
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("turnbench: DiskFull: ")
    assert sorted(p.name for p in disk.iterdir()) in ([], ["filler"])


def _generate(out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*CLI, "generate", "--meetings", "2000", "--workers", "2", "--out", str(out)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=interruptible)


def _staging(parent: Path) -> list[Path]:
    return sorted(parent.glob(".*.partial"))


def _wait_for_staging(parent: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not _staging(parent) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(1.0)  # let the workers write a part or two
    assert _staging(parent), "generate never staged its output"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signalled_generate_removes_its_staging_and_its_workers(tmp_path: Path, sig: int) -> None:
    proc = _generate(tmp_path / "c")
    _wait_for_staging(tmp_path, proc)
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    proc.send_signal(sig)
    assert proc.wait(timeout=60) in (128 + sig, 130)
    assert _staging(tmp_path) == [] and not (tmp_path / "c").exists()
    assert not any(is_running(int(pid)) for pid in children)


def test_a_killed_generate_s_staging_is_swept_by_the_next_generate_to_the_same_place(tmp_path: Path) -> None:
    proc = _generate(tmp_path / "c")
    _wait_for_staging(tmp_path, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    stale = _staging(tmp_path)
    assert stale, "SIGKILL gives no chance to clean up: the staging directory is there"
    # a staging directory of a run that is still alive (this test's own process) is never touched
    live = tmp_path / ".c.live.partial"
    live.mkdir()
    (live / ".turnbench-owner").write_text(json.dumps({"pid": os.getpid(), "ticks": _ticks()}))
    elsewhere = subprocess.run([*CLI, "generate", "--meetings", "8", "--out", str(tmp_path / "d")], cwd=REPO,
                               capture_output=True, timeout=120)
    assert elsewhere.returncode == 0 and all(p.exists() for p in stale)  # another destination: left alone
    again = subprocess.run([*CLI, "generate", "--meetings", "8", "--out", str(tmp_path / "c")], cwd=REPO,
                           capture_output=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert not any(p.exists() for p in stale) and live.exists()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (not a zombie waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _ticks() -> int | None:
    from turnbench.processes import start_ticks

    return start_ticks(os.getpid())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_signalled_compare_takes_its_checking_child_with_it(tmp_path: Path, sig: int) -> None:
    """compare re-derives its sides in a forked child while it draws the statistics: ended by a signal (even
    SIGKILL, which no handler sees), it leaves neither the child nor a file behind."""
    side = REPO / "baselines" / "bm25"
    for attempt in range(3):
        out = tmp_path / f"compare-{attempt}.md"
        proc = subprocess.Popen([*CLI, "compare", str(side), str(side), "--out", str(out), "--html",
                                 str(out.with_suffix(".html"))], cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                                preexec_fn=interruptible)
        children: list[str] = []
        deadline = time.monotonic() + 60
        while not children and time.monotonic() < deadline and proc.poll() is None:
            found = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
            children = [pid for pid in found if _alive(int(pid))]  # a child that has ended is not the one sought
            time.sleep(0.01)
        assert children, "compare finished before its checking child could be seen"
        proc.send_signal(sig)
        code = proc.wait(timeout=60)
        if code == 0 and attempt < 2 and out.is_file():
            if proc.stderr:
                proc.stderr.close()
            continue  # compare ended, whole, before the signal reached it: the race this test cannot rule out
        assert code in (128 + sig, -sig), proc.stderr.read() if proc.stderr else b""
        break
    for _ in range(10):  # at once: the child's own work would take it a second or more to finish
        if not any(is_running(int(pid)) for pid in children):
            break
        time.sleep(0.05)
    assert not any(is_running(int(pid)) for pid in children)
    assert not out.exists() and not out.with_suffix(".html").exists()


# A sweep driven through its real command line, signal handling and staging, with the stack and each cell's bench
# stubbed (a cell's results directory written as bench would, then the second cell hangs): what is under test is
# what a signal leaves of OUT, not the numbers. tests/integration/test_sweep.py runs the real thing.
SWEEP_CHILD = r"""
import contextlib, sys, time
from turnbench.pipeline import bench as B, sweep as P
from turnbench.render import sweep_tables as R

HANG = sys.argv[1] == "hang"

@contextlib.contextmanager
def no_stack(stack, opts, st, say):
    yield None

def cells(open_, job, resolved, opts, st, *, tag, say):
    for arm, out_dir in job[2]:
        out_dir.mkdir(parents=True)
        (out_dir / "metrics.json").write_text("{}")
    if HANG and tag != " w30-o0":
        time.sleep(120)
    return []

B._stack_stage, B._bench_corpus = no_stack, cells
P.summary = lambda *args: None
P.write_summary = lambda out, doc: (out / "sweep.json").write_text("{}")
R.sweep_md = lambda doc: ""
from turnbench.cli import main
sys.argv = ["turnbench", *sys.argv[2:]]
main()
"""


def _sweep(out: Path, mode: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", SWEEP_CHILD, mode, "sweep", "--corpus", str(REPO / "fixtures" /
                                                                                              "small"),
                             "--arm", "bm25", "--max-words", "30,200", "--out", str(out)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=interruptible)


def _first_cell_staged(parent: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not list(parent.glob(".*.partial/w30-o0/bm25/metrics.json")) and time.monotonic() < deadline \
            and proc.poll() is None:
        time.sleep(0.05)
    assert list(parent.glob(".*.partial/w30-o0/bm25/metrics.json")), "the sweep never staged its first cell"
    time.sleep(0.3)  # into the second cell


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signalled_sweep_leaves_no_cell_and_its_rerun_goes_through(tmp_path: Path, sig: int) -> None:
    out = tmp_path / "sweep"
    proc = _sweep(out, "hang")
    _first_cell_staged(tmp_path, proc)
    proc.send_signal(sig)
    assert proc.wait(timeout=60) in (128 + sig, 130)
    # no cell without sweep.json: no OUT at all, and no staging
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    again = _sweep(out, "finish")
    assert again.wait(timeout=120) == 0, again.stderr.read() if again.stderr else b""
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "sweep.json", "w200-o0/bm25/metrics.json", "w30-o0/bm25/metrics.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep"]


def test_a_killed_sweep_s_staging_is_swept_by_its_rerun(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    proc = _sweep(out, "hang")
    _first_cell_staged(tmp_path, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    stale = _staging(tmp_path)
    assert stale and not out.exists()  # SIGKILL gives no chance to clean up; OUT itself was never made
    again = _sweep(out, "finish")
    assert again.wait(timeout=120) == 0, again.stderr.read() if again.stderr else b""
    assert (out / "sweep.json").is_file() and not any(p.exists() for p in stale)
