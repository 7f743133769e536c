"""docs/cli.md and docs/settings.md are generated: the committed pages must be what the scripts print now."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

from turnbench.settings import SETTINGS

ROOT = Path(__file__).resolve().parents[3]


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_doc_is_what_the_script_generates_now():
    committed = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    stale = "docs/cli.md is stale: run `python scripts/cli_doc.py > docs/cli.md`"
    assert committed == _script("cli_doc").render(), stale


def test_settings_doc_is_what_the_script_generates_now():
    committed = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    stale = "docs/settings.md is stale: run `python scripts/settings_doc.py > docs/settings.md`"
    assert committed == _script("settings_doc").render(), stale


def test_settings_doc_lists_exactly_the_settings_the_module_defines():
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    table = page.split("## ")[0]  # the generated table, before the scripts' variables
    listed = re.findall(r"^\| `(TURNBENCH_[A-Z_]+)` \|", table, flags=re.M)
    assert listed == [s.name for s in SETTINGS]
    assert len(set(listed)) == len(listed)
