"""turnbench.engines.protocol: an engine is resolved and checked before any stack starts, and every answer it
gives is checked before it is scored. Each refusal is one line naming the engine; none is an internal error."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.engines import protocol
from turnbench.engines.protocol import Question
from turnbench.errors import BadInput, EngineFailed, UnjudgedPassage

GOOD = '''
class E:
    name = "mine"
    version = "0.1"
    config = {"k": 1}
    depth = 3
    def index(self, passages, context): pass
    def search(self, questions, depth): return [[] for _ in questions]

def engine():
    return E()
'''


def _file(tmp_path: Path, text: str, name: str = "mine.py") -> str:
    (tmp_path / name).write_text(text)
    return str(tmp_path / name)


def test_a_file_engine_resolves_with_its_name_version_config_and_source(tmp_path: Path) -> None:
    ref = protocol.resolve(_file(tmp_path, GOOD) + ":engine")
    assert (ref.name, ref.version, dict(ref.config), ref.depth, ref.batch, ref.rerank) == ("mine", "0.1", {"k": 1},
                                                                                           3, 1, None)
    described = ref.describe()
    assert described["factory"] == "mine.py:engine"  # the file's name, never its path
    assert described["source"]["file"] == "mine.py" and len(described["source"]["sha256"]) == 64
    assert str(tmp_path) not in repr(described)


def test_a_shipped_example_resolves_by_module_name() -> None:
    ref = protocol.resolve("turnbench.engines.examples.bm25:engine")
    assert ref.name == "bm25-python" and ref.describe()["source"]["module"] == "turnbench.engines.examples.bm25"


@pytest.mark.parametrize(("spec", "kind", "said"), [
    ("no-colon", BadInput, "give MODULE:FACTORY"),
    ("no_such_module_here:engine", BadInput, "no module named 'no_such_module_here'"),
    ("turnbench.engines.examples.bm25:nothing", BadInput, "has no callable 'nothing'"),
    ("/nowhere/engine.py:engine", BadInput, "no such file"),
])
def test_an_engine_that_cannot_be_found_is_bad_input(spec: str, kind: type, said: str) -> None:
    with pytest.raises(kind, match=said):
        protocol.resolve(spec)


@pytest.mark.parametrize(("body", "said"), [
    ("import nonexistent_package_xyz\ndef engine(): pass", "importing broken.py raised ModuleNotFoundError"),
    ("def engine(): raise RuntimeError('no licence')", "the factory raised RuntimeError: no licence"),
    ("def engine(): return object()", "lacks name, version, config, index, search"),
    (GOOD.replace('"mine"', '"Mine Engine"'), "name 'Mine Engine' must be lowercase"),
    (GOOD.replace('"0.1"', "1"), "version must be a non-empty string, not 1"),
    (GOOD.replace('{"k": 1}', '{"k": float("nan")}'), "config is not JSON turnbench can record"),
    (GOOD.replace('{"k": 1}', '{"k": object()}'), "config is not JSON turnbench can record"),
    (GOOD.replace("depth = 3", "depth = 0"), "depth must be a whole number from 1 to 10000, not 0"),
    (GOOD.replace("depth = 3", "batch = 2.5"), "batch must be a whole number"),
    (GOOD.replace("depth = 3", "depth = 3\n    rerank = {'scorer': 'minilm-l6-v2-int8', 'top': 9}"),
     "[rerank] top must be a whole number from 1 to the depth (3), not 9"),
])
def test_an_engine_that_breaks_the_protocol_is_refused_before_any_stack(tmp_path: Path, body: str,
                                                                        said: str) -> None:
    with pytest.raises(BadInput) as caught:
        protocol.resolve(_file(tmp_path, body, "broken.py") + ":engine")
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_the_cli_refuses_an_unknown_engine_in_one_line_with_exit_2_before_any_stack(tmp_path: Path) -> None:
    corpus = Path(__file__).resolve().parents[3] / "fixtures" / "small"
    for spec, kind in (("no_such_module_here:engine", "BadInput"),
                       (_file(tmp_path, "def engine(): raise ValueError('bad')", "raises.py") + ":engine",
                        "EngineFailed")):
        r = CliRunner().invoke(main, ["bench", "--corpus", str(corpus), "--engine", spec, "--provider", "embedded",
                                      "--out", str(tmp_path / "out")])
        assert r.exit_code == 2, r.output
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"turnbench: {kind}: ")
        assert not (tmp_path / "out").exists() and not (tmp_path / "state" / "stack.json").exists()


KNOWN = {pid: pid for pid in ("m1:00000", "m1:00001", "m2:00000")}
QS = [Question("q1", "one"), Question("q2", "two")]


def _ref(tmp_path: Path):
    return protocol.resolve(_file(tmp_path, GOOD) + ":engine")


def test_answers_are_read_per_question_and_an_empty_one_is_kept_as_unanswered(tmp_path: Path) -> None:
    got = protocol.read_answers(_ref(tmp_path), QS, [[("m1:00001", 2), ("m2:00000", 1.5)], []], KNOWN)
    assert got == [("q1", ["m1:00001", "m2:00000"], [2.0, 1.5]), ("q2", [], [])]


@pytest.mark.parametrize(("answer", "kind", "said"), [
    ([[("m1:00000", math.nan)], []], EngineFailed, "question q1: hit 1 (m1:00000) has score nan, not a finite"),
    ([[("m1:00000", math.inf)], []], EngineFailed, "has score inf"),
    ([[("m1:00000", True)], []], EngineFailed, "has score True"),
    ([[("m1:00000", "3")], []], EngineFailed, "has score '3'"),
    ([[("m9:00000", 1.0)], []], UnjudgedPassage, "question q1: passage 'm9:00000' (rank 1) is not in the passage "
                                                 "inventory"),
    ([[("m1:00000", 2.0), ("m1:00000", 1.0)], []], EngineFailed, "passage 'm1:00000' is returned more than once"),
    ([[("m1:00000", 3.0), ("m1:00001", 2.0), ("m2:00000", 1.0), ("m1:00000", 0.0)], []], EngineFailed,
     "4 passages returned, more than the depth 3"),
    ([[]], EngineFailed, "given 2 question(s) and returned 1 answer(s)"),
    ({"q1": []}, EngineFailed, "search returned a dict"),
    ([["m1:00000"], []], EngineFailed, "hit 1 is not a (passage id, score) pair"),
    ([[(1, 1.0)], []], EngineFailed, "hit 1's passage id is a int, not a string"),
])
def test_an_answer_the_protocol_does_not_allow_is_refused(tmp_path: Path, answer: object, kind: type,
                                                          said: str) -> None:
    with pytest.raises(kind) as caught:
        protocol.read_answers(_ref(tmp_path), QS, answer, KNOWN)
    assert said in str(caught.value) and str(caught.value).startswith("engine mine")


def test_the_texts_handed_over_are_the_loads_or_refused() -> None:
    from turnbench.corpus.format import open_corpus
    from turnbench.engines.texts import passages_with_texts
    from turnbench.errors import IndexNotSettled
    from turnbench.loading.chunking import chunk_meeting
    from turnbench.passages import inventory_sha256

    corpus = open_corpus(Path(__file__).resolve().parents[3] / "fixtures" / "small")
    chunks = [c for m in corpus.iter_meetings() for c in chunk_meeting(m.id, m.turns, max_words=200)]
    sha = inventory_sha256(c.passage for c in chunks)
    got = passages_with_texts(corpus, {"max_words": 200, "passages_sha256": sha})
    assert [p.id for p in got] == sorted(c.passage.id for c in chunks)
    by_id = {c.passage.id: c for c in chunks}
    several = next(c for c in chunks if len(c.texts) > 1)  # a passage of several turns: joined by newlines
    assert {p.id: p.text for p in got}[several.passage.id] == "\n".join(several.texts)
    assert all(p.text == by_id[p.id].text and p.text_sha256 == by_id[p.id].passage.text_sha256 for p in got)
    with pytest.raises(IndexNotSettled, match=r"cut at 100 words \(overlap 0\) gives another inventory"):
        passages_with_texts(corpus, {"max_words": 100, "passages_sha256": sha})
