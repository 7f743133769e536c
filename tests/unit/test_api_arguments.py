"""The Python API checks its arguments' types before it does anything: a wrong type is BadInput naming the argument
and what it takes — never a TypeError or AttributeError from deep inside, and never a string taken for a list of its
characters (``bench(corpus, "bm25", out)`` once answered "no arm named 'b'"). No stack is needed: every call here is
refused before one would be used."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import turnbench
from turnbench import api
from turnbench.errors import BadInput

REPO = Path(__file__).resolve().parents[2]
SMALL = str(REPO / "fixtures" / "small")
RESULTS = str(REPO / "baselines" / "bm25")


def _calls(tmp: Path) -> list[tuple[str, Callable[[], Any], str]]:
    return [
        ("generate out", lambda: turnbench.generate(1), "out must be a path"),
        ("generate setting", lambda: turnbench.generate(tmp / "g", meetings=8, bogus=1),
         "generate\\(\\) takes no setting bogus"),
        ("validate", lambda: turnbench.validate(None), "corpus .* must be a path .*not NoneType"),
        ("open_stack provider", lambda: turnbench.open_stack(1), "provider must be a provider's name"),
        ("load stack", lambda: turnbench.load("x", SMALL), "stack must be a StackInfo"),
        ("load spec", lambda: turnbench.load(_fake_stack(), SMALL, {"max_words": 200}), "spec must be a LoadSpec"),
        ("load max_words", lambda: turnbench.load(_fake_stack(), SMALL, api.LoadSpec(max_words="200")),  # type: ignore[arg-type]
         "max_words must be a positive integer"),
        ("load index", lambda: turnbench.load(_fake_stack(), SMALL, api.LoadSpec(index="Not An Index")),
         "'Not An Index' is not a valid OpenSearch index name"),
        ("vectors graph", lambda: api.vectors("minilm-l6-v2-int8", graph="yes"), "graph must be True or False"),
        ("vectors encoder", lambda: api.vectors("no-such-encoder"), "encoder: unknown encoder 'no-such-encoder'"),
        ("run stack", lambda: turnbench.run(None, SMALL, "bm25"), "stack must be a StackInfo"),
        ("run arm", lambda: turnbench.run(_fake_stack(), SMALL, 1), "arm must be an Arm or a built-in"),
        ("run depth", lambda: turnbench.run(_fake_stack(), SMALL, "bm25", depth="10"), "depth must be a whole number"),
        ("score corpus", lambda: turnbench.score(1, [], []), "corpus .* must be a path"),
        ("score passages", lambda: turnbench.score(SMALL, 1, []), "passages must be a list of Passage records"),
        ("score passage", lambda: turnbench.score(SMALL, [1], []), "passages\\[0\\] must be a Passage, not int"),
        ("score ranking", lambda: turnbench.score(SMALL, [], 1), "ranking must be a list of RankedPassage"),
        ("score measures", lambda: turnbench.score(SMALL, [], [], measures=5),  # type: ignore[arg-type]
         "measures must be measure names \\(a list of str\\), not int"),
        ("score measure", lambda: turnbench.score(SMALL, [], [], measures=[5]),  # type: ignore[list-item]
         "--measure 5: unknown; one of R@1"),
        ("compare measures", lambda: turnbench.compare(RESULTS, RESULTS, measures=["MAP"]), "--measure 'MAP': unknown"),
        ("score ranked", lambda: turnbench.score(SMALL, [], [("q", "p", 1.0)]),
         "ranking\\[0\\] must be a RankedPassage"),
        ("score policy", lambda: turnbench.score(SMALL, [], [], policy="x"), "policy must be a RelevancePolicy"),
        ("score arm", lambda: turnbench.score(SMALL, [], [], arm="x"), "arm must be a mapping"),
        ("score scope", lambda: turnbench.score(SMALL, [], [], scope=1), "scope must be a scope's name"),
        ("bench arms a string", lambda: turnbench.bench(SMALL, "bm25", tmp / "b"), "arms must be a list of arms"),
        ("bench arm", lambda: turnbench.bench(SMALL, [1], tmp / "b"), "arms\\[0\\] must be an Arm"),
        ("bench out", lambda: turnbench.bench(SMALL, ["bm25"], None), "out must be a path"),
        ("bench options", lambda: turnbench.bench(SMALL, ["bm25"], tmp / "b", "x"), "options must be a BenchOptions"),
        ("bench stack", lambda: turnbench.bench(SMALL, ["bm25"], tmp / "b", stack="x"), "stack must be a StackInfo"),
        ("bench corpus", lambda: turnbench.bench(1, ["bm25"], tmp / "b"), "corpus .* must be a path"),
        ("bench engines a string", lambda: turnbench.bench(SMALL, ["bm25"], tmp / "b", engines="m:f"),
         "engines must be a list"),
        ("compare sides", lambda: turnbench.compare(1, 2), "baseline .* must be a path"),
        ("compare corpora a string", lambda: turnbench.compare(RESULTS, RESULTS, corpora=SMALL),
         "corpora must be a list"),
        ("compare resamples", lambda: turnbench.compare(RESULTS, RESULTS, resamples="x"),
         "resamples must be a whole number"),
        ("compare seed", lambda: turnbench.compare(RESULTS, RESULTS, seed="x"), "seed must be a whole number or None"),
        ("compare seed range", lambda: turnbench.compare(RESULTS, RESULTS, seed=-1), "seed from 0 to 2\\^32-1"),
        ("report", lambda: turnbench.report(1), "results .* must be a path"),
        ("report baseline", lambda: turnbench.report(RESULTS, 2), "baseline .* must be a path"),
        ("Results.read", lambda: turnbench.Results.read(1), "directory must be a path"),
    ]


def _fake_stack() -> Any:
    """A StackInfo no server stands behind: every call given it must be refused before it is used."""
    from turnbench.stack.info import StackInfo

    fields = {f: None for f in StackInfo.__dataclass_fields__}
    return StackInfo(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("index", range(len(_calls(Path("/nonexistent")))))
def test_a_wrong_type_is_bad_input_naming_the_argument(index: int, tmp_path: Path) -> None:
    name, call, message = _calls(tmp_path)[index]
    with pytest.raises(BadInput, match=message):
        call()
    assert list(tmp_path.iterdir()) == []  # refused before anything was written
