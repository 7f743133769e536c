"""turnbench.corpus is at the bottom of the package: imports flow generator -> corpus, never back, so
the generic checks and the QMSum adapter stand without the generator."""

from __future__ import annotations

import ast

from tests.unit.corpus.helpers import REPO

ABOVE = ("turnbench.generator", "turnbench.stack", "turnbench.engines", "turnbench.harness",
         "turnbench.pipeline", "turnbench.cli")


def test_no_corpus_module_imports_a_stage_above_it():
    found = []
    for path in sorted((REPO / "turnbench" / "corpus").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found.extend(f"{path.name}: {n}" for n in names if n.startswith(ABOVE))
    assert found == []
