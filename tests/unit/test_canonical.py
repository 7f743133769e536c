"""turnbench/canonical.py: atomic writes must not leave owner-only files and directories behind
(mkstemp/mkdtemp create 0600/0700)."""

from __future__ import annotations

import os
import stat

import pytest

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


def test_parse_json_reads_as_json_loads_reads_and_refuses_what_it_refuses():
    import json

    cases = ['{"a":1}', ' {"a":1}', '{"a":1} ', '{"a":1}\n', '{"a":1}\r\n\t', '{"a":1}\x0b', '\ufeff{"a":1}', '', ' ',
             'NaN', '[1, NaN]', '{"a": -Infinity}', '1 2', '{"a":1}{', '"x"', '[1,]', '[1]\u00a0', '{"a":1,"a":2}',
             '[' * 40 + ']' * 40]
    for text in [*cases, *(c.encode("utf-8") for c in cases), '{"a":[1]}'.encode("utf-16")]:
        try:
            want = ("value", json.loads(text, parse_constant=canonical._no_constant))
        except ValueError as exc:
            want = ("refused", str(exc))
        try:
            got = ("value", canonical.parse_json(text))
        except ValueError as exc:
            got = ("refused", str(exc))
        assert got == want, text
    with pytest.raises(ValueError, match="nested too deeply"):
        canonical.parse_json("[" * 100_000 + "]" * 100_000)
