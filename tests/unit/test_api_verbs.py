"""The verbs the Python API gained so that the command line is its client (answer, fuse, sweep, agreement, export,
import, measure, the stack's lifecycle, plan checks, decisions, files): each refuses a wrong argument as BadInput
naming it before anything is done or written, and the cheap ones do their work when called right. No stack is
needed: the calls that would use one are refused first, or use none (the ``none`` answerer, fusion, exports)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.unit.cli.helpers import one_meeting_corpus
from turnbench import api
from turnbench.errors import BadInput, StackStateError, UnknownArm

REPO = Path(__file__).resolve().parents[2]
SMALL = str(REPO / "fixtures" / "small")
BM25 = REPO / "baselines" / "bm25"
TITLE = REPO / "baselines" / "bm25-title"


def _refusals(tmp: Path) -> list[tuple[str, Callable[[], Any], str]]:
    out = tmp / "out"
    return [
        ("open_corpus", lambda: api.open_corpus(3), "corpus .* must be a path"),
        ("generate workers", lambda: api.generate(out, meetings=8, workers="2"), "workers must be a whole number"),
        ("regenerate manifest", lambda: api.regenerate(1, out), "manifest must be a path"),
        ("regenerate drift", lambda: api.regenerate(out, out, allow_version_drift="yes"),
         "allow_version_drift must be True or False"),
        ("validate surface_cosine", lambda: api.validate(SMALL, surface_cosine="no"),
         "surface_cosine must be True or False or None"),
        ("failed_checks", lambda: api.failed_checks(["x"]), "results must be the CheckResults validate\\(\\) returned"),
        ("import_qmsum sources", lambda: api.import_qmsum("data/ALL", out), "sources must be a list of paths"),
        ("import_meetingqa out", lambda: api.import_meetingqa([SMALL], None), "out must be a path"),
        ("import_transcripts directory", lambda: api.import_transcripts(None, out), "directory must be a path"),
        ("export_beir max_words", lambda: api.export_beir(SMALL, out, max_words="200"),
         "max_words must be a whole number"),
        ("export_transcripts fmt", lambda: api.export_transcripts(SMALL, out, 1), "fmt must be a format's name"),
        ("measure against", lambda: api.measure(SMALL, against=SMALL), "corpora must be a list"),
        ("stack_up provider", lambda: api.stack_up(1), "provider must be a provider's name"),
        ("describe_stack", lambda: api.describe_stack("x"), "stack must be a StackInfo"),
        ("recorded_stack writes", lambda: api.recorded_stack(writes="yes").__enter__(), "writes must be True or False"),
        ("recorded_stack ask_postgres", lambda: api.recorded_stack(writes=False, ask_postgres=1).__enter__(),
         "ask_postgres must be True or False"),
        ("image_reference value", lambda: api.image_reference(1, "--x"), "value must be an image reference"),
        ("image_reference bad", lambda: api.image_reference("Not An Image!", "--opensearch-image"),
         "--opensearch-image"),
        ("rebuild_launcher check", lambda: api.rebuild_launcher(check="yes"), "check must be True or False"),
        ("arms names", lambda: api.arms("bm25"), "names must be a list of built-in arms' names"),
        ("run concurrency", lambda: api.run(_fake_stack(), SMALL, "bm25", concurrency="2"),
         "concurrency must be a whole number"),
        ("write_run arm", lambda: api.write_run(out, SMALL, "bm25"), "arm must be an Arm"),
        ("write_run out", lambda: api.write_run(None, SMALL, api.arms(["bm25"])[0]), "out must be a path"),
        ("write_run stack", lambda: api.write_run(out, SMALL, api.arms(["bm25"])[0], stack="x"),
         "stack must be a StackInfo"),
        ("fuse runs", lambda: api.fuse("run.trec", out, method="rrf"), "runs must be a list of paths"),
        ("fuse weights", lambda: api.fuse([SMALL, SMALL], out, method="minmax", weights=["a"]),
         "weights\\[0\\] must be a number"),
        ("fuse method", lambda: api.fuse([SMALL, SMALL], out, method="avg"), "fusion method must be one of"),
        ("score_files policy", lambda: api.score_files(SMALL, "p", "r", out, policy="x"),
         "policy must be a RelevancePolicy"),
        ("score_files arm_config", lambda: api.score_files(SMALL, "p", "r", out, arm_config=1),
         "arm_config must be a path"),
        ("score_hits hits", lambda: api.score_hits(SMALL, None, out), "hits must be a path"),
        ("bench_outcomes arms", lambda: api.bench_outcomes(SMALL, "bm25", out), "arms must be a list of arms"),
        ("bench_seeds seeds", lambda: api.bench_seeds("1,2", ["bm25"], out), "seeds must be a list of seeds"),
        ("bench_seeds workers", lambda: api.bench_seeds([1], ["bm25"], out, workers="2"),
         "workers must be a whole number"),
        ("sweep no arm", lambda: api.sweep(SMALL, [], out), "give at least one --arm or --arm-file"),
        ("sweep sizes", lambda: api.sweep(SMALL, ["bm25"], out, max_words="50,x"),
         "--max-words '50,x': give whole numbers"),
        ("sweep grid", lambda: api.sweep(SMALL, ["bm25"], out, max_words=[50], overlaps=[50]),
         "--overlap 50 is not below --max-words 50"),
        ("sweep one cell", lambda: api.sweep(SMALL, ["bm25"], out, rule="span:R@10 up on every class"),
         "a rule over one arm compares cells with the first"),
        ("sweep options", lambda: api.sweep(SMALL, ["bm25"], out, options="x"), "options must be a BenchOptions"),
        ("answer tolerance", lambda: api.answer(SMALL, out, tolerance="1"), "tolerance must be a whole number"),
        ("answer answers", lambda: api.answer(SMALL, out, answers=1), "answers must be a path"),
        ("answers_overall", lambda: api.answers_overall(str(BM25)), "results must be Results"),
        ("compare texts", lambda: api.compare(BM25, TITLE, texts="yes"), "texts must be True or False"),
        ("decide compared", lambda: api.decide("x", "rule.txt"), "compared must be what compare\\(\\) returned"),
        ("check_plan planned", lambda: api.check_plan("x", SMALL), "planned must be a Plan"),
        ("report resamples", lambda: api.report(BM25, resamples="x"), "resamples must be a whole number"),
        ("agreement results", lambda: api.agreement(str(BM25)), "results must be a list of results directories"),
        ("agreement unit", lambda: api.agreement([BM25], unit=1), "unit must be queries or meetings"),
        ("agreement_decisions decisions", lambda: api.agreement_decisions([BM25], None),
         "decisions must be a path"),
        ("agreement_decisions synthetic", lambda: api.agreement_decisions([BM25], "d.toml", synthetic=1),
         "synthetic must be a corpus id"),
        ("write_bytes data", lambda: api.write_bytes(out, "text"), "data must be bytes"),
        ("write_text text", lambda: api.write_text(out, b"bytes"), "text must be text"),
        ("write_json document", lambda: api.write_json(out, [1]), "document must be a mapping"),
        ("json_text document", lambda: api.json_text("{}"), "document must be a mapping"),
    ]


def _fake_stack() -> Any:
    from turnbench.stack.info import StackInfo

    return StackInfo(**{f: None for f in StackInfo.__dataclass_fields__})  # type: ignore[arg-type]


@pytest.mark.parametrize("index", range(len(_refusals(Path("/nonexistent")))),
                         ids=[name for name, _, _ in _refusals(Path("/nonexistent"))])
def test_a_new_verb_refuses_a_wrong_argument_before_it_writes(index: int, tmp_path: Path) -> None:
    name, call, message = _refusals(tmp_path)[index]
    with pytest.raises(BadInput, match=message):
        call()
    assert list(tmp_path.iterdir()) == []  # refused before anything was written


def test_the_api_lists_every_verb_it_offers() -> None:
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        api.nothing  # noqa: B018


def test_open_validate_and_failed_checks(tmp_path: Path) -> None:
    corpus = api.open_corpus(SMALL)
    assert api.open_corpus(corpus) is corpus
    results = api.validate(corpus, surface_cosine=False)
    assert results[-1].name == "surface_cosine" and results[-1].status == "n/a"
    assert api.failed_checks(results) == []
    assert [r.name for r in api.validate(SMALL)] == [r.name for r in results[:-1]]  # None: left out


def test_exports_then_an_import_of_the_transcripts(tmp_path: Path) -> None:
    counts = api.export_beir(SMALL, tmp_path / "beir", max_words=100)
    assert counts.meetings > 0 and (tmp_path / "beir" / "corpus.jsonl").is_file()
    written = api.export_transcripts(SMALL, tmp_path / "vtt", "webvtt")
    assert written.meetings == counts.meetings
    manifest = api.import_transcripts(tmp_path / "vtt" / "meetings", tmp_path / "imported")
    assert manifest["counts"]["meetings"] == counts.meetings
    with pytest.raises(BadInput, match="export directory"):
        api.export_transcripts(SMALL, tmp_path / "vtt", "json")  # not empty: refused, left as it was


def test_the_stack_lifecycle_with_no_stack_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))
    for name in ("TURNBENCH_OPENSEARCH_URL", "TURNBENCH_POSTGRES_DSN"):
        monkeypatch.delenv(name, raising=False)
    assert api.stack_state_path() == tmp_path / "state" / "stack.json"
    with pytest.raises(StackStateError, match="no stack is recorded"):
        api.stack_status()
    assert api.stack_down() is None
    with pytest.raises(StackStateError, match="no stack is recorded"), api.recorded_stack(writes=False):
        pass
    with pytest.raises(StackStateError, match="no stack is recorded"):
        api.load(None, SMALL, api.LoadSpec(max_words=100))
    assert api.image_reference("postgres:15", "--postgres-image") == "postgres:15"


def test_a_python_engine_arm_is_refused_by_write_run_before_the_stack(tmp_path: Path) -> None:
    with pytest.raises(UnknownArm, match="no retrieval arm named 'no-such-arm'"):
        api.arms(["no-such-arm"])
    arm = next(a for a in api.arms([n for n in _builtin_names()]) if a.engine != "opensearch")
    with pytest.raises(BadInput, match="not on OpenSearch"):
        api.write_run(tmp_path / "run", SMALL, arm)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("x")
    with pytest.raises(BadInput, match="run directory"):
        api.write_run(tmp_path / "taken", SMALL, api.arms(["bm25"])[0])


def _builtin_names() -> list[str]:
    from turnbench.engines.arms import builtin_names

    return builtin_names()


def test_answer_with_the_none_answerer_needs_no_stack(tmp_path: Path) -> None:
    answered = api.answer(SMALL, tmp_path / "a", answerer="none")
    assert answered.answerer == "none" and answered.corpus_id == api.open_corpus(SMALL).id
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["answers.json", "answers.jsonl", "answers.md",
                                                                   "claim.sha256"]
    labels = [label for label, _ in answered.grammar_rows()]
    assert labels == ["in grammar", "OUT of grammar", "all"]
    assert all(row.declined == row.questions for _, row in answered.grammar_rows())
    # the submitted answers scored again, as another engine's: the same rows
    again = api.answer(SMALL, tmp_path / "b", answers=tmp_path / "a" / "answers.jsonl")
    assert again.answerer == "external"
    assert [r for _, r in again.grammar_rows()] == [r for _, r in answered.grammar_rows()]


def test_fuse_two_baseline_runs(tmp_path: Path) -> None:
    names = api.fuse([BM25 / "run.raw.trec", TITLE / "run.raw.trec"], tmp_path / "f", method="rrf", depth=10,
                     passages=BM25 / "passages.jsonl")
    assert sorted(names) == sorted(p.name for p in (tmp_path / "f").iterdir())
    assert "rrf" in (tmp_path / "f" / "fuse.json").read_text()


def test_answers_overall_of_a_run_with_and_without_answers() -> None:
    results = api.Results.read(BM25)
    overall = api.answers_overall(results)
    block = results.document.get("answers")
    assert (overall is None) == (block is None)
    if overall is not None:
        mine = next(r for r in block["rows"] if r["rule"] == r["surface"] == r["grammar"] == "all")
        assert (overall.questions, overall.declined, overall.em) == (mine["questions"], mine["declined"], mine["em"])


def test_plan_then_check_it_against_a_corpus(tmp_path: Path) -> None:
    planned = api.plan(BM25, delta=0.05)
    ok, line = api.check_plan(planned, one_meeting_corpus(tmp_path / "tiny"))
    assert not ok and line


def test_decide_a_rule_on_a_comparison(tmp_path: Path) -> None:
    compared = api.compare(BM25, TITLE, resamples=100)
    rule = tmp_path / "rule.txt"
    rule.write_text("nDCG@10 up on lookup by 0.5\nundetermined fails\n")
    decided = api.decide(compared, rule)
    assert not decided.passes and decided.to_json()["file"] == str(rule)
    assert "rule" in decided.to_markdown().lower()
    rule.write_text("nDCG@10 sideways on lookup\n")
    with pytest.raises(BadInput):
        api.decide(compared, rule)


def test_the_files_are_written_atomically_and_canonically(tmp_path: Path) -> None:
    api.write_text(tmp_path / "a.md", "é\n")
    api.write_bytes(tmp_path / "b.bin", b"\x00")
    api.write_json(tmp_path / "c.json", {"b": 1, "a": [2]})
    assert (tmp_path / "a.md").read_bytes() == "é\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00"
    assert json.loads((tmp_path / "c.json").read_text()) == {"a": [2], "b": 1}
    assert api.json_text({"b": 1, "a": 2}) == '{"a":2,"b":1}'
    assert api.json_text({"a": 1}, pretty=True).endswith("\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "b.bin", "c.json"]  # no temporary left
