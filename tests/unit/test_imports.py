"""The house plan, checked: imports flow one way along the data flow, and no benchmark lives in the package.

Every import of every module counts, at module level or inside a function, so a lazy import cannot hide a
dependency that runs against the flow.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "turnbench"

# The contracts every room may use: errors, canonical bytes, process identity and signals, the corpus format, and
# the records engines hand the harness (runs for retrieval, submissions for answers).
BASE = {"turnbench", "errors", "canonical", "procs", "signals", "corpus", "runs", "submissions"}
ALLOWED = {
    "turnbench": set(),
    "errors": set(),
    "procs": set(),
    "signals": set(),
    "canonical": {"errors", "procs"},
    "corpus": {"turnbench", "errors", "canonical"},
    "runs": {"errors", "canonical"},
    "submissions": {"errors", "canonical", "corpus"},
    "generator": BASE,
    "stack": BASE,
    "engines": BASE | {"stack"},
    "harness": BASE,  # pure scoring: never the stack, never an engine
    "pipeline": BASE | {"generator", "stack", "engines", "harness"},
    "cli": BASE | {"generator", "stack", "engines", "harness", "pipeline"},
}


def room(module: str) -> str:
    parts = module.split(".")
    return "turnbench" if len(parts) == 1 else parts[1]


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    # the package root holds only __version__: importing it is no dependency on a room
    return {m for m in out if m.startswith("turnbench.")}


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_imports_flow_down_the_data_flow(path: Path) -> None:
    me = module_name(path)
    src = room(me)
    assert src in ALLOWED, f"{me}: room {src!r} is not in the house plan (tests/unit/test_imports.py)"
    against = sorted({f"{me} imports {m}" for m in imports_of(path)
                      if room(m) != src and room(m) not in ALLOWED[src] and _is_module(m)})
    assert not against, "; ".join(against)


def _is_module(name: str) -> bool:
    """``from turnbench import canonical`` names a module; ``from turnbench import __version__`` does not."""
    parts = name.split(".")
    target = PACKAGE.parent.joinpath(*parts)
    return target.with_suffix(".py").is_file() or (target / "__init__.py").is_file() or len(parts) > 2


def test_the_harness_imports_neither_stack_nor_engines() -> None:
    # the rule the issue states in so many words, kept as its own test so that ALLOWED cannot quietly lose it
    for path in (PACKAGE / "harness").rglob("*.py"):
        bad = [m for m in imports_of(path) if room(m) in ("stack", "engines", "pipeline", "cli")]
        assert not bad, f"{module_name(path)} imports {bad}"


def test_no_benchmark_lives_in_the_package() -> None:
    named = [p for p in MODULES if re.search(r"bench|speed|timing", p.stem)]
    assert not named, f"benchmark-like modules inside turnbench/ (they belong in benchmarks/): {named}"
    # a module run as a script is a benchmark or a tool; the watchdog is the one process entry point turnbench spawns
    scripts = [p for p in MODULES if 'if __name__ == "__main__"' in p.read_text(encoding="utf-8")
               and p.name != "_watchdog.py"]
    assert not scripts, f"scripts inside turnbench/ (benchmarks belong in benchmarks/): {scripts}"


def test_no_module_is_over_450_lines() -> None:
    long = {module_name(p): n for p in MODULES if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert not long, f"split these modules: {long}"
