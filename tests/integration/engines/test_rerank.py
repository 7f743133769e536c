"""A rerank stage on the real stack: bm25's top passages rescored by an encoder turnbench has (MiniLM cosine) or by an
ONNX cross-encoder built here, and the run scored in the order the stage returned — never re-sorted by the first
stage's scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.corpus.format import open_corpus
from turnbench.engines.arms import builtin, parse_arm
from turnbench.harness.exports import parse_run
from turnbench.harness.judgements import RelevancePolicy
from turnbench.harness.score import EngineSide, score_run
from turnbench.pipeline import bench as pipeline
from turnbench.rankings import normalised_order
from turnbench.results.directory import read_metrics

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "fixtures" / "small"
INDEX = "turnbench-rerank-test"
TOP = 10


def _arm(tmp_path: Path, rerank: str, name: str = "bm25-rerank") -> Path:
    body = builtin("bm25").body
    path = tmp_path / f"{name}.toml"
    path.write_text(f"name = \"{name}\"\ndepth = 100\nbody = '''{body}'''\n[rerank]\n{rerank}")
    return path


def _options(stack):
    return pipeline.BenchOptions(provider="external", index=INDEX, answerer="skip", stack_options={
        "opensearch_url": stack.opensearch_url, "postgres_dsn": stack.postgres_dsn})


def _trace(out: Path) -> dict[str, list[list]]:
    return {d["query"]: d["passages"] for d in map(json.loads, (out / "rerank.jsonl").read_text().splitlines())}


def test_a_rerank_arm_is_scored_in_the_stages_order_not_re_sorted_by_first_stage_scores(stack, tmp_path):
    from turnbench.engines import encoders
    from turnbench.engines.embeddings import embed

    arm = parse_arm(_arm(tmp_path, f'scorer = "minilm-l6-v2-int8"\ntop = {TOP}\n').read_bytes(),
                    str(tmp_path / "bm25-rerank.toml"), builtin=False)
    first, second = pipeline.bench(SMALL, ["bm25", arm], tmp_path / "out", _options(stack))
    trace = _trace(second.out_dir)
    scored = parse_run((second.out_dir / "run.passages.trec").read_bytes(), "run.passages.trec")
    bm25 = parse_run((first.out_dir / "run.passages.trec").read_bytes(), "run.passages.trec")
    moved = 0
    for qid, rows in trace.items():
        order = [pid for pid, _ in sorted(scored[qid], key=lambda x: -x[1])]
        assert order == [r[0] for r in rows]  # what is scored is the stage's output, in its order
        by_first = [pid for pid, _ in sorted(bm25[qid], key=lambda x: -x[1])]
        assert sorted(order[:TOP]) == sorted(by_first[:TOP]) and order[TOP:] == by_first[TOP:]
        assert [r[1] for r in rows[TOP:]] == list(range(TOP + 1, len(rows) + 1))  # the tail keeps its ranks
        assert all(r[3] is None for r in rows[TOP:]) and all(r[3] is not None for r in rows[:TOP])
        stage = [r[3] for r in rows[:TOP]]
        assert stage == sorted(stage, reverse=True)
        moved += order[:TOP] != by_first[:TOP]
    assert moved > len(trace) // 2  # the stage changed most queries' order: a re-sort by bm25 would undo it

    # the stage's scores are the cosine of the rounded vectors, recomputed here from the cache for one question
    corpus = open_corpus(SMALL)
    qid = sorted(trace)[0]
    question = next(q for q in corpus.queries() if q.id == qid)
    enc = encoders.get("minilm-l6-v2-int8")
    q = embed(enc, [(qid, question.text)], role="query").micro[0].astype("int64")
    from turnbench.engines.texts import passages_with_texts

    index = read_metrics(second.out_dir).tree["provenance"]["index"]
    texts = {p.id: p.text for p in passages_with_texts(corpus, index)}
    top = trace[qid][:TOP]
    found = embed(enc, [(r[0], texts[r[0]]) for r in top], role="passage")
    assert [r[3] for r in top] == [int(found.micro[found.index[r[0]]].astype("int64") @ q) / 1e12 for r in top]

    # the metrics are those of the stage's order, and differ from those of bm25's order over the same passages
    doc, plain = read_metrics(second.out_dir).tree, read_metrics(first.out_dir).tree
    assert doc["retrieval"]["per_query"] != plain["retrieval"]["per_query"]
    prov = doc["provenance"]["arm"]["rerank"]
    assert prov["scorer"] == "minilm-l6-v2-int8" and prov["top"] == TOP and prov["trace"] == "rerank.jsonl"
    assert prov["encoder"]["id"] == "minilm-l6-v2-int8" and prov["repeat_check"]["queries"] == 10
    info = json.loads((second.out_dir / "runinfo.json").read_text())
    stages = info["stages"]
    assert stages["rerank"]["queries_timed"] == len(trace)
    assert stages["rerank"]["pairs"] == sum(min(TOP, len(rows)) for rows in trace.values())
    # the first stage's time is the server's `took`, whole milliseconds: a quick query on a small corpus takes 0;
    # the rerank stage is timed here, and no query's two stages together take less than its first alone
    assert stages["first"]["latency_ms"]["p50"] >= 0 and stages["rerank"]["latency_ms"]["p50"] > 0
    assert stages["both"]["latency_ms"]["p50"] >= stages["first"]["latency_ms"]["p50"]

    # a second bench is the same bytes, trace included
    again = pipeline.bench(SMALL, [arm], tmp_path / "again", _options(stack))[0]
    for f in ("metrics.json", "metrics.md", "rerank.jsonl", "run.raw.trec"):
        assert (again.out_dir / f).read_bytes() == (second.out_dir / f).read_bytes(), f


def _cross_encoder(path: Path) -> None:
    """A real ONNX cross-encoder graph, of the inputs and output a cross-encoder has, whose score is worked out by
    hand: the share of the pair's tokens that belong to the passage, sum(token_type_ids) / sum(attention_mask)."""
    import onnx
    from onnx import TensorProto, helper

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    nodes = [
        helper.make_node("Cast", ["token_type_ids"], ["types"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["types"], ["passage"], axes=[1], keepdims=1),
        helper.make_node("ReduceSum", ["mask"], ["all"], axes=[1], keepdims=1),
        helper.make_node("Div", ["passage", "all"], ["logits"]),
    ]
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    model = helper.make_model(helper.make_graph(nodes, "share", inputs, [out]),
                              opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 7
    onnx.save(model, str(path))


def test_an_onnx_cross_encoder_at_a_users_path_is_pinned_and_scores_each_pair(stack, tmp_path):
    import shutil

    from tokenizers import Tokenizer

    from turnbench.engines.encoders import minilm

    _cross_encoder(tmp_path / "share.onnx")
    shutil.copy(minilm.snapshot_file(minilm.TOKENIZER), tmp_path / "tokenizer.json")
    path = _arm(tmp_path, 'scorer = "cross-encoder"\ntop = 5\nmodel = "share.onnx"\ntokenizer = "tokenizer.json"\n',
                "bm25-cross")
    arm = parse_arm(path.read_bytes(), str(path), builtin=False)
    (out,) = pipeline.bench(SMALL, [arm], tmp_path / "out", _options(stack))
    prov = read_metrics(out.out_dir).tree["provenance"]["arm"]["rerank"]
    import hashlib

    assert prov["model"] == {"file": "share.onnx", "sha256": hashlib.sha256((tmp_path / "share.onnx").read_bytes())
                             .hexdigest()}
    assert prov["tokenizer"]["file"] == "tokenizer.json" and str(tmp_path) not in json.dumps(prov)
    # by hand: the pair is [CLS] question [SEP] passage [SEP]; the passage's tokens and the last [SEP] have type 1
    corpus = open_corpus(SMALL)
    from turnbench.engines.texts import passages_with_texts

    texts = {p.id: p.text for p in passages_with_texts(corpus, read_metrics(out.out_dir).tree["provenance"]["index"])}
    tok = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    tok.no_padding()  # as shipped it pads to 128; the stage runs each pair unpadded
    tok.no_truncation()  # and no passage of the fixture reaches the stage's 512 tokens
    trace = _trace(out.out_dir)
    for qid in sorted(trace)[:5]:
        question = next(q for q in corpus.queries() if q.id == qid).text
        for pid, _rank, _raw, stage in trace[qid][:5]:
            q_tokens, p_tokens = len(tok.encode(question).ids) - 2, len(tok.encode(texts[pid]).ids) - 2
            assert stage == round((p_tokens + 1) / (q_tokens + p_tokens + 3), 6), (qid, pid)


def test_a_cross_encoder_that_is_absent_or_not_a_model_is_refused_in_one_line_before_any_query(stack, tmp_path,
                                                                                                monkeypatch):
    from turnbench.engines.encoders import minilm

    monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", stack.opensearch_url)
    monkeypatch.setenv("TURNBENCH_POSTGRES_DSN", stack.postgres_dsn)
    path = _arm(tmp_path, 'scorer = "cross-encoder"\ntop = 5\nmodel = "ce.onnx"\ntokenizer = "tokenizer.json"\n')
    (tmp_path / "tokenizer.json").write_bytes(minilm.snapshot_file(minilm.TOKENIZER).read_bytes())
    for model, said in ((None, "[rerank] model 'ce.onnx': no such file"),
                        (b"\x08\x07 not a graph", "[rerank] model ce.onnx is not an ONNX model onnxruntime can load")):
        if model is not None:
            (tmp_path / "ce.onnx").write_bytes(model)
        r = CliRunner().invoke(main, ["bench", "--corpus", str(SMALL), "--arm-file", str(path), "--provider",
                                      "external", "--index", "turnbench-never-made", "--out", str(tmp_path / "o")])
        assert r.exit_code == 2, r.output
        (line,) = r.output.strip().splitlines()
        assert line.startswith("turnbench: BadInput: ") and said in line
    from turnbench.stack.clients import opensearch_client

    assert not opensearch_client(stack).indices.exists(index="turnbench-never-made")


def test_an_engine_declares_a_stage_too(stack, tmp_path):
    from turnbench.engines.examples.bm25 import Bm25Engine

    class Reranked(Bm25Engine):
        name = "bm25-python-rerank"
        rerank = {"scorer": "minilm-l6-v2-int8", "top": TOP}

    (plain, out) = pipeline.bench(SMALL, [], tmp_path / "out", _options(stack),
                                  engines=["turnbench.engines.examples.bm25:engine", Reranked()])
    trace = _trace(out.out_dir)
    doc = read_metrics(out.out_dir).tree
    assert doc["provenance"]["arm"]["rerank"]["scorer"] == "minilm-l6-v2-int8"
    corpus = open_corpus(SMALL)
    passages = {p.id: p for p in corpus_passages(corpus, doc)}
    first = parse_run((plain.out_dir / "run.raw.trec").read_bytes(), "raw")
    for qid, rows in trace.items():
        assert sorted(r[0] for r in rows[:TOP]) == sorted(normalised_order(
            [_entry(qid, pid, s) for pid, s in first[qid]], passages)[qid][:TOP])
    # scoring the stage's output again gives the results' own numbers: nothing re-sorts it on the way
    entries = [_entry(qid, r[0], float(len(rows) - i)) for qid, rows in trace.items() for i, r in enumerate(rows)]
    again = score_run(corpus, passages.values(), entries, policy=RelevancePolicy(),
                      engine=EngineSide("x", "x", "x"))
    assert again.document["retrieval"]["per_query"] == doc["retrieval"]["per_query"]


def corpus_passages(corpus, doc):
    from turnbench.engines.texts import passages_with_texts

    return passages_with_texts(corpus, doc["provenance"]["index"])


def _entry(qid, pid, score):
    from turnbench.rankings import RankedPassage

    return RankedPassage(qid, pid, 0, score)
