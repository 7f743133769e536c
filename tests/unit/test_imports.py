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

# The contracts every room may use: errors, canonical bytes, process identity and signals, the corpus format, the
# records engines hand the harness (passages and rankings for retrieval, and the files runs come in; submissions for
# answers), the vocabularies, the settings, the version and the byte-shaping libraries' versions.
BASE = {"version", "versions", "errors", "canonical", "processes", "signals", "corpus", "passages", "rankings",
        "runfiles", "submissions", "vocab", "settings", "paths", "results.record"}
# Rooms in the order of the data flow; each may import the base and the rooms above it in this table.
FLOW = ("generator", "stack", "loading", "engines", "harness", "render", "results", "export", "pipeline", "api",
        "cli")
ALLOWED = {
    # the package root offers the façade (turnbench.api), imported lazily on first use
    "turnbench": {"version", "api"},
    "version": set(),
    "versions": set(),
    "errors": set(),
    "signals": set(),
    "processes": {"errors"},
    "settings": {"errors"},
    "paths": {"errors"},
    "vocab": {"errors"},
    "canonical": {"errors", "processes"},
    "corpus": {"errors", "canonical"},
    "passages": {"errors", "canonical"},
    "rankings": {"errors", "canonical", "passages"},
    "runfiles": {"errors", "canonical", "passages", "rankings"},
    "submissions": {"errors", "canonical", "corpus"},
    # the results record: what scoring returns and every later stage reads; the directory's reader is ``results``
    # (canonical: the decimals a block records)
    "results.record": {"errors", "canonical"},
    "generator": BASE,
    "stack": BASE,
    "loading": BASE | {"stack"},
    "engines": BASE | {"stack", "loading"},
    "harness": BASE,  # pure scoring and statistics: never the stack, never an engine, never a file of results
    "render": BASE | {"harness"},
    "results": BASE | {"harness", "render"},
    # a corpus for other tools: the load's chunking and the harness's judgements, which neither room may import both of
    "export": BASE | {"loading", "harness"},
    "pipeline": BASE | {"generator", "stack", "loading", "engines", "harness", "render", "results"},
    "api": BASE | {"generator", "stack", "loading", "engines", "harness", "render", "results", "export", "pipeline"},
    # the command line is a client of the Python API: everything it needs (the exceptions for its exit codes, the
    # vocabularies of its options, the settings) comes through turnbench.api (test_the_cli_is_a_client_of_the_api)
    "cli": {"api"},
}


def room(module: str) -> str:
    parts = module.split(".")
    if parts[1:2] == ["results"] and parts[2:3] in (["record"], ["sweep"], ["tables"]):
        return "results.record"  # the records (a scored run's, a sweep's): contracts every stage reads
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
            names = [f"{node.module}.{a.name}" for a in node.names]
            out.update(names)
            # `from turnbench import canonical` imports the module canonical, not the package's own namespace
            if not all(_is_module(n) for n in names):
                out.add(node.module)
    return {m for m in out if m == "turnbench" or m.startswith("turnbench.")}


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


def test_the_cli_is_a_client_of_the_api() -> None:
    """Every module of turnbench/cli imports, of turnbench, only turnbench.api (and its modules) and turnbench.cli:
    each command parses its options, calls the API, formats what it returned and maps errors to exit codes. Every
    import counts, inside functions and under TYPE_CHECKING too."""
    outside = sorted(f"{module_name(p)} imports {m}" for p in sorted((PACKAGE / "cli").rglob("*.py"))
                     for m in imports_of(p)
                     if not (m == "turnbench.api" or m.startswith(("turnbench.api.", "turnbench.cli"))))
    assert not outside, "; ".join(outside)


def test_the_cli_starts_without_the_rooms() -> None:
    """``turnbench --help`` imports the command line, the API's light support module and what that names (errors,
    settings, vocab, signals, paths, the version, the engines' concurrency bounds): never a room's heavy module."""
    import subprocess
    import sys

    code = ("import sys, turnbench.cli; print(' '.join(sorted(m for m in sys.modules "
            "if m.startswith('turnbench'))))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
                 .stdout.split())
    allowed = {"turnbench", "turnbench.api", "turnbench.api.cli_support", "turnbench.errors", "turnbench.settings",
               "turnbench.vocab", "turnbench.signals", "turnbench.paths", "turnbench.version", "turnbench.engines"}
    assert {m for m in loaded if not m.startswith("turnbench.cli")} <= allowed, sorted(loaded)


def test_the_harness_imports_neither_stack_nor_engines_nor_what_forks() -> None:
    # the rule the house plan states in so many words, kept as its own test so that ALLOWED cannot quietly lose it;
    # and scoring is pure: where its parts run (forked children) and where its files are staged is the executor's
    # (turnbench.pipeline.executor), so the harness never imports turnbench.processes, nor multiprocessing
    for path in (PACKAGE / "harness").rglob("*.py"):
        bad = [m for m in imports_of(path) if room(m) not in BASE - {"processes"} | {"harness"} and _is_module(m)]
        assert not bad, f"{module_name(path)} imports {bad}"
        forks = [n.module if isinstance(n, ast.ImportFrom) else a.name
                 for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(n, (ast.Import, ast.ImportFrom))
                 for a in n.names if (n.module if isinstance(n, ast.ImportFrom) else a.name) in {"multiprocessing",
                                                                                               "subprocess"}]
        assert not forks, f"{module_name(path)} imports {forks}"


def _module_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (at module level or inside a function), resolved to modules."""
    names = {module_name(p) for p in MODULES}

    def resolve(name: str) -> str | None:
        while name and name not in names:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for path in MODULES:
        me = module_name(path)
        graph[me] = {t for m in imports_of(path) if (t := resolve(m)) is not None and t != me}
    return graph


def test_no_import_cycle_anywhere_in_the_package() -> None:
    """Tarjan's strongly connected components over every import, lazy ones included: any component of more than one
    module is a cycle (two rooms that cannot be understood, or replaced, one without the other)."""
    graph = _module_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


MAX_FUNCTION_LINES = 80


def test_no_function_is_over_80_lines() -> None:
    """A function that does not fit on a screen does more than one thing: split it (docstrings count)."""
    long = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                n = (node.end_lineno or node.lineno) - start + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{module_name(path)}.{node.name} ({n} lines)")
    assert not long, f"split these functions: {long}"


def test_no_benchmark_lives_in_the_package() -> None:
    named = [p for p in MODULES if re.search(r"benchmark|speed|timing|perf", p.stem)]
    assert not named, f"benchmark-like modules inside turnbench/ (they belong in benchmarks/): {named}"
    # a module run as a script is a benchmark or a tool; the watchdog is the one process entry point turnbench spawns
    scripts = [p for p in MODULES if 'if __name__ == "__main__"' in p.read_text(encoding="utf-8")
               and p.name != "_watchdog.py"]
    assert not scripts, f"scripts inside turnbench/ (benchmarks belong in benchmarks/): {scripts}"


def test_no_module_is_over_450_lines() -> None:
    long = {module_name(p): n for p in MODULES if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert not long, f"split these modules: {long}"
