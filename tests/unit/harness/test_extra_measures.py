"""The extra measures (``--measure``: R@1, P@5, P@10, MAP@100, Success@1/5/10, at passage and meeting level):
hand-derived values, the block they go to, ir_measures reproducing them from the exported files, and every default
byte left as it was."""

from __future__ import annotations

import json
import math

import pytest

from tests.unit.harness.helpers import score, small_run, small_world, turn_passages, write_corpus
from turnbench import canonical
from turnbench.corpus import open_corpus
from turnbench.errors import BadInput
from turnbench.harness import metrics as M
from turnbench.results.directory import write_results

ALL_EXTRA = [str(m) for m in M.EXTRA_MEASURES]
R1, P5, P10, MAP100, S1, S5, S10 = (M.Measure.parse(n) for n in M.EXTRA_NAMES)


def ranked(*ids):
    """A tie-free run: strictly decreasing scores in list order."""
    return {d: float(len(ids) - i) for i, d in enumerate(ids)}


def test_hand_derived_values_of_every_extra_measure():
    # q: relevant a (grade 2), b, c, z (grade 1: every grade >= 1 counts, as for R@k and MRR); z is never retrieved.
    #    run x a y b u v c (7 deep).
    #    R@1     = relevant in the top 1 / relevant = 0/4                      = 0
    #    P@5     = relevant in x a y b u / 5 = 2/5                             = 0.4
    #    P@10    = relevant in the top 10 / 10 = 3/10 (the run is 7 deep: the missing ranks are misses, still /10)
    #    MAP@100 = (1/2 [a at 2] + 2/4 [b at 4] + 3/7 [c at 7]) / 4 relevant   = 1.4285714 / 4 = 0.3571429
    #    Success@1 = 0 (x is not relevant); Success@5 = Success@10 = 1 (a at 2)
    # q2: relevant d, run d alone: R@1 1, P@5 1/5, P@10 1/10, MAP@100 1, Success@k 1
    # q3: judged, not answered: every measure 0 (trec_eval -c)
    qrels = {"q": {"a": 2, "b": 1, "c": 1, "z": 1}, "q2": {"d": 1}, "q3": {"e": 1}}
    run = {"q": ranked(*"xaybuvc"), "q2": ranked("d")}
    v = M.evaluate(qrels, run, M.EXTRA_MEASURES[:7])
    assert v["q"] == {R1: 0.0, P5: 0.4, P10: 0.3, MAP100: pytest.approx((1 / 2 + 2 / 4 + 3 / 7) / 4, abs=1e-12),
                      S1: 0.0, S5: 1.0, S10: 1.0}
    assert round(v["q"][MAP100], 6) == 0.357143
    assert v["q2"] == {R1: 1.0, P5: 0.2, P10: 0.1, MAP100: 1.0, S1: 1.0, S5: 1.0, S10: 1.0}
    assert v["q3"] == dict.fromkeys(M.EXTRA_MEASURES[:7], 0.0)


def test_map_at_100_reads_no_deeper_than_100():
    # relevant a at rank 1 and b at rank 101: MAP@100 = (1/1) / 2 = 0.5; AP over the whole run would add 2/101
    qrels = {"q": {"a": 1, "b": 1}}
    run = {"q": ranked("a", *(f"n{i}" for i in range(99)), "b")}
    assert M.evaluate(qrels, run, [MAP100])["q"][MAP100] == 0.5
    # and cut where the measures stop reading (depth_read), the run scores the same
    assert M.depth_read([MAP100, P5], list(run["q"]), qrels["q"]) == 100


def test_names_are_refused_in_one_line_listing_the_valid_ones_and_asked_once_in_one_order():
    assert [str(m) for m in M.selected(["meeting:P@5", "R@1", "P@5", "R@1"])] == ["R@1", "P@5", "meeting:P@5"]
    assert M.selected("P@10") == (P10,)  # one name as a string, not its characters
    assert M.selected([]) == ()
    for bad, why in (("P@3", "unknown"), ("AP@100", "unknown"), ("success@1", "unknown"), ("nDCG@10", "always"),
                     ("meeting:R@10", "always"), ("", "unknown")):
        with pytest.raises(BadInput, match=why) as e:
            M.selected(["P@5", bad])
        assert "\n" not in str(e.value) and "R@1, P@5, P@10, MAP@100, Success@1, Success@5, Success@10" in str(e.value)
        assert len(f"turnbench: BadInput: {e.value}") <= 300  # the CLI's line is cut at 300 characters


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """small_world scored with every extra measure, and without."""
    root = tmp_path_factory.mktemp("w")
    meetings, queries = small_world()
    corpus = open_corpus(write_corpus(root / "c", meetings, queries))
    passages = turn_passages(meetings)
    return (score(corpus, passages, small_run(), measures=ALL_EXTRA).document,
            score(corpus, passages, small_run()).document)


def test_the_extra_block_of_a_worked_example(small):
    doc, plain = small
    block = doc["extra"]
    assert block["measures"] == ALL_EXTRA and block["group_by"] == ["corpus", "class"]
    values = {r["query_id"]: r["values"] for r in block["per_query"]}
    # the same judged queries as the retrieval block, the same heads (class, level, answered), in the same order
    assert [r["query_id"] for r in block["per_query"]] == [r["query_id"] for r in doc["retrieval"]["per_query"]]
    # passage level (turn-level q1, q2; qrels as judged: q1's gold m1:00001, q2's m1:00002 and m2:00000)
    # q1 ranks m1:00001, m1:00000: R@1 1/1, P@5 1/5, P@10 1/10, MAP@100 1, Success 1
    # q2 ranks m1:00000, m1:00002, m2:00000 (rule 5 broke the tie by meeting, then index): R@1 0/2, P@5 2/5,
    #    P@10 2/10, MAP@100 (1/2 + 2/3) / 2 = 0.583333, Success@1 0, Success@5 1
    # meeting level: q1 [m1] gold {m1}; q2 [m1, m2] gold {m1, m2}; q3 [m3] gold {m2, m3}
    #    q1: R@1 1, P@5 0.2, P@10 0.1, MAP 1, Success 1; q2: R@1 1/2, P@5 0.4, P@10 0.2, MAP (1 + 1) / 2 = 1, Success 1
    #    q3: R@1 1/2, P@5 0.2, P@10 0.1, MAP (1/1) / 2 = 0.5, Success 1
    p = {"R@1": (1.0, 0.0), "P@5": (0.2, 0.4), "P@10": (0.1, 0.2), "MAP@100": (1.0, 0.583333),
         "Success@1": (1.0, 0.0), "Success@5": (1.0, 1.0), "Success@10": (1.0, 1.0)}
    m = {"R@1": (1.0, 0.5, 0.5), "P@5": (0.2, 0.4, 0.2), "P@10": (0.1, 0.2, 0.1), "MAP@100": (1.0, 1.0, 0.5),
         "Success@1": (1.0, 1.0, 1.0), "Success@5": (1.0, 1.0, 1.0), "Success@10": (1.0, 1.0, 1.0)}
    for name, (q1, q2) in p.items():
        assert (values["q1"][name], values["q2"][name]) == (q1, q2), name
        assert name not in values["q3"]  # a meeting-level summary has no passage values, as in the retrieval block
    for name, vals in m.items():
        assert tuple(values[q][f"meeting:{name}"] for q in ("q1", "q2", "q3")) == vals, name
    rows = {r["class"]: r for r in block["rows"]}
    # the all row: passage columns over the two passage-level queries, meeting columns over all three
    assert rows["all"]["means"]["MAP@100"] == round((1.0 + 0.583333) / 2, 6) == 0.791667
    assert rows["all"]["means"]["meeting:P@5"] == round((0.2 + 0.4 + 0.2) / 3, 6) == 0.266667
    assert rows["summarize"]["means"]["P@5"] is None and rows["lookup"]["dropped_unjudgeable"] == 1
    # nothing else in the document moved: without the block it is the document scored without measures
    assert canonical.dumps({k: v for k, v in doc.items() if k != "extra"}) == canonical.dumps(plain)
    assert "extra" not in plain


@pytest.fixture(scope="module")
def fixture_dirs(tmp_path_factory):
    """fixtures/small in windows of 40 words, ranked 40 deep by a fixed shuffle, written with every extra measure
    and without any (the run as test_spans scores it)."""
    from tests.unit.harness.test_spans import shuffled_fixture_run

    corpus, passages, run = shuffled_fixture_run()
    root = tmp_path_factory.mktemp("r")
    return (write_results(root / "measured", score(corpus, passages, run, measures=list(reversed(ALL_EXTRA)))),
            write_results(root / "plain", score(corpus, passages, run)))


@pytest.mark.parametrize("provider", ["pytrec_eval"])
def test_ir_measures_reproduces_every_extra_measure_from_the_exported_files(fixture_dirs, provider):
    """Every per-query value of the extra block, and every row mean, computed by ir_measures (through pytrec_eval,
    and through ranx's own implementation) from qrels.*.txt and run.*.trec alone, to 1e-6."""
    import ir_measures

    directory = fixture_dirs[0]
    doc = json.loads((directory / "metrics.json").read_text())
    tools = json.loads((directory / "trec.json").read_text())["extra_measures"]
    assert sorted(tools) == sorted(ALL_EXTRA)
    calc = getattr(ir_measures, provider)
    again: dict[str, dict[str, float]] = {}
    for level, qrels_file, run_file in (("passage", "qrels.passages.txt", "run.passages.trec"),
                                        ("meeting", "qrels.meetings.txt", "run.meetings.trec")):
        names = {ir_measures.parse_measure(spec["ir_measures"]): m for m, spec in tools.items()
                 if spec["level"] == level}
        assert len(names) == 7
        qrels = list(ir_measures.read_trec_qrels(str(directory / qrels_file)))
        run = list(ir_measures.read_trec_run(str(directory / run_file)))
        for qid in {q.query_id for q in qrels}:
            again.setdefault(qid, {}).update(dict.fromkeys(names.values(), 0.0))  # trec_eval -c
        for metric in calc.iter_calc(list(names), qrels, run):
            again[metric.query_id][names[metric.measure]] = metric.value
    said = {r["query_id"]: r for r in doc["extra"]["per_query"]}
    assert set(again) == set(said)
    checked = 0
    for qid, values in again.items():
        assert set(values) == set(said[qid]["values"]), qid
        for m, v in values.items():
            assert abs(said[qid]["values"][m] - v) <= 1e-6, (qid, m, said[qid]["values"][m], v)
            checked += 1
    assert checked > 100 and any(v > 0 for r in said.values() for v in r["values"].values())
    for row in doc["extra"]["rows"]:
        group = sorted(q for q in said if row["class"] in ("all", said[q]["class"]))
        for m, mean in row["means"].items():
            vals = [round(again[q][m], 6) for q in group if m in again[q]]
            assert (round(math.fsum(vals) / len(vals), 6) if vals else None) == mean, (row["class"], m)


def test_with_measures_only_the_extra_block_its_table_and_its_names_are_added(fixture_dirs):
    measured, plain = fixture_dirs
    names = sorted(p.name for p in plain.iterdir())
    assert names == sorted(p.name for p in measured.iterdir())
    changed = [n for n in names if (plain / n).read_bytes() != (measured / n).read_bytes()]
    # runinfo.json holds timings (outside the claim)
    assert sorted(set(changed) - {"runinfo.json"}) == ["claim.sha256", "metrics.json", "metrics.md", "trec.json"]
    doc, base = (json.loads((d / "metrics.json").read_text()) for d in (measured, plain))
    assert "extra" not in base and doc.pop("extra")["measures"] == ALL_EXTRA  # asked in reverse, written in order
    # the claimed files' digests: trec.json's differs (it names the extra measures), every other file's is the same
    files, base_files = doc["provenance"].pop("files"), base["provenance"].pop("files")
    assert files.pop("trec.json") != base_files.pop("trec.json") and files == base_files
    assert doc == base
    side, base_side = (json.loads((d / "trec.json").read_text()) for d in (measured, plain))
    assert "extra_measures" not in base_side and side.pop("extra_measures") and side == base_side
    # metrics.md: the default text, with one section added after the strict table
    md, base_md = ((d / "metrics.md").read_text() for d in (measured, plain))
    start = md.index("\n## Extra measures (asked for with --measure; report-only)\n")
    end = md.index("\n## ", start + 1)
    assert md[:start] + md[end:] == base_md
    assert "| corpus | class | n | unanswered | dropped | R@1 | P@5 | P@10 | MAP@100 | Success@1 |" in md[start:end]
    assert "mtg Success@10 |" in md[start:end]


def test_a_measure_deeper_than_the_run_is_computed_as_trec_eval_computes_it(tmp_path):
    """A run one passage deep, asked for P@10 and MAP@100: the missing ranks are misses (P@10 divides by 10), and
    nothing is refused; the run's depth stays recorded beside the values."""
    meetings, queries = small_world()
    corpus = open_corpus(write_corpus(tmp_path / "c", meetings, queries))
    doc = score(corpus, turn_passages(meetings), small_run()[:1], measures=["P@10", "MAP@100"]).document
    q1 = next(r for r in doc["extra"]["per_query"] if r["query_id"] == "q1")
    assert q1["values"] == {"P@10": 0.1, "MAP@100": 1.0}  # its one relevant passage, at rank 1
    assert doc["provenance"]["inputs"]["run"]["max_depth"] == 1
    # a judged query the run does not answer scores 0 and counts (trec_eval -c), as in the retrieval block
    q2 = next(r for r in doc["extra"]["per_query"] if r["query_id"] == "q2")
    assert q2["values"] == {"P@10": 0.0, "MAP@100": 0.0} and not q2["answered"]


# ranx's kernels cast their counts (numba says so, once per compile): nothing turnbench hands it
@pytest.mark.filterwarnings("ignore:unsafe cast from uint64 to int64")
def test_ranx_reproduces_every_extra_measure_from_the_exported_files(fixture_dirs):
    """Another implementation (ranx's, not trec_eval's): recall@1, precision@5/10, map@100, hit_rate@1/5/10 of the
    exported files, each query's, to 1e-6 (ir_measures' ranx provider does not run beside this pandas)."""
    from ranx import Qrels, Run, evaluate

    directory = fixture_dirs[0]
    said = {r["query_id"]: r["values"] for r in json.loads((directory / "metrics.json").read_text())["extra"]
            ["per_query"]}
    ranx_names = {"R@1": "recall@1", "P@5": "precision@5", "P@10": "precision@10", "MAP@100": "map@100",
                  "Success@1": "hit_rate@1", "Success@5": "hit_rate@5", "Success@10": "hit_rate@10"}
    checked = 0
    for prefix, level in (("", "passages"), ("meeting:", "meetings")):
        qrels = Qrels.from_file(str(directory / f"qrels.{level}.txt"), kind="trec")
        run = Run.from_file(str(directory / f"run.{level}.trec"), kind="trec")
        evaluate(qrels, run, list(ranx_names.values()), make_comparable=True)  # a judged query not run scores 0
        for ours, theirs in ranx_names.items():
            got = run.scores[theirs]
            assert set(got) == {q for q, v in said.items() if prefix + ours in v}, ours
            for qid, v in got.items():
                assert abs(said[qid][prefix + ours] - float(v)) <= 1e-6, (qid, prefix + ours, v)
                checked += 1
    assert checked > 100


def test_compare_measure_adds_report_only_rows_and_leaves_the_gated_ones_alone(fixture_dirs, tmp_path):
    import shutil

    from turnbench import api
    from turnbench.harness.verdicts import REPORT_ONLY

    measured = fixture_dirs[0]
    copy = shutil.copytree(measured, tmp_path / "copy")
    plain = api.compare(measured, copy, resamples=200)
    asked = api.compare(measured, copy, resamples=200, measures=["meeting:MAP@100", "P@5", "P@5"])
    extra = [r for r in asked.rows() if r.block == "extra"]
    assert "extra" in REPORT_ONLY and not [r for r in plain.rows() if r.block == "extra"]
    assert [r.measure for r in extra if dict(r.groups)["class"] == "all"] == ["P@5", "meeting:MAP@100"]
    assert all(r.delta == 0.0 for r in extra)
    # the gated rows, their Holm family and the gate are what they are without --measure
    assert [r for r in asked.rows() if r.block != "extra"] == list(plain.rows())
    assert asked.to_json()["facts"]["verdicts"]["family"] == plain.to_json()["facts"]["verdicts"]["family"]
    assert "extra (report-only: never gated)" in asked.to_markdown()
    with pytest.raises(BadInput, match=r"^--measure P@5: the baseline \(hand on .*\) did not record it"):
        api.compare(fixture_dirs[1], copy, resamples=200, measures=["P@5"])
