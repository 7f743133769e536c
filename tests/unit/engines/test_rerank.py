"""turnbench.engines.stages and .rerank: a second stage declared as data, and scored in the order it returns.

The order tests hand the stage a first-stage run built by hand and a scorer whose scores are written out in the
test, so every expected list below is derived on paper.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from turnbench.corpus.records import Query
from turnbench.engines import rerank
from turnbench.engines.arms import builtin, parse_arm
from turnbench.engines.stages import RerankSpec, parse_rerank
from turnbench.errors import BadInput, NondeterministicRun
from turnbench.passages import Passage
from turnbench.rankings import Ranking, normalised_order

INVENTORY = {pid: Passage(pid, "m1", "ana", float(i), float(i) + 1, i, text=f"text {pid}")
             for i, pid in enumerate(["a", "b", "c", "d", "e"])}
QUERIES = [Query(id="q1", cls="lookup", rule="R1", surface="s", text="question one", scored_on="retrieval",
                 gold_meetings=("m1",)),
           Query(id="q2", cls="lookup", rule="R1", surface="s", text="question two", scored_on="retrieval",
                 gold_meetings=("m1",))]


class Written:
    """A scorer whose scores are given per passage (the same for every question), counting its calls."""

    scale = 10

    def __init__(self, units: dict[str, int], drift: int = 0) -> None:
        self.units, self.drift, self.calls = units, drift, 0

    def config(self) -> dict[str, str]:
        return {"scorer": "written in the test"}

    def score(self, query: Query, passages: list[Passage]) -> list[int]:
        self.calls += 1
        return [self.units[p.id] + self.drift * self.calls for p in passages]


def _first() -> Ranking:
    # q1: a and b tie at 5.0 (rule 5: a first, the inventory order), then c, d, e; handed over out of order
    # q2: no passage at all
    return Ranking.build([("q1", ["c", "b", "e", "a", "d"], [4.0, 5.0, 2.0, 5.0, 3.0]), ("q2", [], [])])


def test_the_top_is_reordered_by_the_stage_and_the_tail_keeps_its_first_stage_order() -> None:
    spec = RerankSpec("written", 3)
    # first-stage order a b c | d e; stage scores a 1, b 3, c 2 -> b c a; then d e as they were
    done = rerank.apply(_first(), INVENTORY, QUERIES, spec, "t.toml", stage=Written({"a": 1, "b": 3, "c": 2,
                                                                                      "d": 9, "e": 9}))
    ids, scores = done.entries.hits(0)
    assert list(ids) == ["b", "c", "a", "d", "e"] and list(scores) == [5.0, 4.0, 3.0, 2.0, 1.0]
    # d and e carry stage-scale-looking scores of 9 but were never rescored: re-sorting by any score would float
    # them; normalisation finds the list already in order and keeps it
    assert normalised_order(done.entries, INVENTORY)["q1"] == ["b", "c", "a", "d", "e"]
    assert normalised_order(_first(), INVENTORY)["q1"] == ["a", "b", "c", "d", "e"]
    # q2 had nothing to rescore: it stays unanswered (scored 0 and counted), with no stage time
    assert done.entries.query_ids == ("q1",) and set(done.latencies) == {"q1"}
    assert done.trace(INVENTORY) == (
        b'{"passages":[["b",2,5.0,0.3],["c",3,4.0,0.2],["a",1,5.0,0.1],["d",4,3.0,null],["e",5,2.0,null]],'
        b'"query":"q1"}\n')


def test_equal_stage_scores_keep_the_first_stage_order() -> None:
    done = rerank.apply(_first(), INVENTORY, QUERIES, RerankSpec("written", 5), "t.toml",
                        stage=Written({"a": 1, "b": 1, "c": 7, "d": 1, "e": 7}))
    assert list(done.entries.hits(0)[0]) == ["c", "e", "a", "b", "d"]


def test_a_stage_whose_scores_change_when_asked_again_is_refused() -> None:
    with pytest.raises(NondeterministicRun, match=r"t.toml: \[rerank\] written: query q1 scored twice"):
        rerank.apply(_first(), INVENTORY, QUERIES, RerankSpec("written", 3), "t.toml",
                     stage=Written({"a": 1, "b": 3, "c": 2, "d": 0, "e": 0}, drift=1))


ARM = '''name = "bm25-rerank"
depth = 50
body = \'\'\'{"query": {"match": {"content": {{query_text}}}}}\'\'\'
'''


def test_an_arm_declares_its_stage_and_records_it_and_an_arm_without_one_records_nothing_new(tmp_path: Path) -> None:
    arm = parse_arm((ARM + '[rerank]\nscorer = "minilm-l6-v2-int8"\ntop = 20\n').encode(), "a.toml", builtin=False)
    assert arm.rerank == RerankSpec("minilm-l6-v2-int8", 20)
    assert arm.config()["rerank"] == {"scorer": "minilm-l6-v2-int8", "top": 20}
    assert "rerank" not in builtin("bm25").config() and "rerank" not in parse_arm(ARM.encode(), "b.toml",
                                                                                    builtin=False).config()


def test_a_cross_encoder_is_pinned_by_name_and_sha256_relative_to_the_declaring_file(tmp_path: Path) -> None:
    (tmp_path / "ce.onnx").write_bytes(b"model bytes")
    (tmp_path / "tokenizer.json").write_bytes(b"{}")
    spec = parse_rerank({"scorer": "cross-encoder", "top": 5, "model": "ce.onnx", "tokenizer": "tokenizer.json"},
                        "x.toml", depth=50, base=tmp_path)
    assert spec.config() == {
        "scorer": "cross-encoder", "top": 5,
        "model": {"file": "ce.onnx", "sha256": hashlib.sha256(b"model bytes").hexdigest()},
        "tokenizer": {"file": "tokenizer.json", "sha256": hashlib.sha256(b"{}").hexdigest()}}


@pytest.mark.parametrize(("table", "said"), [
    ({"scorer": "colbert", "top": 5}, "scorer 'colbert' is not one of bge-small-en-v15-int8, minilm-l6-v2-int8, "
                                      "cross-encoder"),
    ({"scorer": "minilm-l6-v2-int8", "top": 0}, "top must be a whole number from 1 to the depth (50), not 0"),
    ({"scorer": "minilm-l6-v2-int8", "top": 51}, "from 1 to the depth (50), not 51"),
    ({"scorer": "minilm-l6-v2-int8", "top": True}, "not True"),
    ({"scorer": "minilm-l6-v2-int8", "top": 5, "k": 1}, "unknown key(s) k"),
    ({"scorer": "minilm-l6-v2-int8", "top": 5, "model": "m.onnx"}, "model belongs to a cross-encoder"),
    ({"scorer": "cross-encoder", "top": 5, "model": "m.onnx"}, "a cross-encoder needs tokenizer"),
    ({"scorer": "cross-encoder", "top": 5, "model": "absent.onnx", "tokenizer": "t.json"},
     "model 'absent.onnx': no such file"),
    ({"scorer": "cross-encoder", "top": 5, "model": ".", "tokenizer": "t.json"}, "model '.' is a directory"),
])
def test_a_bad_declaration_is_refused_in_one_line_naming_the_file(tmp_path: Path, table: dict, said: str) -> None:
    with pytest.raises(BadInput) as caught:
        parse_rerank(table, "x.toml", depth=50, base=tmp_path)
    assert str(caught.value).startswith("x.toml: [rerank] ") and said in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_arm_file_names_its_bad_stage_and_a_cross_encoder_that_onnxruntime_cannot_load_is_refused(
        tmp_path: Path) -> None:
    text = ARM + '[rerank]\nscorer = "cross-encoder"\ntop = 5\nmodel = "junk.onnx"\ntokenizer = "t.json"\n'
    with pytest.raises(BadInput, match=r"a.toml: \[rerank\] model 'junk.onnx': no such file"):
        parse_arm(text.encode(), str(tmp_path / "a.toml"), builtin=False)
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    (tmp_path / "t.json").write_text("not json")
    arm = parse_arm(text.encode(), str(tmp_path / "a.toml"), builtin=False)
    with pytest.raises(BadInput, match=r"\[rerank\] tokenizer t.json is not a tokenizer.json"):
        rerank.scorer(arm.rerank, "a.toml")
    (tmp_path / "t.json").write_text("changed after the declaration")
    with pytest.raises(BadInput, match="changed after it was declared"):
        rerank.scorer(arm.rerank, "a.toml")


def _nan_for_short_passages(path: Path) -> None:
    """An ONNX cross-encoder whose score is sqrt(passage tokens - 3): finite for the sample pair a scorer is built
    with, NaN for a passage of one word."""
    import onnx
    from onnx import TensorProto, helper

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    nodes = [helper.make_node("Cast", ["token_type_ids"], ["types"], to=TensorProto.FLOAT),
             helper.make_node("ReduceSum", ["types"], ["passage"], axes=[1], keepdims=1),
             helper.make_node("Constant", [], ["three"], value=helper.make_tensor("c", TensorProto.FLOAT, [], [3.0])),
             helper.make_node("Sub", ["passage", "three"], ["left"]),
             helper.make_node("Sqrt", ["left"], ["logits"])]
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    model = helper.make_model(helper.make_graph(nodes, "nan", inputs, [out]),
                              opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 7
    onnx.save(model, str(path))


def test_a_cross_encoder_nan_names_the_query_and_the_passage(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from turnbench.engines.encoders import minilm

    _nan_for_short_passages(tmp_path / "nan.onnx")
    (tmp_path / "t.json").write_bytes(minilm.snapshot_file(minilm.TOKENIZER).read_bytes())
    text = ARM + '[rerank]\nscorer = "cross-encoder"\ntop = 5\nmodel = "nan.onnx"\ntokenizer = "t.json"\n'
    arm = parse_arm(text.encode(), str(tmp_path / "a.toml"), builtin=False)
    scorer = rerank.scorer(arm.rerank, "a.toml")
    long = SimpleNamespace(id="m1:00000", text="a passage of several words")
    assert scorer.score(QUERIES[0], [long])[0] > 0
    with pytest.raises(BadInput) as caught:
        scorer.score(QUERIES[0], [long, SimpleNamespace(id="m1:00007", text="yes")])
    assert str(caught.value) == ("a.toml: [rerank] model nan.onnx scores query q1 and passage m1:00007 nan; a "
                                 "cross-encoder gives one finite score per pair")


@pytest.mark.parametrize("value", [1e300, -1e300, 1.7976931348623157e308, 0.1234565, 2.5e-7])
def test_a_cross_encoders_finite_score_of_any_size_is_kept_in_millionths_exactly(value: float) -> None:
    """A finite score beyond 1.8e302 has no float times 10**6: it is a whole number already, scaled exactly (it used
    to end the bench with OverflowError, exit 5); a small one is rounded as before."""
    import numpy as np

    from turnbench.engines.rerank import CrossEncoderScorer

    class Encoded:
        ids, attention_mask, type_ids = [1, 2], [1, 1], [0, 1]

    class Tokenizer:
        def encode(self, *_: str) -> Encoded:
            return Encoded()

    class Session:
        def run(self, _names: object, _feeds: object) -> list[np.ndarray]:
            return [np.array([[value]], dtype=np.float64)]

    stage = object.__new__(CrossEncoderScorer)
    stage._tokenizer, stage._session, stage._inputs = Tokenizer(), Session(), ["input_ids", "attention_mask"]
    stage.scale, stage._where, stage._name = 10 ** 6, "a.toml", "ce.onnx"
    units = stage._pair("q", "p", "query q and passage p")
    assert isinstance(units, int)
    assert units / stage.scale == (value if abs(value) > 1e302 else round(value, 6))
