"""turnbench from Python: the verbs of the data flow, each a thin call into the room that owns the stage.

    import turnbench
    corpus = turnbench.generate("corpora/default", seed=20261130)        # or an existing corpus directory
    with turnbench.open_stack() as stack:
        bm25, title = turnbench.bench(corpus, ["bm25", "bm25-title"], "results", stack=stack)
    print(turnbench.compare(bm25, title).to_markdown())

Scoring another engine's output needs no stack:

    results = turnbench.score("corpora/default", "their/passages.jsonl", "their/run.trec")
    results.mean("nDCG@10", "lookup"); results.write("results/theirs")

Every function refuses what the command line refuses, with the same exceptions (``turnbench.errors``): the command
line only adds exit codes. A path is accepted wherever a corpus, a passage inventory, a run or a results directory
is, and so is the object itself. Every argument's type is checked before anything is done: a wrong one is BadInput
naming the argument and what it takes (``bench(corpus, "bm25", out)`` is refused: ``arms`` is a list of arms).

The command line is a client of this package and of nothing else: every verb it has is here, one module per concept
(``corpora``, ``measures``, ``stacks``, ``runs``, ``scoring``, ``benching``, ``answers``, ``comparing``, ``files``;
``results`` for the records; ``cli_support`` for what a command line needs besides the verbs). A name is imported
from its module on first use, so ``import turnbench.api`` and ``turnbench --help`` stay instant.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from turnbench.api.answers import Answered, answer, answers_overall
    from turnbench.api.benching import Swept, bench, bench_outcomes, bench_seeds, sweep
    from turnbench.api.comparing import (
        Agreement,
        Decided,
        DecisionAgreement,
        agreement,
        agreement_decisions,
        check_plan,
        compare,
        decide,
        plan,
        reannotate,
        report,
    )
    from turnbench.api.corpora import (
        export_beir,
        export_run,
        export_transcripts,
        failed_checks,
        generate,
        import_meetingqa,
        import_qmsum,
        import_transcripts,
        open_corpus,
        regenerate,
        validate,
    )
    from turnbench.api.files import json_text, write_bytes, write_json, write_text
    from turnbench.api.measures import Measured, graph_recall, measure
    from turnbench.api.results import QueryValues, Results, Row
    from turnbench.api.runs import WrittenRun, arms, fuse, run, write_run
    from turnbench.api.scoring import score, score_files, score_hits
    from turnbench.api.stacks import (
        Jars,
        describe_stack,
        find_postgres,
        image_reference,
        load,
        open_stack,
        prepare_jars,
        rebuild_launcher,
        recorded_stack,
        stack_down,
        stack_state_path,
        stack_status,
        stack_up,
        update_jars_lock,
        vectors,
    )
    from turnbench.harness.judgements import RelevancePolicy
    from turnbench.loading.index import DEFAULT_INDEX
    from turnbench.loading.spec import LoadSpec
    from turnbench.passages import Passage
    from turnbench.pipeline.bench import BenchedArm, BenchOptions
    from turnbench.pipeline.comparing import Compared, ComparedCorpora
    from turnbench.pipeline.progress import Progress
    from turnbench.rankings import RankedPassage

# where each name lives: the façade's own modules (turnbench.api.<module>) and the rooms' records it hands out
_HOMES = {
    "Results": "turnbench.api.results",
    "Row": "turnbench.api.results",
    "QueryValues": "turnbench.api.results",
    "open_corpus": "turnbench.api.corpora",
    "generate": "turnbench.api.corpora",
    "regenerate": "turnbench.api.corpora",
    "validate": "turnbench.api.corpora",
    "failed_checks": "turnbench.api.corpora",
    "import_qmsum": "turnbench.api.corpora",
    "import_meetingqa": "turnbench.api.corpora",
    "import_transcripts": "turnbench.api.corpora",
    "export_beir": "turnbench.api.corpora",
    "export_transcripts": "turnbench.api.corpora",
    "export_run": "turnbench.api.corpora",
    "measure": "turnbench.api.measures",
    "Measured": "turnbench.api.measures",
    "graph_recall": "turnbench.api.measures",
    "open_stack": "turnbench.api.stacks",
    "recorded_stack": "turnbench.api.stacks",
    "stack_up": "turnbench.api.stacks",
    "stack_status": "turnbench.api.stacks",
    "describe_stack": "turnbench.api.stacks",
    "stack_down": "turnbench.api.stacks",
    "stack_state_path": "turnbench.api.stacks",
    "image_reference": "turnbench.api.stacks",
    "prepare_jars": "turnbench.api.stacks",
    "find_postgres": "turnbench.api.stacks",
    "Jars": "turnbench.api.stacks",
    "update_jars_lock": "turnbench.api.stacks",
    "rebuild_launcher": "turnbench.api.stacks",
    "vectors": "turnbench.api.stacks",
    "load": "turnbench.api.stacks",
    "arms": "turnbench.api.runs",
    "run": "turnbench.api.runs",
    "write_run": "turnbench.api.runs",
    "WrittenRun": "turnbench.api.runs",
    "fuse": "turnbench.api.runs",
    "score": "turnbench.api.scoring",
    "score_files": "turnbench.api.scoring",
    "score_hits": "turnbench.api.scoring",
    "bench": "turnbench.api.benching",
    "bench_outcomes": "turnbench.api.benching",
    "bench_seeds": "turnbench.api.benching",
    "sweep": "turnbench.api.benching",
    "Swept": "turnbench.api.benching",
    "answer": "turnbench.api.answers",
    "Answered": "turnbench.api.answers",
    "answers_overall": "turnbench.api.answers",
    "compare": "turnbench.api.comparing",
    "decide": "turnbench.api.comparing",
    "Decided": "turnbench.api.comparing",
    "plan": "turnbench.api.comparing",
    "check_plan": "turnbench.api.comparing",
    "report": "turnbench.api.comparing",
    "reannotate": "turnbench.api.comparing",
    "agreement": "turnbench.api.comparing",
    "Agreement": "turnbench.api.comparing",
    "agreement_decisions": "turnbench.api.comparing",
    "DecisionAgreement": "turnbench.api.comparing",
    "write_bytes": "turnbench.api.files",
    "write_text": "turnbench.api.files",
    "write_json": "turnbench.api.files",
    "json_text": "turnbench.api.files",
    "Compared": "turnbench.pipeline.comparing",
    "ComparedCorpora": "turnbench.pipeline.comparing",
    "BenchOptions": "turnbench.pipeline.bench",
    "BenchedArm": "turnbench.pipeline.bench",
    "RelevancePolicy": "turnbench.harness.judgements",
    "Passage": "turnbench.passages",
    "RankedPassage": "turnbench.rankings",
    "LoadSpec": "turnbench.loading.spec",
    "DEFAULT_INDEX": "turnbench.loading.index",
    "Progress": "turnbench.pipeline.progress",
}

__all__ = ["Results", "Row", "QueryValues", "open_corpus", "generate", "regenerate", "validate", "failed_checks",
           "import_qmsum",
           "import_meetingqa", "import_transcripts", "export_beir", "export_transcripts", "export_run",
           "measure", "Measured",
           "graph_recall", "open_stack", "recorded_stack", "stack_up", "stack_status", "describe_stack", "stack_down",
           "stack_state_path", "image_reference", "prepare_jars", "Jars", "find_postgres", "update_jars_lock",
           "rebuild_launcher",
           "vectors", "load", "arms", "run", "write_run", "WrittenRun", "fuse", "score", "score_files", "score_hits",
           "bench", "bench_outcomes", "bench_seeds", "sweep", "Swept", "answer", "Answered", "answers_overall",
           "compare", "decide", "Decided", "plan", "check_plan", "report", "reannotate", "agreement", "Agreement",
           "agreement_decisions", "DecisionAgreement", "write_bytes", "write_text", "write_json", "json_text",
           "Compared", "ComparedCorpora", "BenchOptions", "BenchedArm", "RelevancePolicy", "Passage",
           "RankedPassage", "LoadSpec", "DEFAULT_INDEX", "Progress"]


def __getattr__(name: str) -> Any:
    """A name of the façade, imported on first use: ``import turnbench.api`` (and ``turnbench --help``) stays
    instant."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'turnbench.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
