"""Scoring from Python: judge any engine's passage inventory against a corpus's gold and score its run, in memory
(``score``) or from files into a results directory (``score_files``, ``score_hits``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from turnbench.api._args import PathLike, _corpus, _corpus_root, _is_path, _list, _path, _typed
from turnbench.api.results import Results
from turnbench.harness.judgements import RelevancePolicy
from turnbench.harness.metrics import selected
from turnbench.passages import Passage
from turnbench.rankings import RankedPassage, Ranking
from turnbench.vocab import ScopeName

CorpusLike = Any  # a Corpus or its directory


def score(corpus: CorpusLike, passages: PathLike | Iterable[Passage], ranking: Any,
          *, policy: RelevancePolicy = RelevancePolicy(), scope: str = ScopeName.CORPUS,
          arm: Mapping[str, Any] | None = None, measures: Sequence[str] = ()) -> Results:
    """Judge a passage inventory against the corpus's gold and score a run of it — any engine's. ``ranking``: a run
    file's path, RankedPassage records, ``{query: {passage: score}}``, a ranx ``Run`` or a pandas DataFrame with
    columns ``query_id``, ``passage_id``, ``score``. ``arm`` describes the engine (recorded verbatim;
    ``external/unknown`` without it). ``measures``: extra measures to compute beside the headline ones (R@1, P@5,
    P@10, MAP@100, Success@1/5/10, each also as meeting:NAME), recorded in metrics.json's ``extra`` block."""
    from turnbench.api.frames import ranked_from
    from turnbench.harness.score import UNKNOWN
    from turnbench.passages import read_passages
    from turnbench.pipeline.scoring import score_passages
    from turnbench.runfiles import read_run

    the_corpus = _corpus(corpus)
    selected(measures)  # refused before the inventory is read
    _typed(policy, RelevancePolicy, "policy", "a RelevancePolicy")
    _typed(scope, str, "scope", "a scope's name (str)")
    _typed(arm, Mapping, "arm", "a mapping describing the engine", optional=True)
    inventory = read_passages(Path(passages)) if _is_path(passages) else _list(
        passages, "passages", "Passage records (or a passages.jsonl path)", lambda p: isinstance(p, Passage),
        "a Passage")
    in_memory = None if _is_path(ranking) or isinstance(ranking, Ranking) else ranked_from(ranking)
    entries: Iterable[RankedPassage] = (
        in_memory if in_memory is not None else read_run(Path(ranking)) if _is_path(ranking)
        else ranking if isinstance(ranking, Ranking) else _list(
            ranking, "ranking", "RankedPassage records, {query: {passage: score}}, a ranx Run, a DataFrame (or a run "
            "file's path)", lambda r: isinstance(r, RankedPassage), "a RankedPassage"))
    scored = score_passages(the_corpus, inventory, entries, policy=policy, scope=scope,
                            arm=dict(arm) if arm is not None else UNKNOWN, measures=measures)
    return Results(scored)


def _score_args(policy: Any, scope: Any, arm_config: Any) -> Path | None:
    _typed(policy, RelevancePolicy, "policy", "a RelevancePolicy")
    _typed(scope, str, "scope", "a scope's name (str)")
    return None if arm_config is None else _path(arm_config, "arm_config")


def score_files(corpus: CorpusLike, passages: PathLike, ranking: PathLike, out: PathLike, *,
                policy: RelevancePolicy = RelevancePolicy(), scope: str = ScopeName.CORPUS,
                arm_config: PathLike | None = None, measures: Sequence[str] = ()) -> Results:
    """``score`` from files, written: judge ``passages`` (passages.jsonl), score ``ranking`` (six-column TREC or
    run.jsonl) and write the results directory ``out`` (metrics, report.html, the TREC qrels and runs, runinfo).
    ``arm_config``: a JSON file describing the engine (e.g. the arm.json ``write_run`` writes), recorded verbatim;
    ``measures``: extra measures, as ``score`` takes them."""
    from turnbench.pipeline.scoring import score_files as scored

    root, inventory, run_file, target = (_corpus_root(corpus), _path(passages, "passages"),
                                         _path(ranking, "ranking"), _path(out, "out"))
    arm = _score_args(policy, scope, arm_config)
    return Results(scored(root, inventory, run_file, target, policy=policy, scope=scope, arm_config=arm,
                          measures=measures), target)


def score_hits(corpus: CorpusLike, hits: PathLike, out: PathLike, *, policy: RelevancePolicy = RelevancePolicy(),
               scope: str = ScopeName.CORPUS, arm_config: PathLike | None = None, measures: Sequence[str] = ()
               ) -> Results:
    """``score_files`` for a product's hits (JSON lines {query, meeting, start, end[, speaker][, text][, score]} in
    rank order, judged by the words their spans hold; docs/formats.md) instead of a passage inventory and a run."""
    from turnbench.pipeline.scoring import score_hits as scored

    root, hits_file, target = _corpus_root(corpus), _path(hits, "hits"), _path(out, "out")
    arm = _score_args(policy, scope, arm_config)
    return Results(scored(root, hits_file, target, policy=policy, scope=scope, arm_config=arm, measures=measures),
                   target)
