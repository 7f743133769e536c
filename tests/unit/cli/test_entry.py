"""The console script's end (``turnbench.cli.entry``): exit code, streams flushed and exit handlers run, then no
teardown of the heap."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[3]


def _run(program: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_the_exit_code_and_everything_printed_to_a_pipe_come_out() -> None:
    # stdout to a pipe is block-buffered: a quick exit that did not flush would lose the help text
    ok = _run("import sys; sys.argv = ['turnbench', '--help']\nfrom turnbench.cli import entry; entry()")
    assert ok.returncode == 0 and ok.stdout.startswith("Usage: turnbench") and "Exit codes:" in ok.stdout
    bad = _run("import sys; sys.argv = ['turnbench', 'score', '--corpus', '/nonexistent', '--passages', 'p', "
               "'--run', 'r', '--out', '/nonexistent/out']\nfrom turnbench.cli import entry; entry()")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and bad.stderr.startswith("turnbench: BadInput:")


def test_exit_handlers_run_and_a_text_code_is_printed_as_sys_exit_prints_it() -> None:
    out = _run("import atexit, sys\n"
               "atexit.register(lambda: print('handler ran', flush=True))\n"
               "from turnbench.cli.base import quick_exit\n"
               "print('buffered', end='')\n"
               "quick_exit('stopped: a reason')")
    assert (out.returncode, out.stdout, out.stderr) == (1, "bufferedhandler ran\n", "stopped: a reason\n")


def test_with_a_thread_still_running_the_interpreter_ends_as_usual() -> None:
    out = _run("import threading, time\n"
               "from turnbench.cli.base import quick_exit\n"
               "t = threading.Thread(target=lambda: (time.sleep(0.3), print('thread done', flush=True)))\n"
               "t.start()\n"
               "quick_exit(3)")
    assert (out.returncode, out.stdout) == (3, "thread done\n")
