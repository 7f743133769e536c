"""``turnbench score``: another engine's passage inventory and run (or ours), judged, scored and written.

The scoring itself is ``turnbench.harness.score.score_run``, run by ``turnbench.pipeline.executor`` (its children,
the staged results directory, the page); this module reads the files and writes the results directory.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from turnbench import canonical
from turnbench.corpus.format import Corpus
from turnbench.errors import BadInput
from turnbench.harness import judgements
from turnbench.harness.exports import Lazy
from turnbench.harness.metrics import selected
from turnbench.harness.score import UNKNOWN, EngineSide, ResultsFiles
from turnbench.passages import Passage
from turnbench.pipeline import executor
from turnbench.pipeline.executor import attach_report
from turnbench.processes import Background, collector_paused, outlive
from turnbench.rankings import RankedPassage
from turnbench.results.directory import REPORT_HTML, runinfo, staged_results, write_staged


def score_passages(corpus: Corpus, passages: Iterable[Passage], entries: Iterable[RankedPassage], *,
                   policy: judgements.RelevancePolicy, scope: str = "corpus", arm: object = UNKNOWN,
                   timings: dict[str, float] | None = None, measures: Sequence[str] = ()) -> ResultsFiles:
    """Another engine's inventory and run scored against ``corpus`` (its arm description recorded verbatim, else
    ``UNKNOWN``), with the report page drawn from the corpus's texts; ``timings`` receives the seconds of each."""
    t0 = time.perf_counter()
    results, source = executor.score(corpus, passages, entries, policy=policy, scope=scope,
                              engine=EngineSide(UNKNOWN, UNKNOWN, arm), measures=measures)
    t1 = time.perf_counter()
    results = attach_report(results, corpus, source)
    if timings is not None:
        timings.update({"judge_and_score": t1 - t0, "report": time.perf_counter() - t1})
    return results


@collector_paused()
def score_files(corpus_dir: Path, passages_file: Path, run_file: Path, out: Path, *, policy: judgements.RelevancePolicy,
                scope: str = "corpus", arm_config: Path | None = None, measures: Sequence[str] = ()) -> ResultsFiles:
    """``turnbench score``: read another engine's inventory and run (and its arm description, recorded verbatim,
    else ``UNKNOWN``), score them against the corpus and write a results directory (``measures``: extra ones)."""
    import numpy  # noqa: F401  # here, once: the children forked below need it too (the run's reader, the page)

    from turnbench.corpus.format import open_corpus
    from turnbench.passages import read_passages
    from turnbench.runfiles import read_ranking

    t0 = time.perf_counter()
    canonical.refuse_non_empty(out, "results directory")
    selected(measures)  # an unknown measure is refused before anything is read
    # the run is read in a child from the start, while the corpus is opened and the inventory read here, and scoring
    # starts before it is needed; the corpus's and the inventory's refusals still come first when the run is bad too
    with Background(read_ranking, Path(run_file)) as reading:
        corpus = open_corpus(corpus_dir)
        passages = read_passages(passages_file)
        corpus.queries()  # read while the run still is
        arm = _arm(arm_config)
        timings = {"read": time.perf_counter() - t0}
        # The results are staged from here (the executor's ``into``): scoring's children write the files they make
        # there as soon as they are made. The page is drawn in a child forked once scoring is done, which has the
        # results as they are here (forked earlier, every page this process wrote after the fork would have been
        # copied for it), while the claim files are written here. The page is the last file written, and a page that
        # cannot be drawn leaves no directory behind.
        with staged_results(out) as staged, contextlib.ExitStack() as lasting:
            t1 = time.perf_counter()
            results, source = executor.score(corpus, passages, reading, policy=policy, scope=scope,
                                      engine=EngineSide(UNKNOWN, UNKNOWN, arm), into=staged,
                                      lasting=lasting, measures=measures)
            timings["judge_and_score"] = time.perf_counter() - t1
            page: list[bytes] = []
            with Background(executor.drawn, executor.page_input(results, source), corpus) as drawing:

                def report() -> Iterator[bytes]:
                    html, seconds = drawing.result()
                    timings["report"] = seconds
                    page.append(html)
                    yield html

                markdown = write_staged(
                    staged, results.with_files({REPORT_HTML: Lazy(report)}),
                    lambda: runinfo(timings, corpus_dir=str(Path(corpus_dir).resolve())))
    outlive(passages, results, source)  # the inputs and what was made of them: never freed one by one
    return ResultsFiles(results.results, {**results.extra_files, REPORT_HTML: page[0]}, markdown)


def score_hits(corpus_dir: Path, hits_file: Path, out: Path, *, policy: judgements.RelevancePolicy,
               scope: str = "corpus", arm_config: Path | None = None, measures: Sequence[str] = ()) -> ResultsFiles:
    """``turnbench score --hits``: a product's hits (meeting, start, end[, speaker][, text] per query:
    ``runfiles.read_hits``) as an inventory and a run, judged by the words their spans hold and scored as
    ``score_files`` scores any engine's."""
    import tempfile

    from turnbench.passages import write_passages
    from turnbench.runfiles import read_hits, write_trec_run

    canonical.refuse_non_empty(out, "results directory")
    selected(measures)
    passages, run = read_hits(Path(hits_file))
    with tempfile.TemporaryDirectory(prefix="turnbench-hits-") as tmp:
        write_passages(Path(tmp) / "passages.jsonl", passages)
        grouped: dict[str, list[RankedPassage]] = {}
        for e in run:
            grouped.setdefault(e.query_id, []).append(e)
        write_trec_run(Path(tmp) / "run.trec", grouped, "hits")
        return score_files(corpus_dir, Path(tmp) / "passages.jsonl", Path(tmp) / "run.trec", out, policy=policy,
                           scope=scope, arm_config=arm_config, measures=measures)


def _arm(arm_config: Path | None) -> object:
    """The arm description a team hands in with its run, recorded verbatim; ``UNKNOWN`` without one."""
    if arm_config is None:
        return UNKNOWN
    try:
        arm = canonical.parse_json(arm_config.read_bytes().decode("utf-8"), max_nesting=canonical.MAX_NESTING)
    except OSError as exc:
        raise BadInput(f"{arm_config}: cannot read the arm configuration ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise BadInput(f"{arm_config}: the arm configuration is not UTF-8 text") from None
    except ValueError as exc:
        raise BadInput(f"{arm_config}: the arm configuration is not JSON ({exc})") from None
    if not isinstance(arm, dict):
        raise BadInput(f"{arm_config}: the arm configuration is a JSON {type(arm).__name__}, not an object")
    return arm
