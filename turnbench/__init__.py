"""turnbench: reproducible evaluation of meeting-transcript search.

The verbs of the data flow, from Python (``turnbench.api``; docs/api.md):

    import turnbench
    with turnbench.open_stack() as stack:
        bm25, title = turnbench.bench("corpora/default", ["bm25", "bm25-title"], "results", stack=stack)
    print(turnbench.compare(bm25, title).to_markdown())

``generate``, ``validate``, ``open_stack``, ``load``, ``run``, ``score``, ``bench``, ``compare`` and ``report``, with
typed results (``Results``, ``Row``, ``QueryValues``, ``Compared``). They are imported on first use, so
``import turnbench`` (and ``turnbench --help``) stays instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from turnbench.version import __version__

if TYPE_CHECKING:
    from turnbench.api import (
        BenchOptions,
        Compared,
        Passage,
        Progress,
        QueryValues,
        RankedPassage,
        RelevancePolicy,
        Results,
        Row,
        bench,
        compare,
        generate,
        load,
        open_stack,
        report,
        run,
        score,
        validate,
    )

__all__ = ["__version__", "generate", "validate", "open_stack", "load", "run", "score", "bench", "compare", "report",
           "Results", "Row", "QueryValues", "Compared", "BenchOptions", "RelevancePolicy", "Passage", "RankedPassage",
           "Progress"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from turnbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'turnbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
