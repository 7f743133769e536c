"""`make help` lists every documented target once per group it belongs to, each under a purpose, none left over."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_help_groups_every_documented_target():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    documented = re.findall(r"^## ([a-z][a-z0-9-]*):", makefile, flags=re.M)
    groups = re.findall(r"^##@ ([^:]+):", makefile, flags=re.M)
    out = subprocess.run(["make", "-s", "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    headers = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert headers == groups, "a target is in no group (make help shows Other)" if "Other" in headers else headers
    listed = {line.split()[0] for line in out.splitlines() if line.startswith("  ")}
    assert listed == set(documented)
    assert len(documented) == len(set(documented))
