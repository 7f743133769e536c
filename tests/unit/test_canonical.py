"""turnbench/canonical.py: atomic writes must not leave owner-only files and directories behind
(mkstemp/mkdtemp create 0600/0700)."""

from __future__ import annotations

import os
import stat

from turnbench import canonical


def test_atomic_files_and_staged_directories_get_the_modes_open_and_mkdir_would_give(tmp_path):
    old = os.umask(0o022)
    try:
        canonical._umask.cache_clear()
        f = tmp_path / "a.json"
        canonical.write_json(f, {"b": 1, "a": 2})
        assert f.read_bytes() == b'{\n  "a": 2,\n  "b": 1\n}\n'
        assert stat.S_IMODE(f.stat().st_mode) == 0o644
        with canonical.staged_directory(tmp_path / "out") as stage:
            (stage / "x").write_text("x")
        assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o755
    finally:
        os.umask(old)
        canonical._umask.cache_clear()
