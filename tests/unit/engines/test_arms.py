"""turnbench.engines.arms: an arm is a file, checked in full before any query is sent.

Every refusal names the file and the reason in one line; a user's file runs exactly as a built-in one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.engines.arms import builtin, builtin_names, from_file, parse_arm, resolve
from turnbench.errors import BadInput, UnknownArm

BOOSTED = b'''# a team's own arm: exact words count double
name = "bm25-exact-boost"
description = "passage text, and its exact (unstemmed) words boosted 2x"
depth = 50
body = """
{"query": {"bool": {"must": [{"multi_match": {"query": {{query_text}}, "fields": ["content", "content.exact^2"],
                                              "type": "most_fields"}}],
                    "filter": {{filter}}}}}
"""
'''


def test_the_built_in_arms_are_files_that_parse() -> None:
    assert builtin_names()[:2] == ["bm25", "bm25-title"]
    for name in builtin_names():
        arm = builtin(name)
        assert arm.name == name and arm.builtin and arm.file_name == f"{name}.toml"


def test_a_users_arm_file_resolves_and_records_its_hash(tmp_path: Path) -> None:
    path = tmp_path / "bm25-exact-boost.toml"
    path.write_bytes(BOOSTED)
    (arm,) = resolve([], [path])
    assert arm.depth == 50 and not arm.builtin
    body = arm.request(query_text='say "hi"', filters=[], depth=50)
    assert body["query"]["bool"]["must"][0]["multi_match"]["query"] == 'say "hi"'  # escaped as JSON, not pasted
    import hashlib

    assert arm.config()["file"] == {"name": path.name, "sha256": hashlib.sha256(BOOSTED).hexdigest(),
                                    "builtin": False}


@pytest.mark.parametrize("content, reason", [
    (b"name = \"x\"\nbody = '{\"query\": {\"match\": {\"content\": {{query_text}}}}}'\nnope = 1\n",
     r"unknown key\(s\) nope"),
    (b"name = [1]\nbody = '{}'\n", "name"),
    (b"name = \"Has Space\"\nbody = '{}'\n", "name"),
    (b"name = \"x\"\ndepth = 0\nbody = '{}'\n", "depth must be a whole number from 1 to 10000"),
    (b"name = \"x\"\n", "body must be the search body"),
    (b"name = \"x\"\nbody = '{\"query\": {\"match\": {\"content\": {{qeury_text}}}}}'\n",
     r"unknown placeholder \{\{qeury_text\}\}"),
    (b"name = \"x\"\nbody = '{\"query\": {\"match_all\": {}}}'\n", "every query would get the same answer"),
    (b"name = \"x\"\nbody = '{\"query\": {\"match\": {\"content\": {{query_text}} }}'\n", "not valid JSON"),
    (b"name = \"x\"\nbody = '[{{query_text}}]'\n", "is a JSON list, not an object"),
    (b"name = \"x\"\nbody = '{\"size\": 5, \"query\": {\"match\": {\"content\": {{query_text}}}}}'\n", "sets size"),
    (b"name = \"x\"\nbody = '{\"query\": {\"knn\": {\"e\": {\"vector\": {{query_vector}}, \"k\": 5}}}}'\n",
     r"\[requires\] must name the encoder"),
    (b"name = \"x\"\nbody = '{\"query\": {\"match\": {\"content\": {{query_text}}}}}'\n[pipeline]\nbody = 'nope'\n",
     r"\[pipeline\] body is not valid JSON"),
    (b"name = \"x\"\nbody = '{\"query\": {\"match\": {\"content\": {{query_text}}}}}'\n[requires]\nencoder = 3\n",
     r"\[requires\] may name"),
    (b"name = 'x\n", "not TOML"),
    (b"\xff\xfe", "must be UTF-8"),
])
def test_a_bad_arm_file_is_refused_naming_it_and_the_reason(content: bytes, reason: str) -> None:
    with pytest.raises(BadInput, match=reason) as err:
        parse_arm(content, "my-arm.toml", builtin=False)
    assert str(err.value).startswith("my-arm.toml: ") and "\n" not in str(err.value)


def test_unknown_built_in_and_missing_file_and_two_of_a_name(tmp_path: Path) -> None:
    with pytest.raises(UnknownArm, match=r"'bm25-nope'.*known arms: bm25, bm25-title"):
        builtin("bm25-nope")
    with pytest.raises(BadInput, match="no such arm file"):
        from_file(tmp_path / "nope.toml")
    (tmp_path / "bm25.toml").write_bytes(b'name = "bm25"\nbody = \'{"query": {"match": {"c": {{query_text}}}}}\'\n')
    with pytest.raises(BadInput, match="two arms are named 'bm25'"):
        resolve(["bm25"], [tmp_path / "bm25.toml"])


def test_the_cli_refuses_a_bad_arm_file_before_any_stack_starts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"name = \"bad\"\nbody = '{\"query\": {\"match\": {\"content\": {{nope}}}}}'\n")
    small = Path(__file__).resolve().parents[3] / "fixtures" / "small"
    for args in (["bench", "--corpus", str(small), "--arm-file", str(bad), "--out", str(tmp_path / "o"),
                  "--provider", "external"],
                 ["run", "--corpus", str(small), "--arm-file", str(bad), "--out", str(tmp_path / "r")]):
        out = CliRunner().invoke(main, args)
        assert out.exit_code == 2, out.output
        assert out.stderr.startswith(f"turnbench: BadInput: {bad}: unknown placeholder {{{{nope}}}}")
    out = CliRunner().invoke(main, ["run", "--corpus", str(small), "--out", str(tmp_path / "r")])
    assert out.exit_code == 2 and "give one arm" in out.stderr


def test_the_dense_and_hybrid_built_ins_need_the_embedding_field_and_declare_their_reference() -> None:
    for name in ("dense-exact", "dense-hnsw", "hybrid-rrf", "hybrid-minmax"):
        arm = builtin(name)
        assert {k: arm.requires[k] for k in ("vector_field", "encoder")} == {"vector_field": "embedding",
                                                                              "encoder": "minilm-l6-v2-int8"}
        assert "query_vector" in arm.placeholders and "filter" in arm.placeholders
    assert builtin("dense-hnsw").approximates == "dense-exact" and builtin("dense-hnsw").needs_graph
    assert not any(builtin(n).needs_graph for n in ("dense-exact", "hybrid-rrf", "hybrid-minmax"))
    assert builtin("dense-hnsw").config()["approximates"] == "dense-exact"
    assert "approximates" not in builtin("bm25").config()  # a lexical arm's record is as it was
    assert builtin("hybrid-rrf").pipeline_body() == {"phase_results_processors": [
        {"score-ranker-processor": {"combination": {"technique": "rrf", "parameters": {"rank_constant": 60}}}}]}


REQUIRES = b'[requires]\nvector_field = "embedding"\nencoder = "minilm-l6-v2-int8"\n'
KNN_BODY = b"""body = '{"query": {"knn": {"embedding": {"vector": {{query_vector}}, "k": 10}}}}'\n"""


@pytest.mark.parametrize("content, reason", [
    (b'name = "mine"\n' + KNN_BODY + REQUIRES.replace(b"minilm-l6-v2-int8", b"bert-huge"),
     r"mine\.toml: unknown encoder 'bert-huge'; known encoders: bge-small-en-v15-int8, minilm-l6-v2-int8"),
    (b'name = "mine"\napproximates = "nowhere"\n' + KNN_BODY + REQUIRES,
     r"mine\.toml: approximates must name another built-in arm"),
    (b'name = "mine"\napproximates = 3\n' + KNN_BODY + REQUIRES, r"approximates must name another built-in arm"),
    (b'name = "mine"\n' + KNN_BODY + REQUIRES + b'vector_index = "ivf"\n', r"vector_index is one of exact, hnsw"),
])
def test_a_dense_arm_naming_an_unknown_encoder_or_reference_is_refused_before_any_stack(tmp_path: Path,
                                                                                       content: bytes,
                                                                                       reason: str) -> None:
    import re

    path = tmp_path / "mine.toml"
    path.write_bytes(content)
    (tmp_path / "corpus").mkdir()
    r = CliRunner().invoke(main, ["bench", "--corpus", str(tmp_path / "corpus"), "--arm-file", str(path), "--out",
                                  str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    assert len(r.output.strip().splitlines()) == 1 and re.search(reason, r.output), r.output
