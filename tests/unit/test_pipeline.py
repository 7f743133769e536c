"""bench refuses before starting a stack; the example CI workflow uses only make targets and variables that exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnbench.errors import BadInput
from turnbench.pipeline.bench import result_dirs

ROOT = Path(__file__).resolve().parents[3]
WORKFLOW = ROOT / "examples" / "github-actions" / "turnbench-pr.yml"


def test_result_directories_one_per_arm_or_the_control_name(tmp_path):
    assert result_dirs(tmp_path, ["bm25", "bm25-title"], None) == [
        ("bm25", tmp_path / "bm25"), ("bm25-title", tmp_path / "bm25-title")]
    assert result_dirs(tmp_path, ["bm25"], "control") == [("bm25", tmp_path / "control")]
    with pytest.raises(BadInput, match="exactly one arm"):
        result_dirs(tmp_path, ["bm25", "bm25-title"], "control")
    with pytest.raises(BadInput, match="more than once"):
        result_dirs(tmp_path, ["bm25", "bm25"], None)
    (tmp_path / "bm25").mkdir()
    (tmp_path / "bm25" / "metrics.json").write_text("{}")
    with pytest.raises(BadInput, match="not empty"):
        result_dirs(tmp_path, ["bm25"], None)
    with pytest.raises(BadInput):
        result_dirs(tmp_path, ["bm25"], "../up")








def test_progress_counters_exist_only_where_progress_counts_and_take_batches_with_their_total():
    from turnbench.cli.progress import RichProgress
    from turnbench.pipeline.progress import QUIET, Stages
    from turnbench.vocab import Stage

    assert Stages(QUIET).counter(Stage.RUN, "queries bm25") is None  # nothing drawn: the engines do no progress work
    with RichProgress() as progress:
        st = Stages(progress)
        advance = st.counter(Stage.RUN, "queries bm25")
        assert advance is not None
        advance(100, 740)
        advance(100, 740)
        task = next(t for t in progress._bars.tasks if t.description == "queries bm25")
        assert (task.completed, task.total, task.fields["counted"]) == (200, 740, True)


def test_stage_timings_are_keyed_by_the_stage_and_shown_by_its_label_in_the_order_they_ran():
    from turnbench.pipeline.progress import Stages, Took
    from turnbench.vocab import Stage

    told: list[tuple[str, str]] = []

    class Told:
        counting = False

        def expect(self, stages):
            told.append(("expect", str(stages)))

        def start(self, stage, label):
            told.append(("start", label))

        def advance(self, stage, counter, done, total):
            raise AssertionError("a progress that does not count is never advanced")

        def finish(self, stage, label, seconds):
            told.append(("finish", label))

        def note(self, line, *, always=False):
            told.append(("note", line))

    st = Stages(Told())
    with st.stage(Stage.LOAD):
        pass
    with st.stage(Stage.JUDGE_AND_SCORE, " bm25"), st.stage(Stage.JUDGE_AND_SCORE, " bm25"):
        pass
    st.log("a note")
    assert set(st.elapsed) == {Took(Stage.LOAD), Took(Stage.JUDGE_AND_SCORE, " bm25")}
    assert list(st.seconds()) == ["load", "judge + score bm25"]
    assert told == [("start", "load"), ("finish", "load"), ("start", "judge + score bm25"),
                    ("start", "judge + score bm25"), ("finish", "judge + score bm25"),
                    ("finish", "judge + score bm25"), ("note", "a note")]
    # runinfo.json's keys are the stages' values, the strings they always were
    assert [s.value for s in Stage] == ["stack", "load", "answers", "run", "judge_and_score", "report", "write"]


def test_seed_corpus_refuses_a_directory_holding_another_corpus(tmp_path):
    from tests.unit.cli.helpers import one_meeting_corpus
    from turnbench.engines.arms import builtin
    from turnbench.pipeline.bench import bench_seeds, seed_corpus

    bm25 = [builtin("bm25")]
    other = one_meeting_corpus(tmp_path / "seed-5")
    with pytest.raises(BadInput, match="not seed 5's default corpus"):
        seed_corpus(5, other, echo=lambda _line: None)
    with pytest.raises(BadInput, match="distinct seeds"):
        bench_seeds([1, 1], bm25, tmp_path / "out", corpora=tmp_path)
    (tmp_path / "out" / "bm25" / "seed-2").mkdir(parents=True)
    (tmp_path / "out" / "bm25" / "seed-2" / "metrics.json").write_text("{}")
    with pytest.raises(BadInput, match="not empty"):
        bench_seeds([1, 2], bm25, tmp_path / "out", corpora=tmp_path)
    assert not (tmp_path / "seed-1").exists()  # refused before any corpus was generated
