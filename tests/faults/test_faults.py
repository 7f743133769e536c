"""Hostile and clumsy input, command by command: one line, the right exit code, nothing left behind.

Each case builds its inputs in a fresh directory, runs one `turnbench` command, and asserts the exit code, the
first line of stderr, that the line is the only one and short, and that no output (or staging directory) was
left. Cases run in process by default; with TURNBENCH_FAULTS_PYTHON set to another interpreter they run as
subprocesses of it, which is how the same table measures an older turnbench (see benchmarks/faults.py).

Kills and signals that need real servers are in tests/integration/stack/test_embedded.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.unit.generator.helpers import rehash, write_lines

REPO = Path(__file__).resolve().parents[2]
SMALL = REPO / "fixtures" / "small"
OTHER_PYTHON = os.environ.get("TURNBENCH_FAULTS_PYTHON")


@dataclass(frozen=True)
class Outcome:
    code: int
    stderr: str


def run(args: list[str], cwd: Path) -> Outcome:
    if OTHER_PYTHON:
        done = subprocess.run([OTHER_PYTHON, "-c", "from turnbench.cli import main; main()", *args], cwd=cwd,
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "TURNBENCH_STATE_DIR": str(cwd / "state")})
        return Outcome(done.returncode, done.stderr)
    from turnbench.cli import main

    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, args)
    finally:
        os.chdir(old)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # what a user would have seen: a traceback
        return Outcome(1, "Traceback (most recent call last):\n" + repr(result.exception))
    return Outcome(result.exit_code, result.stderr)


# -- builders -----------------------------------------------------------------------------------------------

def corpus(w: Path, edit: Callable[[Path], None] | None = None, *, hashes: bool = True) -> Path:
    root = w / "corpus"
    shutil.copytree(SMALL, root)
    if edit is not None:
        edit(root)
        if hashes:
            rehash(root)
    return root


def manifest_edit(change: Callable[[dict], object], *, replace: bool = False) -> Callable[[Path], None]:
    """Edit the manifest in place, or (``replace``) write what ``change`` returns instead of it."""
    def edit(root: Path) -> None:
        m = json.loads((root / "manifest.json").read_text())
        out = change(m)
        (root / "manifest.json").write_text(json.dumps(out if replace else m))
    return edit


def part(root: Path) -> Path:
    return root / "meetings" / "part-0000.jsonl"


def first_meeting_edit(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        rows = [json.loads(x) for x in part(root).read_text().splitlines()]
        change(rows[0])
        write_lines(part(root), rows)
    return edit


def inventory(w: Path, change: Callable[[list[dict]], None] | None = None, raw: bytes | None = None) -> Path:
    from turnbench.corpus.format import open_corpus
    from turnbench.loading.chunking import chunk_meeting
    from turnbench.passages import write_passages

    path = w / "passages.jsonl"
    passages = [c.passage for m in open_corpus(SMALL).iter_meetings() for c in chunk_meeting(m.id, m.turns)]
    write_passages(path, passages)
    if change is not None:
        rows = [json.loads(x) for x in path.read_text().splitlines()]
        change(rows)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    if raw is not None:
        path.write_bytes(raw)
    return path


def trec(w: Path, text: str | bytes) -> Path:
    path = w / "run.trec"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def first_passage(w: Path | None = None) -> str:
    """The id of fixtures/small's first passage, as turnbench cuts it."""
    from turnbench.corpus.format import open_corpus
    from turnbench.loading.chunking import chunk_meeting

    m = next(open_corpus(SMALL).iter_meetings())
    return chunk_meeting(m.id, m.turns)[0].passage.id


def score(w: Path, run_file: Path | None = None, passages: Path | None = None, *extra: str) -> list[str]:
    p = passages or inventory(w)
    r = run_file or trec(w, f"q00001 Q0 {first_passage(w)} 1 1.0 x\n")
    return ["score", "--corpus", str(SMALL), "--passages", str(p), "--run", str(r), "--out", str(w / "out"), *extra]


def results(w: Path, change: Callable[[dict], object] | None = None, *, rehash_digest: bool = True,
            name: str = "res") -> Path:
    """A real results directory of fixtures/small (scored from a one-passage run), optionally forged."""
    from turnbench.resultsdir import write_digest

    src = w / f"{name}-src"
    src.mkdir()
    args = score(src)
    args[args.index("--out") + 1] = str(w / name)
    out = run(args, w)
    assert out.code == 0, out.stderr
    if change is not None:
        path = w / name / "metrics.json"
        doc = json.loads(path.read_text())
        replaced = change(doc)
        path.write_text(json.dumps(doc if replaced is None else replaced, allow_nan=True))
        if rehash_digest:
            write_digest(w / name)
    return w / name


def read_only_dir(w: Path) -> Path:
    """A directory no entry can be made in: a read-only one, or for root (whom modes do not stop) /sys."""
    if os.geteuid() == 0:
        return Path("/sys")
    d = w / "ro"
    d.mkdir()
    d.chmod(stat.S_IRUSR | stat.S_IXUSR)
    return d


# -- the table --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    area: str
    name: str
    args: Callable[[Path], list[str]]
    code: int
    first: str  # a regular expression the first line of stderr must match
    left: tuple[str, ...] = ()  # paths (relative to the work dir) that must not exist afterwards


def _per_query(value: float) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        doc["retrieval"]["per_query"][0]["values"]["MRR"] = value
    return change


CASES = [
    # corpus input --------------------------------------------------------------------------------------------
    Case("corpus", "missing directory", lambda w: ["validate", str(w / "nope")], 2, r"BadInput: .*no such corpus"),
    Case("corpus", "a file, not a directory", lambda w: ["validate", str(trec(w, "x"))], 2, r"BadInput: .*not a dir"),
    Case("corpus", "manifest is a list", lambda w: ["validate", str(corpus(
        w, manifest_edit(lambda m: [m], replace=True), hashes=False))],
         3, r"CorpusIntegrityError: .*holds a JSON list"),
    Case("corpus", "manifest without files", lambda w: ["validate", str(corpus(w, manifest_edit(
        lambda m: m.pop("files")), hashes=False))], 3, r"CorpusIntegrityError: .*'files' is missing"),
    Case("corpus", "manifest files of the wrong type", lambda w: ["validate", str(corpus(w, manifest_edit(
        lambda m: m.update(files=["a"])), hashes=False))], 3, r"CorpusIntegrityError: .*'files' is missing or not"),
    Case("corpus", "manifest without corpus_id", lambda w: ["measure", str(corpus(w, manifest_edit(
        lambda m: m.pop("corpus_id")), hashes=False))], 3, r"CorpusIntegrityError: .*'corpus_id'"),
    Case("corpus", "manifest not UTF-8", lambda w: ["validate", str(corpus(w, lambda r: (r / "manifest.json")
                                                                          .write_bytes(b"\xff\xfe{"), hashes=False))],
         3, r"CorpusIntegrityError: .*not UTF-8"),
    Case("corpus", "manifest names a path outside", lambda w: ["validate", str(corpus(w, manifest_edit(
        lambda m: m["files"].update({"../x": "0" * 64})), hashes=False))], 3, r"not a path inside the corpus"),
    Case("corpus", "edited text", lambda w: ["validate", str(corpus(w, lambda r: part(r).write_bytes(
        part(r).read_bytes().replace(b"the", b"teh", 1)), hashes=False))], 3, r"CorpusIntegrityError: .*sha256"),
    Case("corpus", "an extra file", lambda w: ["measure", str(corpus(w, lambda r: (r / "notes.txt").write_text("x"),
                                                                     hashes=False))], 3, r"not in the manifest"),
    Case("corpus", "a meeting line that is not JSON", lambda w: ["measure", str(corpus(
        w, lambda r: part(r).write_bytes(b"{nope\n" + part(r).read_bytes())))], 3,
         r"CorpusIntegrityError: .*part-0000.jsonl: line 1 is not valid JSON"),
    Case("corpus", "a meeting line not UTF-8", lambda w: ["measure", str(corpus(
        w, lambda r: part(r).write_bytes(b"\xff\n" + part(r).read_bytes())))], 3, r"line 1 is not UTF-8"),
    Case("corpus", "a meeting record of the wrong type", lambda w: ["score", "--corpus", str(corpus(
        w, first_meeting_edit(lambda m: m.update(turns="many")))), "--passages", str(inventory(w)), "--run",
        str(trec(w, "")), "--out", str(w / "out")], 3, r"CorpusIntegrityError: .*line 1 is not a format-v1 meeting",
         ("out",)),
    Case("corpus", "a query record of the wrong type", lambda w: ["measure", str(corpus(
        w, lambda r: (r / "queries.jsonl").write_text('"a query"\n')))], 3, r"line 1 is not a format-v1 query"),
    # score inputs -------------------------------------------------------------------------------------------
    Case("score", "inventory missing", lambda w: score(w, passages=w / "nope.jsonl"), 2, r"BadInput: .*not found",
         ("out",)),
    Case("score", "inventory not UTF-8", lambda w: score(w, passages=inventory(w, raw=b"\xff\n")), 2,
         r"BadInput: .*line 1 is not UTF-8", ("out",)),
    Case("score", "inventory line not an object", lambda w: score(w, passages=inventory(w, raw=b"[1,2]\n")), 2,
         r"BadInput: .*line 1 is not a passage record", ("out",)),
    Case("score", "a passage id that is a list", lambda w: score(w, passages=inventory(
        w, lambda rows: rows[0].update(id=["x"])), run_file=trec(w, "")), 2, r"BadInput: .*id is a list", ("out",)),
    Case("score", "a passage that ends before it starts", lambda w: score(w, passages=inventory(
        w, lambda rows: rows[0].update(start=9.0, end=1.0))), 2, r"ends \(1.0\) before it starts", ("out",)),
    Case("score", "a passage time that is NaN", lambda w: score(w, passages=inventory(w, raw=(
        b'{"id":"a","meeting":"m","speaker":"s","start":NaN,"end":1,"index":0}\n'))), 2, r"not valid JSON", ("out",)),
    Case("score", "a passage id twice", lambda w: score(w, passages=inventory(
        w, lambda rows: rows.append(dict(rows[0]))), run_file=trec(w, "")), 2, r"appears more than once", ("out",)),
    Case("score", "a run with five columns", lambda w: score(w, run_file=trec(w, "q1 Q0 p 1 1.0\n")), 2,
         r"line 1 has 5 columns", ("out",)),
    Case("score", "an infinite score", lambda w: score(w, run_file=trec(w, f"q00001 Q0 {first_passage()} 1 inf x\n")),
         2,
         r"BadInput: .*line 1: score inf is not a finite number", ("out",)),
    Case("score", "a NaN score", lambda w: score(w, run_file=trec(w, "q00001 Q0 p 1 nan x\n")), 2,
         r"score nan is not a finite number", ("out",)),
    Case("score", "a run not UTF-8", lambda w: score(w, run_file=trec(w, b"q1 Q0 \xff 1 1.0 x\n")), 2,
         r"line 1 is not UTF-8", ("out",)),
    Case("score", "run.jsonl of the wrong shape", lambda w: score(w, run_file=_file(
        w, "run.jsonl", '{"query": "q1", "passages": {"p": 1}}\n')), 2, r"line 1 is not \{\"query\"", ("out",)),
    Case("score", "run.jsonl pair of three", lambda w: score(w, run_file=_file(
        w, "run.jsonl", '{"query": "q1", "passages": [["p", 1, 2]]}\n')), 2, r"passage 1 is not a \[passage id",
         ("out",)),
    Case("score", "a ranked passage not in the inventory", lambda w: score(w, run_file=trec(
        w, "q00001 Q0 nowhere 1 1.0 x\n")), 3, r"UnjudgedPassage", ("out",)),
    Case("score", "a query not in the corpus", lambda w: score(w, run_file=trec(
        w, f"zzz Q0 {first_passage(w)} 1 1.0 x\n")), 2, r"not in corpus", ("out",)),
    Case("score", "an arm config not UTF-8", lambda w: score(w, None, None, "--arm-config", str(
        _file(w, "arm.json", b"\xff"))), 2, r"not UTF-8", ("out",)),
    Case("score", "an arm config that is a list", lambda w: score(w, None, None, "--arm-config", str(
        _file(w, "arm.json", "[1]"))), 2, r"is a JSON list, not an object", ("out",)),
    Case("score", "another corpus's inventory", lambda w: score(w, passages=inventory(
        w, lambda rows: [r.update(text_sha256="0" * 64) for r in rows])), 3, r"StaleBinding: \d+ passage", ("out",)),
    Case("score", "a speaker the meeting lacks", lambda w: score(w, passages=inventory(
        w, lambda rows: rows[0].update(speaker="Nobody Here"))), 3, r"ForeignInventory: 1 passage", ("out",)),
    Case("score", "--out not empty", lambda w: score(w, None, None) if _file(w, "out/keep", "x") else [], 2,
         r"not empty"),
    Case("score", "--out not writable", lambda w: [*score(w)[:-1], str(read_only_dir(w) / "turnbench-out")], 2,
         r"cannot write here"),
    Case("score", "--out under a file", lambda w: [*score(w)[:-1], str(_file(w, "f", "x") / "out")], 2,
         r"BadInput: .*is a file"),
    Case("score", "a 50 MB passage id", lambda w: score(w, run_file=trec(w, f"q00001 Q0 {'x' * 50_000_000} 1 1 x\n")),
         3, r"UnjudgedPassage: .*\(\d+ characters\)$", ("out",)),
    # compare and results -------------------------------------------------------------------------------------
    Case("compare", "a metrics.json that is a list", lambda w: ["compare", str(results(
        w, lambda d: [d])), str(results(w, name="b"))], 2, r"holds a list, not a results document"),
    Case("compare", "NaN per-query values", lambda w: ["compare", str(results(w, name="a")), str(results(
        w, _per_query(float("nan")), name="b")), "--gate"], 2, r"BadInput: .*NaN is not a number"),
    Case("compare", "per-query values edited, digest rewritten", lambda w: ["compare", str(results(w, name="a")),
                                                                             str(results(w, _per_query(0.123),
                                                                                         name="b")), "--gate"],
         3, r"ResultsIntegrityError: .*per-query rows give"),
    Case("compare", "a file edited after it was written", lambda w: ["compare", str(results(w, name="a")), str(
        results(w, _per_query(0.5), rehash_digest=False, name="b")), "--gate"], 3, r"changed after it was written"),
    Case("compare", "no digest", lambda w: ["compare", str(results(w, name="a")), str(_without_digest(
        results(w, name="b")))], 3, r"no claim.sha256"),
    Case("compare", "a directory that is no results", lambda w: ["compare", str(results(w, name="a")), str(
        (w / "empty").mkdir() or w / "empty")], 2, r"neither a results directory"),
    Case("compare", "a missing path", lambda w: ["compare", str(w / "a"), str(w / "b")], 2, r"does not exist"),
    # generate --------------------------------------------------------------------------------------------------
    Case("generate", "--from-manifest a list", lambda w: ["generate", "--from-manifest", str(_file(
        w, "m.json", "[]")), "--out", str(w / "out")], 2, r"not a manifest written by", ("out",)),
    Case("generate", "--from-manifest files of the wrong type", lambda w: ["generate", "--from-manifest", str(
        _manifest_with(w, lambda m: m.update(files=["x"]))), "--out", str(w / "out")], 2, r"'files' is not an object",
         ("out",)),
    Case("generate", "--from-manifest not UTF-8", lambda w: ["generate", "--from-manifest", str(_file(
        w, "m.json", b"\xff\xfe")), "--out", str(w / "out")], 2, r"not a JSON manifest", ("out",)),
    Case("generate", "--from-manifest of another generator version", lambda w: ["generate", "--from-manifest", str(
        _manifest_with(w, lambda m: m["producer"].update(version="0.0.1+g0"))), "--out", str(w / "out")], 3,
         r"VersionDrift: .*generator recorded 0.0.1\+g0", ("out",)),
    Case("generate", "a regeneration that differs", lambda w: ["generate", "--from-manifest", str(_manifest_with(
        w, lambda m: m["files"].update({"queries.jsonl": "0" * 64}))), "--out", str(w / "out")], 1,
         r"differs from .* nothing was written", ("out",)),
    Case("generate", "--out not empty", lambda w: ["generate", "--meetings", "8", "--out", str(
        _file(w, "out/x", "x").parent)], 2, r"not empty"),
    Case("generate", "--out not writable", lambda w: ["generate", "--meetings", "8", "--out", str(
        read_only_dir(w) / "turnbench-c")], 2, r"cannot write here"),
    Case("generate", "--workers 0", lambda w: ["generate", "--meetings", "8", "--workers", "0", "--out",
                                               str(w / "out")], 2, r"workers must be", ("out",)),
    Case("generate", "a seed that is no number", lambda w: ["generate", "--seed", "x", "--out", str(w / "out")], 2,
         r"BadInput: Invalid value for '--seed'", ("out",)),
    # stack ---------------------------------------------------------------------------------------------------
    Case("stack", "a port out of range", lambda w: ["stack", "up", "--opensearch-port", "70000"], 2,
         r"BadInput: Invalid value for '--opensearch-port'"),
    Case("stack", "an unknown provider", lambda w: ["stack", "up", "--provider", "podman"], 2, r"BadInput: Invalid"),
    Case("stack", "one external endpoint", lambda w: ["stack", "up", "--provider", "external", "--opensearch-url",
                                                      "http://127.0.0.1:9"], 2, r"BadInput: .*needs both endpoints"),
    Case("stack", "a state file that is a list", lambda w: _state(w, "[1]") or ["stack", "down"], 3,
         r"StackStateError: .*is not one turnbench wrote"),
    Case("stack", "status with no stack", lambda w: ["stack", "status"], 1, r"CheckFailed: no stack is recorded"),
    # answers ---------------------------------------------------------------------------------------------------
    Case("answers", "an answer that is a list", lambda w: ["answer", "--corpus", str(SMALL), "--answers", str(
        _file(w, "a.jsonl", '{"query_id": "q1", "answer": [3]}\n')), "--out", str(w / "out")], 2,
         r"line 1 is not a submitted answer", ("out",)),
    Case("answers", "a count that is text", lambda w: ["answer", "--corpus", str(SMALL), "--answers", str(
        _file(w, "a.jsonl", '{"query_id": "q1", "answer": {"type": "count", "count": "3"}}\n')), "--out",
        str(w / "out")], 2, r"whole-number count", ("out",)),
    Case("answers", "answers to unknown questions", lambda w: ["answer", "--corpus", str(SMALL), "--answers", str(
        _file(w, "a.jsonl", '{"query_id": "nope", "answer": null}\n')), "--out", str(w / "out")], 2,
         r"not answer-scored", ("out",)),
    # the command line itself ------------------------------------------------------------------------------------
    Case("cli", "an unknown command", lambda w: ["frobnicate"], 2, r"BadInput: No such command"),
    Case("cli", "an unknown option", lambda w: ["validate", "--frob", str(SMALL)], 2, r"BadInput: No such option"),
]


def _file(w: Path, name: str, content: str | bytes) -> Path:
    path = w / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def _manifest_with(w: Path, change: Callable[[dict], None]) -> Path:
    m = json.loads((REPO / "fixtures" / "small" / "manifest.json").read_text())
    change(m)
    return _file(w, "recorded.json", json.dumps(m))


def _without_digest(d: Path) -> Path:
    (d / "claim.sha256").unlink()
    return d


def _state(w: Path, text: str) -> None:
    _file(w, "state/stack.json", text)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.area}: {c.name}")
def test_one_line_the_right_exit_code_nothing_left(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                   ) -> None:
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))
    args = case.args(tmp_path)
    out = run(args, tmp_path)
    lines = out.stderr.strip().splitlines()
    assert out.code == case.code, out.stderr[:2000]
    assert lines and re.search(case.first, lines[-1]), out.stderr[:2000]
    assert not out.stderr.startswith("Traceback") and len(lines[-1]) <= 400
    # every line but progress notes ("turnbench: stack provider ...") is the one error line
    assert sum(1 for line in lines if not line.startswith("turnbench: stack provider")) == 1, out.stderr[:2000]
    for rel in case.left:
        assert not (tmp_path / rel).exists(), f"{rel} was left behind"
    assert not list(tmp_path.rglob(".*.partial")), "a staging directory was left behind"
