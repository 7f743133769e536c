"""The QMSum adapter on hand-written meetings in QMSum's format (tests/fixtures/qmsum; no QMSum data)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.unit.corpus.helpers import QMSUM_FIXTURE, fixture_release, fixture_release_of, tree_bytes
from turnbench import canonical
from turnbench.cli import main
from turnbench.corpus import open_corpus, qmsum
from turnbench.errors import BadInput

ALL = QMSUM_FIXTURE / "ALL"
JSONL = QMSUM_FIXTURE / "jsonl" / "val.jsonl"


@pytest.fixture()
def corpus(tmp_path: Path):
    out = tmp_path / "qm"
    qmsum.import_qmsum([ALL, JSONL], out, release=fixture_release_of(tmp_path, "qmsum"))
    return open_corpus(out)


def _queries(corpus) -> dict:
    return {q.id: q for q in corpus.queries()}


def test_counts_refusals_and_dedupe_in_the_manifest(corpus):
    c = corpus.manifest["counts"]
    assert c["meetings"] == 5
    assert c["meetings_by_domain"] == {"academic": 1, "committee": 1, "product": 2, "unknown": 1}
    assert c["meetings_by_split"] == {"test": 1, "train": 2, "val": 2}
    assert c["meetings_unknown_domain"] == 1
    assert c["queries"] == 15
    assert c["queries_by_class"] == {"lookup": 6, "summarize": 9}
    assert c["queries_refused"] == {"empty_text": 0, "no_span": 1, "span_malformed": 1,
                                    "span_out_of_range": 1, "span_reversed": 1}
    assert c["queries_deduplicated"] == {"general_dropped": 1, "identical": 1, "spans_merged": 1}
    assert c["turns"] == 8 + 6 + 5 + 4 + 3
    refused = {r["query"]: r["reason"] for r in corpus.manifest["producer"]["refused_queries"]}
    assert refused == {"Bmr001-s003": "span_malformed", "Bmr001-s005": "no_span",
                       "ES2002a-s003": "span_out_of_range", "ES2002a-s005": "span_reversed"}


def test_spans_become_unioned_inclusive_ranges(corpus):
    q = _queries(corpus)
    assert q["ES2002a-s000"].gold_turns == {"ES2002a": ((1, 2),)}
    assert q["ES2002a-s001"].gold_turns == {"ES2002a": ((4, 4), (6, 7))}  # two spans kept apart
    assert q["ES2002a-s002"].gold_turns == {"ES2002a": ((3, 5),)}  # [3,4] ∪ [4,5]
    # the refused out-of-range query is not clipped into the corpus
    assert "ES2002a-s003" not in q and "ES2002a-s005" not in q


def test_classes_levels_and_answer_turns(corpus):
    q = _queries(corpus)
    assert q["ES2002a-s000"].cls == "lookup" and q["ES2002a-s000"].rule == "R1"
    assert q["ES2002a-s000"].answer_turns == {} and q["ES2002a-s000"].gold_level == "turn"
    assert q["ES2002a-s001"].cls == "summarize" and q["ES2002a-s001"].rule == "R8"  # "Summarize ..."
    assert q["covid_1-s001"].cls == "summarize"  # "Summarise ..."
    assert q["Bmr001-s001"].cls == "summarize"  # "What did the group discuss ..."
    assert q["ES2002a-s002"].cls == "lookup"  # "What did the group think of ..." asks no summary
    g = q["ES2002a-g000"]
    assert (g.cls, g.gold_level, g.surface) == ("summarize", "meeting", "qmsum-general")
    assert g.gold_turns == {"ES2002a": ((0, 7),)} and g.gold_meetings == ("ES2002a",)
    assert all(x.scored_on == "retrieval" and x.answer is None for x in q.values())


def test_duplicates_keep_one_query(corpus):
    q = _queries(corpus)
    assert "ES2002a-s004" not in q  # same text as s000 after casefolding and whitespace collapsing
    assert q["Bmr001-s000"].gold_turns == {"Bmr001": ((0, 1),)}  # [1,1] ∪ [0,1] from its repeat s002
    assert "Bmr001-s002" not in q
    # the general "Summarize the whole meeting." is dropped for its span-bearing repeat
    assert "Bmr001-g000" not in q
    assert q["Bmr001-s004"].gold_level == "turn" and q["Bmr001-s004"].gold_turns == {"Bmr001": ((0, 5),)}
    assert q["Bmr001-g001"].cls == "summarize"


def test_meetings_have_synthetic_times_from_word_counts(corpus):
    m = {x.id: x for x in corpus.iter_meetings()}["ES2002a"]
    assert m.timing == "synthetic" and m.recorded_date is None
    assert m.meta == {"domain": "product", "split": "train", "source": "train/ES2002a.json"}
    t = m.turns
    # 12 words × 0.4 s; then a 0.5 s gap; 10 words
    assert (t[0].start, t[0].end) == (0.0, 4.8)
    assert (t[1].start, t[1].end) == (5.3, 9.3)
    assert t[5].text == "" and round(t[5].end - t[5].start, 6) == 0.4  # an empty turn lasts one word
    assert m.duration == t[-1].end == 37.5
    assert [x.index for x in t] == list(range(8))
    assert m.speakers == ("Industrial Designer", "Marketing", "Project Manager", "User Interface")


def test_jsonl_meetings_get_content_ids_and_speaker_domains(corpus):
    ms = {x.id: x for x in corpus.iter_meetings()}
    jsonl_ids = sorted(i for i in ms if i.startswith("qmsum-"))
    assert len(jsonl_ids) == 2 and all(len(i) == len("qmsum-") + 12 for i in jsonl_ids)
    doms = sorted(ms[i].meta["domain"] for i in jsonl_ids)
    assert doms == ["product", "unknown"]
    assert all(ms[i].meta["split"] == "val" for i in jsonl_ids)


def test_manifest_records_sources_licence_and_producer(corpus):
    man = corpus.manifest
    assert man["licence"] == {"tier": "A", "name": "MIT"}
    p = man["producer"]
    assert p["name"] == "turnbench.qmsum" and p["version"] == qmsum.ADAPTER_VERSION
    files = [(s["file"], s["split"]) for s in p["sources"]]
    assert files == [("test/covid_1.json", "test"), ("train/Bmr001.json", "train"),
                     ("train/ES2002a.json", "train"), ("val.jsonl", "val")]
    by_file = {s["file"]: s["sha256"] for s in p["sources"]}
    assert by_file["val.jsonl"] == canonical.sha256_file(JSONL)
    assert not any(os.sep in s["file"] and s["file"].startswith("/") for s in p["sources"])
    assert p["timing"]["words_per_minute"] == 150
    assert man["corpus_id"].startswith("qmsum-")


def _import_in_subprocess(out: Path, hashseed: str) -> None:
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    release = fixture_release(out.parent / f"{out.name}-release.json", "qmsum")
    proc = subprocess.run(
        [sys.executable, "-c", "from turnbench.cli import main; main()", "import", "qmsum", str(JSONL), str(ALL),
         "--out", str(out), "--release", str(release)],
        env=env, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_output_byte_identical_across_runs_and_argument_order(tmp_path: Path):
    _import_in_subprocess(tmp_path / "a", "1")
    _import_in_subprocess(tmp_path / "b", "999")
    qmsum.import_qmsum([ALL, JSONL], tmp_path / "c", release=fixture_release_of(tmp_path, "qmsum"))  # other order
    a, b, c = tree_bytes(tmp_path / "a"), tree_bytes(tmp_path / "b"), tree_bytes(tmp_path / "c")
    assert a == b == c
    assert "manifest.json" in a and "queries.jsonl" in a


def test_split_directories_and_single_files_are_sources(tmp_path: Path):
    qmsum.import_qmsum([ALL / "train", ALL / "test" / "covid_1.json"], tmp_path / "o",
                       release=fixture_release_of(tmp_path, "qmsum"))
    c = open_corpus(tmp_path / "o")
    assert c.manifest["counts"]["meetings_by_split"] == {"test": 1, "train": 2}
    assert [s["file"] for s in c.manifest["producer"]["sources"]] == [
        "covid_1.json", "train/Bmr001.json", "train/ES2002a.json"]


def _bad(tmp_path: Path, name: str, content: str) -> Path:
    p = tmp_path / name
    p.write_text(content)
    return p


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("broken.jsonl", '{"meeting_transcripts": [\n', "broken.jsonl line 1: not valid JSON"),
        ("nokeys.jsonl", '{"meeting_transcripts": []}\n', "not a QMSum meeting"),
        ("empty.jsonl", '{"meeting_transcripts": [], "general_query_list": [], "specific_query_list": []}\n',
         "empty meeting_transcripts"),
        ("blank.jsonl", "\n\n", "holds no meetings"),
        ("speaker.jsonl", json.dumps({"meeting_transcripts": [{"speaker": " ", "content": "hi"}],
                                      "general_query_list": [], "specific_query_list": []}) + "\n",
         "empty speaker label"),
        ("notes.txt", "hello", "not a QMSum source"),
    ],
)
def test_bad_input_exit_2_and_nothing_left(tmp_path: Path, name: str, content: str, message: str):
    src = _bad(tmp_path, name, content)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["import", "qmsum", str(src), "--out", str(out), "--allow-unverified"])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no staged directory left behind


def test_same_meeting_twice_is_refused(tmp_path: Path):
    copy = tmp_path / "copy"
    shutil.copytree(ALL / "train", copy)
    with pytest.raises(BadInput, match="given twice"):
        qmsum.import_qmsum([ALL, copy], tmp_path / "out", allow_unverified=True)
    # the same transcript under another name
    (copy / "ES2002a.json").rename(copy / "ES2099a.json")
    (copy / "Bmr001.json").unlink()
    with pytest.raises(BadInput, match="same transcript"):
        qmsum.import_qmsum([ALL, copy], tmp_path / "out", allow_unverified=True)
    assert not (tmp_path / "out").exists()


def test_missing_source_and_non_empty_output(tmp_path: Path):
    result = CliRunner().invoke(main, ["import", "qmsum", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "no such file" in result.output
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    result = CliRunner().invoke(main, ["import", "qmsum", str(JSONL), "--out", str(tmp_path / "full")])
    assert result.exit_code == 2 and "not empty" in result.output


def test_measure_breaks_the_imported_corpus_down_by_domain(corpus):
    from turnbench.generator.measure import measure_corpus

    stats = measure_corpus(corpus)
    assert sorted(stats["by_domain"]) == ["academic", "committee", "product", "unknown"]
    assert stats["by_domain"]["product"]["all"]["n"] == 6
    assert stats["by_class"]["all"]["n"] == 15


def test_imported_corpus_passes_the_validator(corpus):
    from turnbench.generator.validate import failures, validate_corpus

    results = validate_corpus(corpus.root)
    assert failures(results) == []
    passed = {r.name for r in results if r.status == "pass"}
    assert {"manifest_counts", "turn_indices_dense", "times_ordered", "gold_refs_real",
            "gold_spans_cover_answers"} <= passed
    result = CliRunner().invoke(main, ["validate", str(corpus.root)])
    assert result.exit_code == 0, result.output
