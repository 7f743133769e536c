"""turnbench.engines.families.qdrant: a Qdrant arm is checked in full when its file is read, builds a shard of the
passages in Qdrant's own engine, reads back what the shard stored (a dropped setting refuses the arm), refuses a mixed
build, answers the same twice and leaves no directory behind."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from turnbench.engines.arms import builtin, parse_arm
from turnbench.engines.families import engine_ref, qdrant
from turnbench.engines.protocol import Question
from turnbench.errors import BadInput, SettingIgnored
from turnbench.passages import Passage

SPARSE = b'''name = "mine"
engine = "qdrant"
body = \'\'\'{"query": {"text": {{query_text}}}, "using": "bm25"}\'\'\'
[qdrant]
bm25 = { k = 1.2, b = 0.75, avg_len = 8.0, language = "english" }
'''
HYBRID = b'''name = "mine"
engine = "qdrant"
body = \'\'\'{"prefetch": [{"query": {"text": {{query_text}}}, "using": "bm25", "limit": {{depth}}},
                          {"query": {{query_vector}}, "using": "dense", "limit": 20, "params": {"exact": true}}],
             "query": {"rrf": {"k": 60, "weights": [2.0, 1.0]}}}\'\'\'
[qdrant]
bm25 = { language = "english" }
dense = { encoder = "minilm-l6-v2-int8" }
'''
QUESTIONS = [Question("q1", "what about the budget?"), Question("q2", "the"), Question("q3", "numbers running")]


def _passages() -> list[Passage]:
    texts = ["the budget was cut", "Running the numbers on the budget again", "nothing to see here", "the the the",
             "budget budget budget, the budget"]
    return [Passage(id=f"m1:{i:05d}", meeting="m1", speaker="Ann", start=float(i), end=i + 1.0, index=i, text=t)
            for i, t in enumerate(texts)]


@pytest.mark.parametrize("content, reason", [
    (SPARSE.replace(b"[qdrant]\n", b"[qdrant]\npath = '/tmp/x'\n"), r"\[qdrant\] has unknown key\(s\) path"),
    (SPARSE.replace(b'bm25 = { k = 1.2, b = 0.75, avg_len = 8.0, language = "english" }', b"modifier = 'idf'"),
     "declares no vector"),
    (SPARSE.replace(b"b = 0.75", b"b = 1.5"), r"bm25 b 1.5 is not allowed"),
    (SPARSE.replace(b"avg_len = 8.0", b"avg_len = 0"), r"bm25 avg_len 0 is not allowed"),
    (SPARSE.replace(b"k = 1.2", b"k = nan"), r"bm25 k nan is not allowed"),
    (SPARSE.replace(b'language = "english"', b'language = "../etc"'), r"bm25 language '../etc' is not allowed"),
    (SPARSE.replace(b"k = 1.2", b"stemmer = 'x'"), r"bm25 is a table of"),
    (SPARSE + b'modifier = "bm42"\n', r"modifier is idf or none, not 'bm42'"),
    (SPARSE + b'dense = { encoder = "bert-huge" }\n', r"unknown encoder 'bert-huge'"),
    (SPARSE + b'dense = { encoder = "minilm-l6-v2-int8", distance = "manhattan" }\n', "distance is one of"),
    (SPARSE.replace(b'"using": "bm25"', b'"using": "dense"'), r"using 'dense' names no vector \[qdrant\] declares"),
    (SPARSE.replace(b'"using": "bm25"', b'"using": "bm25", "limit": 5'), r"the request sets limit"),
    (SPARSE.replace(b'"using": "bm25"', b'"using": "bm25", "filter": {}'), r"the request sets filter"),
    (SPARSE.replace(b'"using": "bm25"', b'"using": "bm25", "lookup_from": "x"'), r"unknown key\(s\) lookup_from"),
    (SPARSE.replace(b'{"text": {{query_text}}}', b"{{query_text}}"), r'a query on bm25 is \{"text"'),
    (SPARSE.replace(b'"using": "bm25"', b'"using": "bm25", "params": {"exact": "yes"}'), "params takes exact"),
    (SPARSE.replace(b'{{query_text}}}, "using"', b'{{query_text}}, "using"'), "not valid JSON"),
    (SPARSE.replace(b"{{query_text}}", b"{{query_vectr}}"), r"unknown placeholder \{\{query_vectr\}\} for an arm "
                                                            "on qdrant"),
    (HYBRID.replace(b"[2.0, 1.0]", b"[2.0, -1.0]"), "rrf weights are numbers > 0"),
    (HYBRID.replace(b'"k": 60', b'"k": 0'), r"rrf takes k"),
    (HYBRID.replace(b'"query": {"rrf"', b'"params": {"exact": true}, "query": {"rrf"'), "give them to its prefetches"),
    (HYBRID.replace(b'"query": {"rrf": {"k": 60, "weights": [2.0, 1.0]}}', b'"query": {{query_vector}}, "using": '
                                                                         b'"dense"'), "not nested|fusion of them"),
    (HYBRID.replace(b'"limit": 20', b'"limit": 0'), "a prefetch's limit is a whole number"),
    (HYBRID.replace(b'dense = { encoder = "minilm-l6-v2-int8" }', b""), r"using 'dense' names no vector"),
    (SPARSE.replace(b'{"query": {"text": {{query_text}}}, "using": "bm25"}',
                    b'{"query": {"rrf": {"k": 60}}, "prefetch": []}'), "an rrf query fuses prefetches"),
])
def test_a_bad_qdrant_arm_is_refused_in_one_line_naming_the_file(content: bytes, reason: str) -> None:
    with pytest.raises(BadInput) as err:
        parse_arm(content, "x.toml", builtin=False)
    assert re.search(reason, str(err.value)), str(err.value)
    assert str(err.value).startswith("x.toml: ") and "\n" not in str(err.value)


def test_what_qdrant_edge_itself_refuses_is_refused_before_any_stack() -> None:
    arm = parse_arm(SPARSE.replace(b'language = "english"', b'language = "klingon"'), "x.toml", builtin=False)
    with pytest.raises(BadInput, match=r"^x\.toml: qdrant-edge refuses the arm \("):
        engine_ref(arm)


def test_the_built_ins_build_a_shard_answer_the_same_twice_and_leave_nothing_behind() -> None:
    for name in ("qdrant-bm25", "qdrant-dense", "qdrant-hybrid-rrf"):
        answers, dirs = [], []
        for _ in range(2):
            ref = engine_ref(builtin(name))
            assert ref.engine.config["versions"] == {"qdrant-edge-py": "0.9.0"}
            ref.engine.index(_passages(), None)
            dirs.append(ref.engine.store.dir)
            answers.append(json.dumps(ref.engine.search(QUESTIONS, 3)))
            ref.engine.close()
        assert answers[0] == answers[1], name
        assert not any(d.exists() for d in dirs), name
    # IDF by the shard: "the" is in every passage but one, so it weighs little; "budget" ranks the budget passages
    ref = engine_ref(builtin("qdrant-bm25"))
    ref.engine.index(_passages(), None)
    (budget, the, running) = ref.engine.search(QUESTIONS, 10)
    ref.engine.close()
    assert {pid for pid, _ in budget} == {"m1:00000", "m1:00001", "m1:00004"}
    assert the == []  # an english stop word: no term, no passage
    assert [pid for pid, _ in running] == ["m1:00001"]  # stemmed: "Running", "numbers"


def test_the_stored_configuration_is_read_back_and_a_dropped_setting_refuses_the_arm(monkeypatch) -> None:
    arm = parse_arm(HYBRID, "mine.toml", builtin=False)
    store = qdrant.open(arm)
    store.load(_passages())
    got = store.verify()
    assert got["stored"]["sparse_vectors"] == {"bm25": {"modifier": "idf"}}
    assert got["stored"]["vectors"]["dense"] == {"size": 384, "distance": "Cosine"} and got["points"] == 5
    store.close()

    # the engine storing the sparse vector without the IDF modifier the arm declares: read back, refused
    import qdrant_edge

    real = qdrant_edge.EdgeSparseVectorParams
    monkeypatch.setattr(qdrant_edge, "EdgeSparseVectorParams", lambda modifier=None, **kw: real(**kw))
    store = qdrant.open(arm)
    store.load(_passages())
    with pytest.raises(SettingIgnored) as err:
        store.verify()
    assert str(err.value) == ("arm mine (qdrant): the shard stored sparse_vectors 'bm25' with modifier None, not "
                              "'idf' as declared (a dropped setting)")
    store.close()


def test_a_shard_of_mixed_builds_is_refused() -> None:
    from qdrant_edge import Bm25, Bm25Config, Point, UpdateOperation

    arm = parse_arm(SPARSE, "mine.toml", builtin=False)
    store = qdrant.open(arm)
    store.load(_passages())
    # one point rewritten by another build (another avg_len: other weights), as a resumed or mixed ingest would
    other = Bm25(Bm25Config(avg_len=256.0, language="english"))
    store.shard.update(UpdateOperation.upsert_points([Point(
        2, {"bm25": other.embed_document("nothing to see here")}, {"passage": "m1:00002", "build": "0" * 64})]))
    with pytest.raises(SettingIgnored, match=r"1 point\(s\) of the shard carry another build"):
        store.verify()
    store.close()


def test_the_build_record_names_encoder_tokenizer_and_settings() -> None:
    record = qdrant.build_record(parse_arm(HYBRID, "mine.toml", builtin=False).settings)
    assert record["sparse"]["config"] == {"language": "english"} and record["sparse"]["modifier"] == "idf"
    assert record["dense"]["encoder"]["id"] == "minilm-l6-v2-int8"
    assert record["dense"]["dim"] == 384 and record["qdrant_edge"] == "0.9.0"
    # the defaults the arm did not declare, written out as qdrant-edge reads them back
    assert record["sparse"]["effective"] == {
        "k": 1.2, "b": 0.75, "avg_len": 256.0, "tokenizer": "Word", "language": "english", "lowercase": True,
        "ascii_folding": False, "stopwords": "english's", "stemmer": "english's", "min_token_len": None,
        "max_token_len": None}
    assert engine_ref(builtin("qdrant-hybrid-rrf")).config["build"]["sparse"]["effective"]["avg_len"] == 32.0


def test_the_qdrant_arm_in_the_docs_parses_as_written() -> None:
    text = (Path(__file__).resolve().parents[3] / "docs" / "engines.md").read_text()
    (code,) = re.findall(r"<!-- qdrant-arm-example -->\n```toml\n(.*?)```", text, re.S)
    arm = parse_arm(code.encode(), "qdrant-mine.toml", builtin=False)
    assert arm.engine == "qdrant" and "dense" in arm.settings and "bm25" in arm.settings


def test_turnbenchs_rrf_is_qdrant_edges_own_on_a_shard_without_ties(tmp_path: Path) -> None:
    from qdrant_edge import (
        Distance,
        EdgeConfig,
        EdgeShard,
        EdgeSparseVectorParams,
        EdgeVectorParams,
        Fusion,
        Point,
        Prefetch,
        Query,
        QueryRequest,
        SparseVector,
        UpdateOperation,
    )

    shard = EdgeShard.create(str(tmp_path / "s"), EdgeConfig(
        vectors={"d": EdgeVectorParams(size=2, distance=Distance.Dot)},
        sparse_vectors={"s": EdgeSparseVectorParams()}))
    shard.update(UpdateOperation.upsert_points([Point(i, {"d": [float(10 - i), 0.0], "s": SparseVector(
        [1], [float((7 * i) % 11 + 1)])}) for i in range(11)]))
    legs = [Query.Nearest([1.0, 0.0], using="d"), Query.Nearest(SparseVector([1], [1.0]), using="s")]
    lists = [[(int(p.id), p.score) for p in shard.query(QueryRequest(limit=11, query=leg))] for leg in legs]
    for k, weights in ((60, [1.0, 1.0]), (60, [2.0, 1.0]), (5, [0.5, 3.0])):
        engine = shard.query(QueryRequest(limit=11, prefetches=[Prefetch(limit=11, query=leg) for leg in legs],
                                          query=Fusion.Rrf(k=k, weights=weights)))
        ours = qdrant.fuse_rrf(lists, k, weights)
        assert [n for n, _ in ours] == [int(p.id) for p in engine], (k, weights)
        assert all(abs(s - p.score) < 1e-7 for (_, s), p in zip(ours, engine, strict=True)), (k, weights)
    shard.close()


def test_ties_are_ranked_in_inventory_order_the_same_in_every_process() -> None:
    import subprocess
    import sys

    # two passages of the same text tie everywhere; the engine's order among them changes from process to process
    code = (
        "import json; from tests.unit.engines.test_qdrant_family import _passages, QUESTIONS; "
        "from turnbench.engines.arms import builtin; from turnbench.engines.families import engine_ref; "
        "from turnbench.passages import Passage; "
        "ps = _passages() + [Passage(id=f'm2:{i:05d}', meeting='m2', speaker='B', start=float(i), end=i + 1.0, "
        "index=i, text=t) for i, t in enumerate(['the budget was cut', 'budget numbers', 'running numbers'] * 8)]; "
        "out = {}\n"
        "for name in ('qdrant-bm25', 'qdrant-hybrid-rrf'):\n"
        "    r = engine_ref(builtin(name)); r.engine.index(ps, None); out[name] = r.engine.search(QUESTIONS, 7); "
        "r.engine.close()\n"
        "print(json.dumps(out))")
    root = Path(__file__).resolve().parents[3]
    runs = [subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True).stdout
            for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    got = json.loads(runs[0])["qdrant-bm25"][0]
    tied = [pid for pid, score in got if score == got[0][1]]
    assert tied == sorted(tied, key=lambda pid: [p.id for p in _passages()].index(pid) if pid.startswith("m1")
                          else 10 + int(pid[3:]))


def test_a_shard_left_by_a_killed_run_is_swept_by_the_next_one_and_no_other() -> None:
    import os
    import tempfile

    from turnbench.canonical import OWNER

    root = Path(tempfile.gettempdir())
    dead = Path(tempfile.mkdtemp(prefix=qdrant.SHARD_PREFIX, dir=root))
    (dead / OWNER).write_text(json.dumps({"pid": 2 ** 22 + 12345, "ticks": None}))  # no such process
    alive = Path(tempfile.mkdtemp(prefix=qdrant.SHARD_PREFIX, dir=root))
    (alive / OWNER).write_text(json.dumps({"pid": os.getpid(), "ticks": None}))  # a bench running beside
    foreign = Path(tempfile.mkdtemp(prefix=qdrant.SHARD_PREFIX, dir=root))  # not one turnbench wrote
    try:
        store = qdrant.open(parse_arm(SPARSE, "mine.toml", builtin=False))
        assert not dead.exists() and alive.exists() and foreign.exists() and store.dir.exists()
        store.close()
        assert not store.dir.exists()
    finally:
        for d in (dead, alive, foreign):
            __import__("shutil").rmtree(d, ignore_errors=True)
