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
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.unit.generator.helpers import rehash, write_lines
from tests.unit.harness.helpers import forge_answer_gold, forge_qrels, rows_of
from turnbench.results.record import from_tree

REPO = Path(__file__).resolve().parents[2]
SMALL = REPO / "fixtures" / "small"
OTHER_PYTHON = os.environ.get("TURNBENCH_FAULTS_PYTHON")


@dataclass(frozen=True)
class Outcome:
    code: int
    stderr: str
    stdout: str = ""


# the first argument of a row that runs a notebook-style script (the Python API, not the command line): the script
# runs in its own interpreter, its errors printed and mapped to exit codes as the command's are (cli.handle_errors)
NOTEBOOK = "notebook:"
_RUN_SCRIPT = "import runpy, sys; from turnbench.cli import handle_errors; handle_errors(runpy.run_path)(sys.argv[1])"


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> Outcome:
    if args and args[0] == NOTEBOOK:
        done = subprocess.run([OTHER_PYTHON or sys.executable, "-c", _RUN_SCRIPT, args[1]], cwd=cwd,
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "TURNBENCH_STATE_DIR": str(cwd / "state"), "PYTHONPATH": str(REPO),
                                   **(env or {})})
        return Outcome(done.returncode, done.stderr, done.stdout)
    if OTHER_PYTHON:
        done = subprocess.run([OTHER_PYTHON, "-c", "from turnbench.cli import main; main()", *args], cwd=cwd,
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "TURNBENCH_STATE_DIR": str(cwd / "state"), **(env or {})})
        return Outcome(done.returncode, done.stderr, done.stdout)
    from turnbench.cli import main

    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, args, env=env)
    finally:
        os.chdir(old)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # what a user would have seen: a traceback
        return Outcome(1, "Traceback (most recent call last):\n" + repr(result.exception))
    return Outcome(result.exit_code, result.stderr, result.stdout)


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
            name: str = "res", measures: tuple[str, ...] = ()) -> Path:
    """A real results directory of fixtures/small (scored from a one-passage run, with the extra ``measures``),
    optionally forged."""
    from turnbench.results.directory import write_digest

    src = w / f"{name}-src"
    src.mkdir()
    args = score(src, None, None, *(x for m in measures for x in ("--measure", m)))
    args[args.index("--out") + 1] = str(w / name)
    out = run(args, w)
    assert out.code == 0, out.stderr
    if change is not None:
        path = w / name / "metrics.json"
        doc = json.loads(path.read_text())
        replaced = change(doc)
        forged = doc if replaced is None else replaced
        path.write_text(json.dumps(forged, allow_nan=True))
        if rehash_digest:
            if isinstance(forged, dict):  # metrics.md made again from the forged document, as a forger would
                from turnbench.render.markdown import render_metrics_md

                (w / name / "metrics.md").write_text(render_metrics_md(from_tree(forged)))
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
    absent: tuple[str, ...] = ()  # text that must not appear in what was printed (a password, say)
    kept: tuple[str, ...] = ()  # files (relative to the work dir) whose bytes must be unchanged afterwards
    env: tuple[tuple[str, str], ...] = ()  # environment the command runs with
    says: str = ""  # a regular expression a line of what it printed must match (what a case that succeeds says)
    same: tuple[tuple[str, str], ...] = ()  # pairs of files (relative to the work dir) that must hold the same bytes

    def held(self, out: Outcome) -> bool:
        return not self.says or re.search(self.says, out.stdout + "\n" + out.stderr, re.M) is not None


def _holding(w: Path, name: str) -> Path:
    """Hold an advisory lock on the state directory's ``name`` as another turnbench process would (the kernel sees
    two open file descriptions): kept open until the test process exits."""
    import fcntl

    (w / "state").mkdir(exist_ok=True)
    fd = os.open(w / "state" / name, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    _HELD.append(fd)
    return w


_HELD: list[int] = []


def _arm_file(w: Path, body: str, name: str = "mine", extra: str = "") -> Path:
    return _file(w, f"{name}.toml", f"name = {json.dumps(name)}\nbody = '''{body}'''\n{extra}")


def _bench_arm(w: Path, path: Path, *extra: str) -> list[str]:
    return ["bench", "--corpus", str(SMALL), "--arm-file", str(path), "--out", str(w / "out"), *extra]


def _turn_edit(text: str) -> Callable[[Path], None]:
    """The first turn's text replaced, written with JSON escapes (a lone surrogate has no UTF-8 bytes of its own)."""
    def edit(root: Path) -> None:
        rows = [json.loads(x) for x in part(root).read_text().splitlines()]
        rows[0]["turns"][0]["text"] = text
        part(root).write_text("".join(json.dumps(r, ensure_ascii=True) + "\n" for r in rows))
    return edit


def _seed_set(w: Path, labels: tuple[int, ...], change: Callable[[dict], None] | None = None) -> Path:
    """A set of seed-<S>/ results directories, each a real results directory of fixtures/small (seed 20261130)."""
    root = w / "set"
    root.mkdir()
    for i, label in enumerate(labels):
        made = results(w, change if i else None, name=f"r{label}")
        made.rename(root / f"seed-{label}")
    return root


def _fuse_files(w: Path, a: str, b: str) -> list[str]:
    pid = first_passage()
    return ["fuse", str(trec(w, f"q00001 Q0 {pid} 1 {a} x\n")), str(_file(w, "b.trec", f"q00001 Q0 {pid} 1 {b} x\n")),
            "--method", "minmax", "--passages", str(inventory(w)), "--out", str(w / "fused")]


PAINLESS = ('{"query": {"script_score": {"query": {"match": {"content": {{query_text}}}}, '
            '"script": {"source": "Math.random()"}}}}')
LOOKUP = ('{"query": {"bool": {"must": [{"match": {"content": {{query_text}}}}], "filter": [{"terms": {"meeting_id": '
          '{"index": "products", "id": "1", "path": "ids"}}}]}}}')
PLAIN = '{"query": {"match": {"content": {{query_text}}}}}'

# -- reuse: what a stack holds is kept only when its content proves it (issue 40) -----------------------------------
# These rows need real servers: one embedded stack for all of them, started at the first (under pytest, the
# integration tests' session stack), recorded in each row's state directory as an external stack.

_SHARED: list[Any] = []


def shared_stack() -> Any:
    if not _SHARED:
        import atexit

        from turnbench.stack import open_stack

        opened = open_stack("embedded")
        _SHARED.append(opened.__enter__())
        atexit.register(opened.__exit__, None, None, None)
    return _SHARED[0]


def _on_stack(w: Path) -> Any:
    """The shared stack, recorded as ``w``'s current stack (as `stack up --provider external` records one); one whose
    endpoints carry a password (the docker leg's) is not recorded: ``stack_env`` gives them to each command."""
    s = shared_stack()
    if stack_env():
        return s
    out = run(["stack", "up", "--provider", "external", "--opensearch-url", s.opensearch_url, "--postgres-dsn",
               s.postgres_dsn], w)
    assert out.code == 0, out.stderr
    return s


def stack_env() -> dict[str, str]:
    """The shared stack's endpoints as the environment names them, when they cannot be recorded (a password)."""
    from turnbench.stack.external import redact

    if not _SHARED:
        return {}
    s = _SHARED[0]
    if redact(s.opensearch_url) == s.opensearch_url and redact(s.postgres_dsn) == s.postgres_dsn:
        return {}
    return {"TURNBENCH_OPENSEARCH_URL": s.opensearch_url, "TURNBENCH_POSTGRES_DSN": s.postgres_dsn}


def _client(w: Path) -> Any:
    from turnbench.stack.clients import opensearch_client

    return opensearch_client(_on_stack(w))


def _alias(w: Path, alias: str, target: str, *, turnbench_made: bool = False) -> list[str]:
    """An alias of someone else's index, or (``turnbench_made``) of an index a turnbench load made."""
    client = _client(w)
    if turnbench_made:
        assert run(["load", "--corpus", str(SMALL), "--index", target], w, stack_env()).code == 0
    elif not client.indices.exists(index=target):
        client.indices.create(index=target, body={"settings": {"number_of_replicas": 0}})
        client.index(index=target, id="theirs", body={"note": "not turnbench's"}, params={"refresh": "true"})
    client.indices.put_alias(index=target, name=alias)
    return ["load", "--corpus", str(SMALL), "--index", alias]


def _data_stream(w: Path, name: str) -> list[str]:
    client = _client(w)
    if not client.indices.exists(index=name):
        client.indices.put_index_template(name=f"{name}-template", body={
            "index_patterns": [f"{name}*"], "data_stream": {}, "template": {"settings": {"number_of_replicas": 0}}})
        client.indices.create_data_stream(name=name)
        client.index(index=name, body={"@timestamp": "2026-01-01T00:00:00Z", "note": "theirs"},
                     params={"refresh": "true", "op_type": "create"})
    return ["load", "--corpus", str(SMALL), "--index", name]


def _loaded_then(w: Path, index: str, tamper: Callable[[Any, Any], None]) -> list[str]:
    """``load`` run once into ``index`` (so ``w``'s state directory records it), then the stack tampered with; the
    same ``load`` again is the row's command."""
    from turnbench.stack.clients import opensearch_client

    s = _on_stack(w)
    args = ["load", "--corpus", str(SMALL), "--index", index]
    out = run(args, w, stack_env())
    assert out.code == 0, out.stderr
    tamper(s, opensearch_client(s))
    return args


def _edit_segment(stack: Any, _client: Any) -> None:
    from turnbench.loading.tables import SCHEMA
    from turnbench.stack.clients import postgres_connect

    with postgres_connect(stack) as conn, conn.cursor() as cur:
        cur.execute(f"UPDATE {SCHEMA}.segments SET text = '' WHERE (meeting_id, turn_index) = (SELECT meeting_id, "
                    f"turn_index FROM {SCHEMA}.segments ORDER BY meeting_id, turn_index LIMIT 1)")


def _meta_claims(index: str) -> Callable[[Any, Any], None]:
    def tamper(_stack: Any, client: Any) -> None:
        from turnbench.loading import index as ix

        ix.put_marker(client, index, {**(ix.index_marker(client, index) or {}), "verified": True})
    return tamper


def _rewritten(index: str) -> Callable[[Any, Any], None]:
    def tamper(_stack: Any, client: Any) -> None:
        from tests.integration.loading.tamper import blank_meeting, first_meeting, rewrite_every_document

        rewrite_every_document(client, index, blank_meeting(first_meeting(client, index)))
    return tamper


REUSE = [
    Case("reuse", "an alias of someone else's index in the index's place", lambda w: _alias(
        w, "tb-faults-alias", "faults-theirs"), 3, r"ForeignIndex: 'tb-faults-alias' is an alias \(of faults-theirs\)"),
    Case("reuse", "an alias of a turnbench index in the index's place", lambda w: _alias(
        w, "tb-faults-alias-ours", "tb-faults-aliased", turnbench_made=True), 3,
         r"ForeignIndex: 'tb-faults-alias-ours' is an alias \(of tb-faults-aliased\)"),
    Case("reuse", "a data stream in the index's place", lambda w: _data_stream(w, "tb-faults-stream"), 3,
         r"ForeignIndex: 'tb-faults-stream' is a data stream"),
    Case("reuse", "a segment's text edited in PostgreSQL", lambda w: _loaded_then(w, "tb-faults-rows", _edit_segment),
         0, "", says=r"^load: loaded .* \(PostgreSQL table turnbench\.segments is not what the load wrote\)$"),
    Case("reuse", "the index's _meta made to claim more", lambda w: _loaded_then(
        w, "tb-faults-meta", _meta_claims("tb-faults-meta")), 0, "",
         says=r"^load: loaded .* \(index 'tb-faults-meta''s marker is not the one the state directory's record "
              r"holds\)$"),
    Case("reuse", "every document rewritten, one meeting blanked, statistics matching again", lambda w: _loaded_then(
        w, "tb-faults-rewritten", _rewritten("tb-faults-rewritten")), 0, "",
         says=r"^load: loaded .* \(index 'tb-faults-rewritten''s documents do not read back as the load wrote them"),
]

ROUND3 = [
    # outputs never clobber inputs -------------------------------------------------------------------------------
    Case("outputs", "compare --out into a results directory it reads", lambda w: ["compare", str(results(
        w, name="a")), str(results(w, name="b")), "--out", str(w / "b" / "metrics.md")], 2,
         r"BadInput: --out .*metrics.md (is|lies inside) .*b, which this command reads", kept=("b/metrics.md",)),
    Case("outputs", "compare --json onto its own --out", lambda w: ["compare", str(results(w, name="a")), str(
        results(w, name="b")), "--out", str(w / "x.md"), "--json", str(w / "x.md")], 2,
         r"--json .*x.md is also --out", ("x.md",)),
    Case("outputs", "compare --json onto its own --html", lambda w: ["compare", str(results(w, name="a")),
                                                                     str(results(w, name="b")), "--out",
                                                                     str(w / "x.md"), "--html", str(w / "x.html"),
                                                                     "--json", str(w / "x.html")], 2,
         r"--json .*x.html is also --html", ("x.md", "x.html")),
    Case("outputs", "agreement --out into another results directory", lambda w: ["agreement", str(results(
        w, name="a")), str(results(w, name="b")), str(results(w, name="c")), "--out",
        str(results(w, name="d") / "metrics.md")], 2, r"lies inside the results directory", kept=("d/metrics.md",)),
    Case("outputs", "report --out over a file of the results it draws", lambda w: ["report", str(results(
        w, name="a")), "--out", str(w / "a" / "report.html")], 2, r"which this command reads",
         kept=("a/report.html",)),
    Case("outputs", "score --out inside the corpus", lambda w: [*score(w)[:-1], str(corpus(w) / "results")], 2,
         r"lies inside .*corpus", ("corpus/results",)),
    Case("outputs", "bench --out a corpus", lambda w: ["bench", "--corpus", str(SMALL), "--arm", "bm25", "--out",
                                                       str(corpus(w))], 2, r"lies inside the corpus"),
    # no secret printed, none written ----------------------------------------------------------------------------
    Case("secrets", "a password in the OpenSearch URL of an external stack", lambda w: ["run", "--corpus", str(SMALL),
                                                                                      "--arm", "bm25", "--out",
                                                                                      str(w / "out")], 3,
         r"StackStateError: .*http://admin:\*\*\*@127.0.0.1:9", ("out",), absent=("s3cret",),
         env=(("TURNBENCH_OPENSEARCH_URL", "http://admin:s3cret@127.0.0.1:9"),
              ("TURNBENCH_POSTGRES_DSN", "postgresql://u:pw@127.0.0.1:9/db"))),
    Case("secrets", "stack up asked to record a password", lambda w: ["stack", "up", "--provider", "external",
                                                                    "--opensearch-url",
                                                                    "http://admin:s3cret@127.0.0.1:9",
                                                                    "--postgres-dsn", "host=127.0.0.1 port=9"], 2,
         r"BadInput: .*no password is written to a file", ("state/stack.json",), absent=("s3cret",)),
    # arms are confined data -------------------------------------------------------------------------------------
    Case("arms", "a painless script", lambda w: _bench_arm(w, _arm_file(w, PAINLESS)), 2,
         r"BadInput: .*mine.toml: .*runs a painless script", ("out",)),
    Case("arms", "a terms lookup into another index", lambda w: _bench_arm(w, _arm_file(w, LOOKUP)), 2,
         r"terms lookup", ("out",)),
    Case("arms", "an aggregation beside the query", lambda w: _bench_arm(w, _arm_file(
        w, PLAIN[:-1] + ', "aggs": {"a": {"terms": {"field": "meeting_id"}}}}')), 2, r"may hold only query", ("out",)),
    Case("arms", "an RRF constant where the server ignores it", lambda w: _bench_arm(w, _arm_file(
        w, '{"query": {"hybrid": {"queries": [{"match": {"content": {{query_text}}}}, {"match": {"title": '
           '{{query_text}}}}]}}}', extra='[pipeline]\nbody = \'{"phase_results_processors": [{"score-ranker-'
                                         'processor": {"combination": {"technique": "rrf", '
                                         '"rank_constant": 20}}}]}\'\n')),
         2,
         r"where OpenSearch 2.19.6 ignores it", ("out",)),
    Case("arms", "a name with a trailing newline", lambda w: _bench_arm(w, _file(
        w, "evil.toml", 'name = "evil\\n"\nbody = \'' + PLAIN + '\'\n')), 2, r"name 'evil\\n' must be", ("out",)),
    Case("arms", "a deeply nested TOML arm file", lambda w: _bench_arm(w, _file(
        w, "deep.toml", f"name = \"deep\"\nbody = '{PLAIN}'\nz = " + "[" * 50_000 + "]" * 50_000 + "\n")), 2,
         r"BadInput: .*deep.toml: ", ("out",)),
    Case("arms", "a deeply nested JSON body", lambda w: _bench_arm(w, _arm_file(
        w, '{"query": ' + '{"bool": {"must": [' * 40 + '{"match": {"content": {{query_text}}}}' + "]}}" * 40 + "}")),
         2, r"nested deeper than 64 levels", ("out",)),
    Case("names", "--control-name with a trailing newline", lambda w: ["bench", "--corpus", str(SMALL), "--arm",
                                                                      "bm25", "--out", str(w / "out"),
                                                                      "--control-name", "x\n"], 2,
         r"--control-name 'x\\n' cannot name a directory", ("out",)),
    Case("names", "--control-name with a slash", lambda w: ["bench", "--corpus", str(SMALL), "--arm", "bm25", "--out",
                                                            str(w / "out"), "--control-name", "../up"], 2,
         r"cannot name a directory", ("out", "up")),
    # claims are re-derived ----------------------------------------------------------------------------------------
    Case("claims", "values, rows and digest rewritten together", lambda w: ["compare", str(results(w, name="a")), str(
        results(w, _forged_consistently, name="b")), "--gate"], 3,
         r"ResultsIntegrityError: .*query q00001 MRR: metrics.json says 0.5, its exported qrels and run give"),
    Case("claims", "the evidence deleted and the digest rewritten", lambda w: ["report", str(_without(
        results(w, name="a"), "run.passages.trec")), "--out", str(w / "r.html")], 3,
         r"metrics.json records run.passages.trec, which is not here", ("r.html",)),
    *(Case("claims", f"{n} edited and claim.sha256 rewritten", lambda w, n=n: ["compare", str(results(
        w, name="a")), str(_edited(results(w, name="b"), n))], 3, rf"ResultsIntegrityError: .*{re.escape(n)} is not "
        r"the file metrics.json records|ResultsIntegrityError: .*metrics.md is not what metrics.json gives")
      for n in ("metrics.md", "report.html", "passages.jsonl", "run.raw.trec")),
    # both sides hold the same gold ----------------------------------------------------------------------------------
    Case("gold", "judgements forged consistently (values, rows, digests)", lambda w: ["compare", str(results(
        w, name="a")), str(forge_qrels(results(w, name="b"))), "--gate"], 3,
         r"DifferentGold: the baseline and the candidate hold different gold: query q\d+: passage \S+ is graded"),
    Case("gold", "judgements forged consistently, --corpus", lambda w: ["compare", str(results(w, name="a")), str(
        forge_qrels(results(w, name="b"))), "--gate", "--corpus", str(SMALL)], 3,
         r"DifferentGold: .*b: query q\d+: passage \S+ is graded \d here and \d by the corpus"),
    Case("gold", "judgements forged alike on both sides, --corpus", lambda w: ["compare", str(forge_qrels(results(
        w, name="a"))), str(forge_qrels(results(w, name="b"))), "--corpus", str(SMALL)], 3,
         r"DifferentGold: .*a: query q\d+: passage \S+ is graded \d here and \d by the corpus"),
    Case("gold", "an aggregation question's gold forged consistently (6 against 0)", lambda w: ["compare", str(
        _answered(w, "a")), str(forge_answer_gold(_answered(w, "b"), 6)), "--gate"], 3,
         r"DifferentGold: .*query q\d+: its gold answer \(metrics.json answers\) differ"),
    Case("gold", "an aggregation gold forged alike on both sides, --corpus", lambda w: ["compare", str(
        forge_answer_gold(_answered(w, "a"), 6)), str(forge_answer_gold(_answered(w, "b"), 6)), "--corpus", str(SMALL)],
         3, r"DifferentGold: .*a: query q\d+: its gold answer \(metrics.json answers\) is not the corpus's"),
    Case("gold", "an untouched pair with its answers, --corpus", lambda w: ["compare", str(_answered(w, "a")), str(
        _answered(w, "b")), "--gate", "--corpus", str(SMALL)], 0, r""),
    Case("seeds", "seed-8 holding another seed's results", lambda w: ["compare", str(_seed_set(w, (8,))), str(
        _seed_set_b(w, (8,)))], 3, r"seed-8/ holds results of corpus .*whose seed is 20261130, not 8"),
    Case("seeds", "one corpus under two seeds", lambda w: ["compare", str(_seed_set(
        w, (20261130, 7), lambda d: d["provenance"]["corpus"].update(seed=7))), str(_seed_set_b(w, (20261130,)))], 3,
         r"seed-7/ and seed-20261130/ hold results of one corpus|seed sets differ"),
    # bounded parses -------------------------------------------------------------------------------------------------
    Case("parse", "compare --seed -1", lambda w: ["compare", str(results(w, name="a")), str(results(w, name="b")),
                                                  "--seed", "-1"], 2, r"Invalid value for '--seed'"),
    Case("parse", "fuse --method minmax with scores near the float limits", lambda w: _fuse_files(
        w, "1.7e308", "-1.7e308"), 0, r"", ("fused/.partial",)),
    Case("parse", "a lone surrogate in a turn", lambda w: ["validate", str(corpus(w, _turn_edit("a \ud800 b")))], 3,
         r"CorpusIntegrityError: .*line 1 is not a format-v1 meeting .*turns\[0\].text holds a lone surrogate"),
    Case("parse", "a NUL byte in a turn", lambda w: ["validate", str(corpus(w, _turn_edit("a \u0000 b")))], 3,
         r"turns\[0\].text holds a NUL character"),
    Case("parse", "measure --against something that is not a corpus", lambda w: [
        "measure", str(SMALL), "--against", str(_file(w, "x/notes.txt", "x").parent)], 2, r"BadInput: .*not a corpus"),
    # one stack per state directory ---------------------------------------------------------------------------------
    Case("locks", "stack up while another stack up is at work", lambda w: _holding(w, "stack.lock") and [
        "stack", "up", "--provider", "embedded"], 3, r"StackStateError: another `turnbench stack up` or `stack down`",
         ("state/stack.json",)),
    Case("locks", "load while a bench holds the recorded stack", lambda w: _holding(w, "stack.use") and [
        "load", "--corpus", str(SMALL)], 3, r"StackStateError: another turnbench command is using the stack"),
    Case("locks", "a failed start is one line, the server's log only under --debug", lambda w: [
        "stack", "up", "--provider", "embedded", "--timeout", "0.1"], 3,
         # which server gives up first depends on the machine's load (PostgreSQL has its own 60 s): either is one line
         r"StackStartError: (OpenSearch did not turn yellow within 0.1 s|PostgreSQL did not accept connections within "
         r"\d+ s); log kept at ", ("state/stack.json",),
         env=(("DOCKER_HOST", "unix:///nonexistent/docker.sock"),)),
    # caches -----------------------------------------------------------------------------------------------------------
    Case("cache", "a user cache that cannot be made", lambda w: ["jars"], 2,
         r"BadInput: .*the user cache cannot be made there", env=(("TURNBENCH_CACHE_DIR", "/proc/1/turnbench"),)),
    Case("cache", "embeddings rewritten with recomputed digests", lambda w: _poisoned_embeddings(w), 0, r"",
         env=(("TURNBENCH_CACHE_DIR", "cache"),), same=(("clean.json", "corpus/stats.json"),)),
    # engine code is fenced: it cannot end, interrupt or fork a bench, nor hand it a number no float holds -------------
    Case("engines", "the factory raises SystemExit(0)", lambda w: _bench_engine(w, factory="raise SystemExit(0)"), 2,
         r"EngineFailed: --engine .*: the factory raised SystemExit: 0 \(engine code may not end", ("out",)),
    Case("engines", "importing the module raises KeyboardInterrupt", lambda w: _bench_engine(
        w, top="raise KeyboardInterrupt"), 2, r"EngineFailed: --engine .*: importing raised KeyboardInterrupt",
         ("out",)),
    Case("engines", "reading its name raises GeneratorExit", lambda w: _bench_engine(
        w, body="@property\n    def name(self):\n        raise GeneratorExit"), 2,
         r"EngineFailed: --engine .*: reading the protocol's attributes raised GeneratorExit", ("out",)),
    Case("engines", "the factory forks, the child stays", lambda w: _bench_engine(
        w, factory="import os, time\n    if os.fork() == 0:\n        time.sleep(600)"), 2,
         r"EngineFailed: --engine .*: the factory forked turnbench's process \(pid \d+: killed\)", ("out",)),
    Case("engines", "SystemExit(0) in search", lambda w: _bench_engine(w, search="raise SystemExit(0)"), 2,
         r"EngineFailed: engine e: search raised SystemExit: 0", ("out/e",)),
    Case("engines", "a score of 10**400", lambda w: _bench_engine(
        w, search="return [[(self.ids[0], 10 ** 400)] for q in questions]"), 2,
         r"EngineFailed: engine e: question q00001: hit 1 .* beyond a float's range", ("out/e",)),
]

ENGINE = """{top}
class E:
    name, version, config = "e", "1", {{}}
    {body}

    def index(self, passages, context):
        self.ids = [p.id for p in passages]

    def search(self, questions, depth):
        {search}
        return [[(p, 1.0) for p in self.ids[:3]] for q in questions]


def engine():
    {factory}
    return E()
"""


def _bench_engine(w: Path, *, top: str = "", body: str = "", search: str = "pass", factory: str = "pass"
                  ) -> list[str]:
    """`bench` of a tiny engine module (written into the work dir) on fixtures/small; an engine that gets as far as
    search runs on a stack of its own (embedded: the case's state directory records none)."""
    _file(w, "eng.py", ENGINE.format(top=top, body=body, search=search, factory=factory))
    return ["bench", "--corpus", str(SMALL), "--engine", f"{w / 'eng.py'}:engine", "--answerer", "skip", "--out",
            str(w / "out")]


def _poisoned_embeddings(w: Path) -> list[str]:
    """`measure` (whose surface cosines embed 840 texts of fixtures/small) once on a cache of the work dir's own, its
    stats kept as clean.json (the pinned model files read from the user cache); then 60 of the cache's entries
    swapped for other texts' vectors, each with its digest recomputed as anyone can (sha256 of key and vector).
    Measured again, the stats must be the clean ones."""
    import hashlib

    from turnbench.settings import cache_dir

    (w / "cache").mkdir()
    (w / "cache" / "sha256").symlink_to(cache_dir() / "sha256")  # the model's pinned files: the user's, not fetched
    root = corpus(w)
    out = run(["measure", str(root)], w, {"TURNBENCH_CACHE_DIR": str(w / "cache")})
    assert out.code == 0, out.stderr
    (root / "stats.json").rename(w / "clean.json")
    entries = sorted((w / "cache").rglob("*.f32d"))[:60]
    payloads = [e.read_bytes()[:-32] for e in entries]
    for e, payload in zip(entries, payloads[1:] + payloads[:1], strict=True):
        e.write_bytes(payload + hashlib.sha256(e.stem.encode("ascii") + b"\0" + payload).digest())
    return ["measure", str(root)]


def _forged_consistently(doc: dict) -> None:
    """Per-query values and the rows rewritten together (the digest is rewritten by ``results``)."""
    block = doc["retrieval"]
    block["per_query"][0]["values"]["MRR"] = 0.5 if block["per_query"][0]["values"]["MRR"] != 0.5 else 0.25
    block["rows"] = rows_of(block["rows"][0]["corpus"], block["per_query"], block["measures"],
                             {r["class"]: r["dropped_unjudgeable"] for r in block["rows"] if r["class"] != "all"})
    for key in ("surface", "domain"):  # every grouping of the same rows, so only the exported files contradict them
        for value, rows in block.get(f"rows_by_{key}", {}).items():
            block[f"rows_by_{key}"][value] = rows_of(
                rows[0]["corpus"], [r for r in block["per_query"] if r.get(key) == value], block["measures"],
                {r["class"]: r["dropped_unjudgeable"] for r in rows if r["class"] != "all"})


def _edited(d: Path, name: str) -> Path:
    """``name`` edited in results directory ``d`` and claim.sha256 written again, as a forger would."""
    from turnbench.results.directory import write_digest

    path = d / name
    data = path.read_bytes()
    path.write_bytes(data.replace(b"1", b"2", 1) if b"1" in data else data + b"\n")
    write_digest(d)
    return d


def _answered(w: Path, name: str) -> Path:
    """A real results directory of fixtures/small with its answers block: every aggregation question answered with
    its gold (scored through the library: the answer engine needs a stack)."""
    from tests.unit.harness.helpers import score as score_run
    from turnbench.corpus.format import open_corpus
    from turnbench.harness.answers import score_answers
    from turnbench.passages import read_passages
    from turnbench.pipeline.answering import attach
    from turnbench.rankings import RankedPassage
    from turnbench.results.directory import write_results
    from turnbench.submissions import SubmittedAnswer

    small = open_corpus(SMALL)
    (w / f"{name}-src").mkdir()
    passages = read_passages(inventory(w / f"{name}-src"))
    asked = [q for q in small.queries() if q.scored_on == "answer"]
    given = [SubmittedAnswer(q.id, q.answer, "gold", {}) for q in asked]
    res = score_run(small, passages, [RankedPassage("q00001", first_passage(), 1, 1.0)])
    return write_results(w / name, attach(res, [score_answers(asked, given, corpus=small.id)]))


def _without(d: Path, name: str) -> Path:
    from turnbench.results.directory import write_digest

    (d / name).unlink()
    write_digest(d)
    return d


def _seed_set_b(w: Path, labels: tuple[int, ...]) -> Path:
    root = w / "set-b"
    root.mkdir()
    for label in labels:
        results(w, name=f"b{label}").rename(root / f"seed-{label}")
    return root


def _per_query(value: float) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        doc["retrieval"]["per_query"][0]["values"]["MRR"] = value
    return change


def _dated(clause: str) -> str:
    """A bench body whose query matches the question and also holds ``clause`` (a should clause)."""
    return ('{"query": {"bool": {"must": [{"match": {"content": {{query_text}}}}], "should": [' + clause + ']}}}')


LONG = "n" * 300


def _link(w: Path, name: str, target: str) -> Path:
    (w / target).mkdir()
    (w / name).symlink_to(target)
    return w / name


def _qmsum_src(w: Path, edit: Callable[[Path], None]) -> str:
    src = w / "qmsum"
    shutil.copytree(REPO / "tests" / "fixtures" / "qmsum" / "ALL", src)
    edit(src)
    return str(src)


def _nul_turn(src: Path) -> None:
    path = src / "train" / "ES2002a.json"
    d = json.loads(path.read_text())
    d["meeting_transcripts"][0]["content"] = "a \u0000 b"
    path.write_text(json.dumps(d))


def _meetingqa_without_turns(w: Path) -> str:
    src = w / "test"
    shutil.copytree(REPO / "tests" / "fixtures" / "meetingqa" / "ProcessedTranscripts" / "Annotated-AMI-QA" / "test",
                    src)
    q = {"possible": True, "meaningful": True, "questionContext": [], "combinedQuestion": []}
    sentences = [{"displayText": t, "speakerFaceId": str(n), "sentenceId": n, "question": {**q, "answerSpan": [1 - n]}}
                 for n, t in enumerate(["Why?", "Why not?"])]
    (src / "EN2098c.json").write_text(json.dumps({"displayText": "Why? Why not?", "sentences": sentences}))
    return str(src)


def _released_qmsum(w: Path, edit: Callable[[Path], None]) -> list[str]:
    """A copy of the hand-made QMSum tree, its test-only release recorded before ``edit`` changes the copy."""
    from tests.unit.corpus.helpers import release_file

    src = w / "qmsum"
    shutil.copytree(REPO / "tests" / "fixtures" / "qmsum" / "ALL", src)
    release = release_file(w / "release.json", "qmsum", {f"{p.parent.name}/{p.name}": p for p in src.glob("*/*.json")})
    edit(src)
    return [str(src), "--release", str(release)]


def _one_byte(src: Path) -> None:
    path = src / "train" / "ES2002a.json"
    data = bytearray(path.read_bytes())
    data[data.index(b'"content": "') + 12] ^= 0x20
    path.write_bytes(bytes(data))


RELEASES = [
    # real corpora verified against their releases (issue 46 item 3) -----------------------------------------------
    Case("releases", "a QMSum file one byte off its release", lambda w: [
        "import", "qmsum", *_released_qmsum(w, _one_byte), "--out", str(w / "out")], 3,
         r"CorpusIntegrityError: train/ES2002a\.json: sha256 \w+… is not release test/hand-made@0+'s", ("out",)),
    Case("releases", "a file the release does not list", lambda w: [
        "import", "qmsum", *_released_qmsum(w, lambda s: shutil.copy(s / "test" / "covid_1.json",
                                                                      s / "test" / "covid_9.json")),
        "--out", str(w / "out")], 3, r"CorpusIntegrityError: test/covid_9\.json: not a file of release", ("out",)),
    Case("releases", "a split directory missing a file of the release", lambda w: [
        "import", "qmsum", *_released_qmsum(w, lambda s: (s / "train" / "Bmr001.json").unlink()),
        "--out", str(w / "out")], 3, r"CorpusIntegrityError: train/Bmr001\.json: missing from the directory train/",
         ("out",)),
    Case("releases", "hand-made files against the pinned QMSum release", lambda w: [
        "import", "qmsum", str(REPO / "tests" / "fixtures" / "qmsum" / "ALL"), "--out", str(w / "out")], 3,
         r"CorpusIntegrityError: .* release Yale-LILY/QMSum@83d7768c1f2b", ("out",)),
    Case("releases", "hand-made files against the pinned MeetingQA release", lambda w: [
        "import", "meetingqa", str(REPO / "tests" / "fixtures" / "meetingqa"), "--out", str(w / "out")], 3,
         r"CorpusIntegrityError: .* release adobe-research/meetingqa@5e3d1fbf4fef", ("out",)),
    Case("releases", "--allow-unverified imports an edited file, marked", lambda w: [
        "import", "qmsum", *_released_qmsum(w, _one_byte), "--allow-unverified", "--out", str(w / "out")], 0, r"^$",
         says=r"UNVERIFIED against test/hand-made@0+ \(train/ES2002a\.json: sha256"),
]


def _tiered_results(w: Path, tier: str) -> str:
    from tests.unit.harness.helpers import ranked_results_dir

    return str(ranked_results_dir(w / f"tier-{tier}", {f"q{i:02d}": ("lookup", 1 + i % 3) for i in range(12)},
                                  tier=tier))


def _tiered_corpus(w: Path, tier: str) -> str:
    from tests.unit.harness.helpers import small_world, write_corpus

    return str(write_corpus(w / f"corpus-{tier}", *small_world(), tier=tier))


TIERS = [
    # licence tiers acted on (issue 46 item 2) ----------------------------------------------------------------------
    Case("tiers", "report --publishable of a tier B result", lambda w: [
        "report", _tiered_results(w, "B"), "--out", str(w / "page.html"), "--publishable"], 2,
         r"NotPublishable: .*licence tier B \(non-commercial: internal use only\)", ("page.html",)),
    Case("tiers", "compare --publishable with a tier C side", lambda w: [
        "compare", _tiered_results(w, "A"), _tiered_results(w, "C"), "--publishable", "--json",
        str(w / "cmp.json")], 2, r"NotPublishable: .*licence tier C", ("cmp.json",)),
    Case("tiers", "export beir --publishable of a tier B corpus", lambda w: [
        "export", "beir", _tiered_corpus(w, "B"), "--out", str(w / "beir"), "--publishable"], 2,
         r"NotPublishable: .*licence tier B", ("beir",)),
]


ROUND4_H3 = [
    # importers write only corpora turnbench reads ------------------------------------------------------------------
    Case("imports", "a QMSum meeting id with a space", lambda w: ["import", "qmsum", _qmsum_src(
        w, lambda s: (s / "train" / "Bmr001.json").rename(s / "train" / "Bmr 001.json")), "--out", str(w / "out"),
        "--allow-unverified"], 2,
         r"BadInput: train/Bmr 001.json: meeting 'Bmr 001': meeting id 'Bmr 001' holds ' '", ("out",)),
    Case("imports", "a NUL in a QMSum turn", lambda w: ["import", "qmsum", _qmsum_src(w, _nul_turn), "--out",
                                                        str(w / "out"), "--allow-unverified"], 2,
         r"train/ES2002a.json: meeting 'ES2002a': turns\[0\].text holds a NUL character", ("out",)),
    Case("imports", "a MeetingQA meeting left without turns", lambda w: [
        "import", "meetingqa", _meetingqa_without_turns(w), "--out", str(w / "out"), "--allow-unverified"], 2,
         r"test/EN2098c.json: meeting 'EN2098c': meeting EN2098c has no turns", ("out",)),
    # a sweep is staged: one ended inside its staging leaves neither OUT nor the staging ---------------------------
    Case("sweep", "a sweep whose stack cannot be reached", lambda w: [
        "sweep", "--corpus", str(SMALL), "--arm", "bm25", "--max-words", "30,200", "--provider", "external",
        "--out", str(w / "out")], 3, r"StackStartError: OpenSearch at .* does not answer", ("out",),
         env=(("TURNBENCH_OPENSEARCH_URL", "http://127.0.0.1:9"), ("TURNBENCH_POSTGRES_DSN", "host=127.0.0.1 port=9"))),
    # names the file system refuses are bad input; outputs are only what was named -----------------------------------
    Case("names", "score --out of a 300-byte name", lambda w: [*score(w)[:-1], str(w / LONG)], 2,
         r"BadInput: --out .*a name of 300 bytes, longer than the file system takes \(255\)"),
    Case("names", "compare --out of a 300-byte name", lambda w: ["compare", str(results(w, name="a")), str(results(
        w, name="b")), "--out", str(w / f"{LONG}.md")], 2, r"BadInput: --out .*a name of 303 bytes"),
    Case("names", "bench --out of a 300-byte name", lambda w: ["bench", "--corpus", str(SMALL), "--arm", "bm25",
                                                               "--out", str(w / LONG)], 2,
         r"BadInput: --out .*a name of 300 bytes"),
    # exports other tools read (issue 45 item 4): `export run` reads a run and writes one new file, nothing else -----
    Case("exports", "export run of a results directory whose scored run was edited", lambda w: _export_run(
        w, _tampered_run(results(w))), 3, r"ResultsIntegrityError: .*run\.passages\.trec does not match its sha256",
         ("run.json",)),
    Case("exports", "export run --out over an existing file", lambda w: _export_run(
        w, results(w), out=_file(w, "run.json", "mine")), 2, r"BadInput: --out .*run\.json exists",
         kept=("run.json",)),
    Case("exports", "export run --out inside the results directory it reads", lambda w: _export_run(
        w, results(w), out=w / "res" / "run.json"), 2, r"BadInput: --out .*lies inside", ("res/run.json",)),
    Case("exports", "export run of a run that ranks one passage twice", lambda w: _export_run(w, trec(
        w, f"q00001 Q0 {first_passage(w)} 1 2.0 x\nq00001 Q0 {first_passage(w)} 2 1.0 x\n")), 2,
         r"BadInput: .*ranks .* twice", ("run.json",)),
    Case("exports", "export run --run meetings of a run directory", lambda w: _export_run(
        w, _file(w, "rundir/run.trec", f"q00001 Q0 {first_passage(w)} 1 1.0 x\n").parent, "--run", "meetings"), 2,
         r"BadInput: .*run directory", ("run.json",)),
    Case("exports", "export run of a results directory: its files untouched", lambda w: _export_run(w, results(w)),
         0, r"", kept=("res/run.passages.trec", "res/claim.sha256", "res/metrics.json"), says=r"scores of 1 queries"),
    Case("names", "export beir --out of a 300-byte name", lambda w: ["export", "beir", str(SMALL), "--out",
                                                                     str(w / LONG)], 2,
         r"BadInput: --out .*a name of 300 bytes"),
    Case("names", "score --out a symbolic link to an empty directory", lambda w: [*score(w)[:-1], str(_link(
        w, "out", "empty"))], 2, r"BadInput: .*out is a symbolic link \(to empty\)", ("empty/metrics.json",)),
    Case("outputs", "compare --out x.md beside an x.html nobody named", lambda w: ["compare", str(results(
        w, name="a")), str(results(w, name="b")), "--out", str(_file(w, "x.html", "mine").with_suffix(".md"))], 0, r"",
         kept=("x.html",)),
    Case("outputs", "bench refused after its stack provider was chosen", lambda w: [
        "bench", "--corpus", str(SMALL), "--arm", "bm25", "--out", str(w / "out")], 3,
         r"^turnbench: StackStartError: OpenSearch at .* does not answer", ("out",),
         env=(("TURNBENCH_OPENSEARCH_URL", "http://127.0.0.1:9"), ("TURNBENCH_POSTGRES_DSN", "host=127.0.0.1 port=9"))),
    # the clock and state outside the index are refused ----------------------------------------------------------
    Case("arms", "distance_feature from now", lambda w: _bench_arm(w, _arm_file(w, _dated(
        '{"distance_feature": {"field": "recorded_date", "origin": "now", "pivot": "7d"}}'))), 2,
         r"BadInput: .*mine.toml: .*distance_feature has origin 'now'", ("out",)),
    Case("arms", "query_string with now-400d", lambda w: _bench_arm(w, _arm_file(w, _dated(
        '{"query_string": {"query": "recorded_date:[now-400d TO *]"}}'))), 2,
         r"BadInput: .*query_string.query names now", ("out",)),
    Case("arms", "a gauss decay on a date without an origin", lambda w: _bench_arm(w, _arm_file(
        w, '{"query": {"function_score": {"query": {"match": {"content": {{query_text}}}}, "functions": [{"gauss": '
           '{"recorded_date": {"scale": "30d"}}}]}}}')), 2, r"decays from origin None", ("out",)),
    Case("arms", "a term on a date from now", lambda w: _bench_arm(w, _arm_file(w, _dated(
        '{"term": {"recorded_date": "now/d"}}'))), 2, r"'now/d': date math that moves with the clock", ("out",)),
    Case("arms", "a neural query's cluster model", lambda w: _bench_arm(w, _arm_file(w, _dated(
        '{"neural": {"embedding": {"query_text": {{query_text}}, "model_id": "m1", "k": 5}}}'))), 2,
         r"model deployed on the cluster", ("out",)),
]


# -- decisions (issue 42 item 3): agreement --decisions ----------------------------------------------------------

_ONE_DECISION = '[[decision]]\nname = "d1"\nasks = "swap x for y?"\ncontrol = "x"\ntreatment = "y"\n'


def _arm_results(w: Path, arm: str, corpus_id: str, producer: str, *, rename_query: bool = False) -> Path:
    """fixtures/small's scored results, relabelled as arm ``arm`` on corpus ``corpus_id`` (digest rewritten)."""
    def relabel(doc: dict) -> None:
        doc["provenance"]["arm"] = {"name": arm}
        doc["provenance"]["corpus"].update(id=corpus_id, producer=producer)
        if rename_query:  # one question's row under another id: the class means still hold
            doc["retrieval"]["per_query"][0]["query_id"] = "q-elsewhere"
        sidecar = canonical.pretty(sidecar_of(doc))  # trec.json names the arm: made again, as scoring would
        (w / f"{corpus_id}-{arm}" / "trec.json").write_bytes(sidecar)
        doc["provenance"]["files"]["trec.json"] = hashlib.sha256(sidecar).hexdigest()
    import hashlib

    from turnbench import canonical
    from turnbench.results.claimed import sidecar_of

    return results(w, relabel, name=f"{corpus_id}-{arm}")


def _decision_args(w: Path, *, missing: bool = False, uneven: bool = False, decisions: str = _ONE_DECISION,
                   extra: tuple[str, ...] = ()) -> list[str]:
    dirs = [_arm_results(w, "x", "syn", "turnbench.generator"), _arm_results(w, "y", "syn", "turnbench.generator"),
            _arm_results(w, "x", "real", "turnbench.qmsum")]
    if not missing:
        dirs.append(_arm_results(w, "y", "real", "turnbench.qmsum", rename_query=uneven))
    return ["agreement", "--decisions", str(_file(w, "d.toml", decisions)), *map(str, dirs), *extra]


def _notebook(w: Path, build: str, last: str = "") -> list[str]:
    """A notebook cell: two results scored in memory by ``tests.unit.test_notebook_compare``'s ``build`` (its
    kwargs too), compared by ``turnbench.compare``, never written; ``last``: a line run after, e.g. a print."""
    script = w / "cell.py"
    script.write_text("from pathlib import Path\n\nimport turnbench\n"
                      "from tests.unit import test_notebook_compare as nb\n\n"
                      f"base, cand, kwargs = nb.{build}(Path.cwd())\n"
                      "compared = turnbench.compare(base, cand, resamples=200, **kwargs)\n" + last + "\n")
    return [NOTEBOOK, str(script)]


NOTEBOOK_ROWS = [
    # turnbench.compare() of results in memory: every refusal the files get, the same (issue 45 item 1) ----------
    Case("notebook", "compare of two runs in memory", lambda w: _notebook(
        w, "_same_twice", "print(compared.to_summary(gate=True))"), 0, "", says=r"^Gate: PASS$"),
    Case("notebook", "compare in memory of results on two corpora", lambda w: _notebook(w, "_other_corpus"), 3,
         r"UnpairedComparison: corpora \(id\) differ: baseline 'tiny', candidate 'tiny-2'"),
    Case("notebook", "compare in memory of one corpus id holding other texts", lambda w: _notebook(
        w, "_other_text"), 3, r"StaleBinding: corpus tiny changed .* m1:00000 is bound to different text"),
    Case("notebook", "compare in memory of two relevance policies", lambda w: _notebook(w, "_other_policy"), 3,
         r"UnpairedComparison: relevance policies differ"),
    Case("notebook", "compare in memory of two scopes", lambda w: _notebook(w, "_other_scope"), 3,
         r"UnpairedComparison: scopes differ"),
    Case("notebook", "compare in memory of other query sets", lambda w: _notebook(w, "_other_queries"), 3,
         r"UnpairedComparison: query sets differ .* \(e\.g\. q1\)"),
    Case("notebook", "compare in memory of judgements forged consistently", lambda w: _notebook(
        w, "_forged_one"), 3, r"DifferentGold: the baseline and the candidate hold different gold: query q2"),
    Case("notebook", "compare in memory of judgements forged alike, the corpus named", lambda w: _notebook(
        w, "_forged_both"), 3, r"DifferentGold: the baseline \(results in memory\): query q2: .* judged again"),
    Case("notebook", "compare in memory, publishable, of tier B results", lambda w: _notebook(w, "_tier_b"), 2,
         r"NotPublishable: the baseline \(results in memory\): corpus tiny is licence tier B"),
    Case("notebook", "compare in memory of per-query values edited, rows alike", lambda w: _notebook(
        w, "_values_edited"), 3, r"ResultsIntegrityError: the candidate \(results in memory\): query q2 MRR: "),
    Case("notebook", "compare in memory naming a corpus no side scored", lambda w: _notebook(
        w, "_corpus_of_none"), 2, r"BadInput: corpus tiny-other is not the corpus of any results given"),
]


DECISIONS = [
    Case("decisions", "a decision naming an arm the results lack", lambda w: _decision_args(w, missing=True, extra=(
        "--out", str(w / "v.md"))), 2, r"^turnbench: BadInput: decision d1: no results of arm y on corpus real$",
         ("v.md",)),
    # results that pass the claim check score every question of their corpus, so two sides on different questions
    # reach the CLI only forged, and the claim check refuses them (the library's own refusal: tests/unit/harness/
    # test_decisions.py)
    Case("decisions", "a decision whose two sides scored different questions", lambda w: _decision_args(
        w, uneven=True, extra=("--json", str(w / "v.json"))), 3,
         r"ResultsIntegrityError: .*real-y: q\S+ is judged in the exported passage qrels but has no per-query row",
         ("v.json",)),
    Case("decisions", "a decision without a treatment", lambda w: _decision_args(
        w, decisions=_ONE_DECISION.replace('treatment = "y"\n', "")), 2,
         r"BadInput: .*d.toml: decision 1: missing 'treatment'"),
    Case("decisions", "a deeply nested decisions file", lambda w: _decision_args(
        w, decisions="decision = " + "[" * 50_000 + "]" * 50_000 + "\n", extra=("--out", str(w / "v.md"))), 2,
         r"BadInput: .*d.toml: not TOML this reader can take \(nested too deeply\)", ("v.md",)),
    Case("decisions", "--decisions with --resample meetings", lambda w: _decision_args(
        w, extra=("--resample", "meetings")), 2, r"BadInput: --decisions resamples questions"),
    Case("decisions", "--synthetic without --decisions", lambda w: ["agreement", "--synthetic", "syn", str(results(
        w, name="a")), str(results(w, name="b")), str(results(w, name="c"))], 2,
         r"BadInput: --synthetic names the synthetic corpus of --decisions"),
    Case("decisions", "no generated corpus among the results", lambda w: ["agreement", "--decisions", str(_file(
        w, "d.toml", _ONE_DECISION)), *(str(_arm_results(w, a, c, "turnbench.qmsum")) for c in ("r1", "r2")
                                        for a in "xy")], 2, r"no single generated corpus .*--synthetic ID"),
    Case("decisions", "a verdict table written", lambda w: _decision_args(w, extra=("--out", str(w / "v.md"))), 0,
         r"", says=r"^agree 1 · opposite 0 · synthetic-only 0 · real-only 0"),
]

FTS5_ARM = 'name = "mine"\nengine = "sqlite-fts5"\nbody = "BODY"\n[fts5]\ntokenizer = "TOKENIZER"\ncolumns = COLUMNS\n'


def _fts5(w: Path, body: str = "{{query_terms}}", tokenizer: str = "porter unicode61",
          columns: str = "{ text = 1.0 }") -> Path:
    return _file(w, "mine.toml", FTS5_ARM.replace("BODY", body).replace("TOKENIZER", tokenizer).replace(
        "COLUMNS", columns))


def _qdrant(w: Path, body: str = '{"query": {"text": {{query_text}}}, "using": "bm25"}',
            bm25: str = '{ language = "english" }') -> Path:
    return _file(w, "mine.toml", f'name = "mine"\nengine = "qdrant"\nbody = \'\'\'{body}\'\'\'\n[qdrant]\n'
                                 f"bm25 = {bm25}\n")


FAMILIES = [
    Case("families", "an arm naming an engine turnbench does not know", lambda w: _bench_arm(w, _file(
        w, "mine.toml", 'name = "mine"\nengine = "elasticsearch"\nbody = "{{query_terms}}"\n')), 2,
         r"^turnbench: BadInput: .*mine.toml: engine 'elasticsearch' is not one of opensearch, qdrant, sqlite-fts5$",
         ("out",)),
    Case("families", "an FTS5 body FTS5 cannot parse", lambda w: _bench_arm(w, _fts5(w, body='{{query_terms}} AND (')),
         2, r"BadInput: .*mine.toml: the body is not an FTS5 query", ("out",)),
    Case("families", "an FTS5 body searching a column the table lacks", lambda w: _bench_arm(w, _fts5(
        w, body="title : {{query_terms}}")), 2, r"not an FTS5 query .*no such column: title", ("out",)),
    Case("families", "SQL in the FTS5 tokenizer", lambda w: _bench_arm(w, _fts5(
        w, tokenizer="unicode61'); DROP TABLE passages; --")), 2, r"BadInput: .*tokenizer .* is not", ("out",)),
    Case("families", "a negative bm25() weight", lambda w: _bench_arm(w, _fts5(w, columns="{ text = -1.0 }")), 2,
         r"the weight of text must be a finite number >= 0", ("out",)),
    Case("families", "an FTS5 arm without its query terms", lambda w: _bench_arm(w, _fts5(w, body='\\"budget\\"')),
         2, r"has no \{\{query_terms\}\}", ("out",)),
    Case("families", "a Qdrant request setting the limit turnbench owns", lambda w: _bench_arm(w, _qdrant(
        w, '{"query": {"text": {{query_text}}}, "using": "bm25", "limit": 5}')), 2,
         r"BadInput: .*mine.toml: the request sets limit", ("out",)),
    Case("families", "a Qdrant query on a vector the shard does not declare", lambda w: _bench_arm(w, _qdrant(
        w, '{"query": {{query_vector}}, "using": "dense"}')), 2, r"using 'dense' names no vector", ("out",)),
    Case("families", "a Qdrant arm with a language qdrant-edge lacks", lambda w: _bench_arm(w, _qdrant(
        w, bm25='{ language = "klingon" }')), 2, r"BadInput: .*mine.toml: qdrant-edge refuses the arm", ("out",)),
    Case("families", "a Qdrant RRF weight below zero", lambda w: _bench_arm(w, _qdrant(
        w, '{"prefetch": [{"query": {"text": {{query_text}}}, "using": "bm25", "limit": 10}], '
           '"query": {"rrf": {"k": 60, "weights": [-1]}}}')), 2, r"rrf weights are numbers > 0", ("out",)),
    Case("families", "turnbench run given an FTS5 arm", lambda w: ["run", "--corpus", str(SMALL), "--arm",
                                                                   "fts5-bm25", "--out", str(w / "out")], 2,
         r"BadInput: arm fts5-bm25 runs on sqlite-fts5, not on OpenSearch", ("out",)),
]

TRANSCRIPTS = [
    Case("transcripts", "export transcripts in a format that does not exist", lambda w: [
        "export", "transcripts", str(SMALL), "--format", "docx", "--out", str(w / "out")], 2,
         r"BadInput: Invalid value for '--format'", ("out",)),
    Case("transcripts", "export transcripts into the corpus", lambda w: [
        "export", "transcripts", str(corpus(w)), "--format", "srt", "--out", str(w / "corpus" / "x")], 2,
         r"BadInput: ", ("corpus/x",)),
    Case("transcripts", "import transcripts of a caption without a speaker", lambda w: [
        "import", "transcripts", str(_file(w, "src/m1.vtt", "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nhi\n").parent),
        "--out", str(w / "out")], 2, r"BadInput: .*m1.vtt: cue 1 has no voice span", ("out",)),
    Case("transcripts", "import transcripts of a subtitle running backwards", lambda w: [
        "import", "transcripts", str(_file(w, "src/m1.srt", "1\n00:00:05,000 --> 00:00:01,000\nAnn: hi\n").parent),
        "--out", str(w / "out")], 2, r"m1.srt: cue 1 ends \(1.0\) before it starts \(5.0\)", ("out",)),
    Case("transcripts", "score --hits with a hit that is no span", lambda w: [
        "score", "--corpus", str(SMALL), "--hits", str(_file(w, "hits.jsonl", '{"query": "q00001", "meeting": '
                                                            '"m0001", "start": 9, "end": 1}\n')),
        "--out", str(w / "out")], 2, r"BadInput: .*hits.jsonl: line 1: not a span of a meeting", ("out",)),
    Case("transcripts", "score --hits beside --passages", lambda w: [
        "score", "--corpus", str(SMALL), "--hits", str(_file(w, "hits.jsonl", "")), "--passages",
        str(_file(w, "p.jsonl", "")), "--out", str(w / "out")], 2, r"give --passages and --run, or --hits",
         ("out",)),
    Case("transcripts", "score --hits whose text nobody said", lambda w: [
        "score", "--corpus", str(SMALL), "--hits", str(_file(w, "hits.jsonl", '{"query": "q00001", "meeting": '
                                                            '"m0001", "start": 0, "end": 30, "text": "not said"}\n')),
        "--out", str(w / "out")], 3, r"StaleBinding: ", ("out",)),
    Case("transcripts", "import transcripts of a file whose name is no meeting id", lambda w: [
        "import", "transcripts", str(_file(w, "src/m 1.json", '{"segments": []}').parent), "--out", str(w / "out")],
         2, r"BadInput: .*the file's name is the meeting's id", ("out",)),
]

# -- across snapshots (issue 46 item 1): compare --across-snapshots, reannotate -------------------------------------

def _snapshots(w: Path, *args: str, receipt: Callable[[dict], None] | None = None, query: str = "q01") -> list[str]:
    """``compare BASE CAND --across-snapshots`` of results on two snapshots of one corpus (5 targets changed, 3
    deleted), then ``args``; with ``receipt``, a reannotation receipt of ``query`` changed by it, given as
    --receipts."""
    from tests.unit.harness.helpers import snapshot_pair

    base, cand = snapshot_pair(w)
    extra = list(args)
    if receipt is not None:
        from turnbench.api import reannotate

        doc = json.loads(reannotate(base, cand, [query], by="d", at="2026-12-01"))
        receipt(doc)
        extra += ["--receipts", str(_file(w, "r.json", json.dumps(doc)))]
    return ["compare", str(base), str(cand), *extra]


def _reannotate(w: Path, *args: str) -> list[str]:
    from tests.unit.harness.helpers import snapshot_pair

    base, cand = snapshot_pair(w)
    return ["reannotate", str(base), str(cand), *args, "--out", str(w / "receipt.json")]


def _entry(change: Callable[[dict], object]) -> Callable[[dict], None]:
    """A receipt's every entry changed by ``change``."""
    def edit(doc: dict) -> None:
        for e in doc["reannotations"]:
            change(e)
    return edit


def _without_bindings(w: Path) -> list[str]:
    """Results across snapshots whose baseline has no bindings.jsonl (as results written before bindings were: its
    digests say so)."""
    from tests.unit.harness.helpers import reseal

    args = _snapshots(w, "--across-snapshots")
    (w / "base" / "bindings.jsonl").unlink()
    reseal(w / "base")
    return args


SNAPSHOTS = [
    Case("snapshots", "a receipt whose new digest is not the candidate's binding", lambda w: _snapshots(
        w, "--across-snapshots", "--out", str(w / "c.md"), receipt=_entry(lambda e: e.update(new_sha256="0" * 64))),
         3, r"ReceiptMismatch: receipt .*r.json: query q01's new digest 000000000000… is not the candidate's",
         ("c.md",)),
    Case("snapshots", "a receipt whose new gold is not the candidate's", lambda w: _snapshots(
        w, "--across-snapshots", "--out", str(w / "c.md"), receipt=_entry(lambda e: e["gold"].update(passages={}))),
         3, r"ReceiptMismatch: .*query q01's new gold is not the gold the candidate was judged on", ("c.md",)),
    Case("snapshots", "a receipt of other snapshots", lambda w: _snapshots(
        w, "--across-snapshots", receipt=lambda doc: doc.update(new_snapshot_sha256="a" * 64)), 3,
         r"ReceiptMismatch: receipt .* is for snapshots .* not the compared"),
    Case("snapshots", "a receipt moved onto an unchanged query", lambda w: _snapshots(
        w, "--across-snapshots", receipt=_entry(lambda e: e.update(query="q20"))), 3,
         r"ReceiptMismatch: .*query q20 is unchanged, not changed"),
    Case("snapshots", "receipts without --across-snapshots", lambda w: _snapshots(
        w, "--out", str(w / "c.md"), receipt=lambda doc: None), 2,
         r"BadInput: --receipts is read across snapshots only", ("c.md",)),
    Case("snapshots", "a receipt file that is missing", lambda w: _snapshots(
        w, "--across-snapshots", "--receipts", str(w / "nope.json")), 2, r"BadInput: --receipts .*nope.json: no such"),
    Case("snapshots", "a receipt file that is no receipt", lambda w: _snapshots(
        w, "--across-snapshots", "--receipts", str(_file(w, "x.json", "[1, 2]"))), 2,
         r"BadInput: --receipts .*x.json: not a reannotation receipt"),
    Case("snapshots", "snapshots compared with texts", lambda w: _snapshots(
        w, "--across-snapshots", "--html", str(w / "c.html")), 2,
         r"BadInput: --across-snapshots does not take --html", ("c.html",)),
    Case("snapshots", "snapshots without bindings.jsonl", _without_bindings, 2,
         r"BadInput: .*base: no bindings.jsonl; --across-snapshots classifies each query by its binding"),
    Case("snapshots", "snapshots without --across-snapshots", lambda w: _snapshots(w), 3, r"StaleBinding: "),
    Case("snapshots", "reannotate a deleted query", lambda w: _reannotate(w, "--query", "q07", "--by", "d", "--at",
                                                                         "2026-12-01"), 2,
         r"BadInput: query q07 is deleted: only a target whose text changed", ("receipt.json",)),
    Case("snapshots", "reannotate with a when that is no date", lambda w: _reannotate(
        w, "--query", "q01", "--by", "d", "--at", "now"), 2, r"BadInput: --at 'now': give the date", ("receipt.json",)),
]

# -- an external stack's index written to while a bench ran (issue 46 item 5) -------------------------------------

_INTRUDED = "tb-faults-intruded"


def _written_during_run(w: Path) -> list[str]:
    """bench on the shared stack (recorded as an external one) while another client indexes one more document
    into its index as the run ends: the patch of the run stage fires once, for this index alone."""
    from turnbench.pipeline import bench as pipeline
    from turnbench.stack.clients import opensearch_client

    s = _on_stack(w)
    real = pipeline._run

    def run_then_intrude(*args: Any, **kw: Any) -> Any:
        result = real(*args, **kw)
        if args[3].index == _INTRUDED:
            pipeline._run = real
            client = opensearch_client(s)
            hit = client.search(index=_INTRUDED, body={"size": 1, "query": {"match_all": {}}})["hits"]["hits"][0]
            client.index(index=_INTRUDED, id="intruder", body=hit["_source"])
        return result

    pipeline._run = run_then_intrude
    return ["bench", "--corpus", str(SMALL), "--arm", "bm25", "--index", _INTRUDED, "--reload", "--answerer", "skip",
            "--out", str(w / "out")]


EXTERNAL = [
    Case("external", "a document indexed by another client while the bench ran", _written_during_run, 3,
         r"IndexChanged: index 'tb-faults-intruded' was written to while bm25 ran: indexing_index_total \d+ -> \d+",
         ("out",)),
]


# -- the HNSW probe (issue 42 item 1): measure --hnsw -------------------------------------------------------------
HNSW = [
    Case("hnsw", "no build order", lambda w: ["measure", str(SMALL), "--hnsw", "--orders", "0"], 2,
         r"BadInput: .*--orders.*0 is not in the range"),
    Case("hnsw", "build orders that are not a number", lambda w: ["measure", str(SMALL), "--hnsw", "--orders", "x"],
         2, r"BadInput: .*--orders.*'x' is not a valid integer"),
    Case("hnsw", "a negative graph order", lambda w: ["bench", "--corpus", str(SMALL), "--arm", "dense-hnsw",
                                                     "--graph-order", "-1", "--out", str(w / "out")], 2,
         r"BadInput: .*--graph-order.*-1 is not in the range", ("out",)),
    Case("hnsw", "an unknown provider", lambda w: ["measure", str(SMALL), "--hnsw", "--provider", "cloud"], 2,
         r"BadInput: .*--provider.*'cloud' is not one of"),
]
# -- the generator's contracts and R6 proved from the talk (issue 42 items 2 and 4) -----------------------------

def _facts(root: Path) -> list[dict]:
    return [json.loads(x) for x in (root / "facts.jsonl").read_text().splitlines()]


def _meetings_edit(change: Callable[[list[dict], list[dict]], None]) -> Callable[[Path], None]:
    """Edit the meetings (every one, in order) given the facts."""
    def edit(root: Path) -> None:
        rows = [json.loads(x) for x in part(root).read_text().splitlines()]
        change(rows, _facts(root))
        write_lines(part(root), rows)
    return edit


def _silent_participants(rows: list[dict], facts: list[dict]) -> None:
    """A discussion block left with two speakers: every other participant's turns given to its opener."""
    f = next(f for f in facts if f["type"] == "discussion" and "query" in f)
    turns = next(m for m in rows if m["id"] == f["meeting"])["turns"][f["turn"]:f["last"] + 1]
    keep = {turns[0]["speaker"], next(t["speaker"] for t in turns if t["speaker"] != turns[0]["speaker"])}
    for t in turns:
        if t["speaker"] not in keep:
            t["speaker"] = turns[0]["speaker"]


def _opinion(root: Path) -> tuple[dict, dict]:
    """fixtures/small's first opinion question and its discussion fact."""
    q = next(json.loads(x) for x in (root / "queries.jsonl").read_text().splitlines() if '"opinion"' in x)
    return q, next(f for f in _facts(root) if f["type"] == "discussion" and f["query"] == q["id"])


def _speaker_edit(change: Callable[[dict, dict], None]) -> Callable[[Path], None]:
    """Edit the first opinion question's line of queries.jsonl, given its discussion fact."""
    def edit(root: Path) -> None:
        q, f = _opinion(root)
        rows = [json.loads(x) for x in (root / "queries.jsonl").read_text().splitlines()]
        change(next(r for r in rows if r["id"] == q["id"]), f)
        write_lines(root / "queries.jsonl", rows)
    return edit


def _no_distractor(root: Path) -> None:
    """The first opinion block's other speakers stop naming the aspect between its opening and its close."""
    _, f = _opinion(root)
    topic = f"{f['subject']} {f['aspect']}"

    def unsay(rows: list[dict], facts: list[dict]) -> None:
        for t in next(m for m in rows if m["id"] == f["meeting"])["turns"][f["turn"] + 1:f["last"]]:
            if t["speaker"] != f["named"]:
                t["text"] = t["text"].replace(topic, "matter")
    _meetings_edit(unsay)(root)


def _addressed_by_a_marker_word(rows: list[dict], facts: list[dict]) -> None:
    """A turn that ends with a person addressed by a name that is a marker's first word ("..., Amber?")."""
    phrase = next(f["phrase"] for f in facts if f["type"] == "aggregation_target" and f["rule"] == "R3")
    rows[0]["turns"][0]["text"] += f" What do you think, {phrase.split()[0].capitalize()}?"


def _fact_said_twice(rows: list[dict], facts: list[dict]) -> None:
    """A fact's subject and value said together in a second turn ("Austin has a point about the Calgary plant")."""
    f = next(f for f in facts if f["type"] == "lookup_answer")
    other = next(m for m in rows if m["id"] != f["meeting"])
    other["turns"][0]["text"] += f" {f['value']} has a point about the {f['subject']}."


def _r6_session_unnamed(rows: list[dict], facts: list[dict]) -> None:
    """The last session of an R6 series no longer says the series' name anywhere in its talk."""
    f = next(f for f in facts if f["type"] == "aggregation_target" and f["rule"] == "R6")
    name = f"{f['team']} {f['kind']}"
    last = [m for m in rows if m["title"].startswith(f"{f['team']} — {f['kind']} #")][-1]
    for t in last["turns"]:
        t["text"] = t["text"].replace(name, "weekly catch-up")


def _r6_slot_day_moved(rows: list[dict], facts: list[dict]) -> None:
    """A session of a series an R6 question names by its weekday moved to the next day (same month)."""
    import datetime

    f = next(f for f in facts if f["type"] == "aggregation_target" and f["rule"] == "R6" and "slot" in f)
    m = next(m for m in rows if m["title"].startswith(f"{f['team']} — {f['kind']} #"))
    day = datetime.date.fromisoformat(m["recorded_date"])
    m["recorded_date"] = (day + datetime.timedelta(days=1 if day.day < 28 else -1)).isoformat()


def _extra_forged(doc: dict) -> None:
    """An extra measure's per-query value and its rows rewritten together (the digest is rewritten by ``results``)."""
    block = doc["extra"]
    values = block["per_query"][0]["values"]
    values["P@10"] = 0.5 if values["P@10"] != 0.5 else 0.25
    block["rows"] = rows_of(block["rows"][0]["corpus"], block["per_query"], block["measures"],
                             {r["class"]: r["dropped_unjudgeable"] for r in block["rows"] if r["class"] != "all"})


def _twice_and_once(w: Path) -> list[str]:
    """``score --measure P@5`` into one/, then the command: the same with P@5 asked for twice (into out/)."""
    args = score(w, None, None, "--measure", "P@5")
    once = [*args[:args.index("--out") + 1], str(w / "one"), *args[args.index("--out") + 2:]]
    assert run(once, w).code == 0
    return [*args, "--measure", "P@5"]


_ONE_OF = r"one of R@1, P@5, P@10, MAP@100, Success@1, Success@5, Success@10, each also as meeting:NAME"
# the extra measures (issue 45 item 3): a name refused before anything is read or written, a compare of a measure
# one side did not record refused, a forged extra value caught by re-derivation, a name given twice asked once
MEASURES = [
    Case("measures", "score --measure of an unknown name", lambda w: score(w, None, None, "--measure", "P@3"), 2,
         rf"BadInput: --measure 'P@3': unknown; {_ONE_OF}", ("out",)),
    Case("measures", "score --measure in ir_measures' spelling", lambda w: score(w, None, None, "--measure",
                                                                                   "AP@100"), 2,
         r"BadInput: --measure 'AP@100': unknown; one of .*MAP@100", ("out",)),
    Case("measures", "score --measure of a headline measure", lambda w: score(w, None, None, "--measure", "nDCG@10"),
         2, rf"BadInput: --measure 'nDCG@10': always computed, not an extra measure; {_ONE_OF}", ("out",)),
    Case("measures", "bench --measure of an unknown name (before any stack)", lambda w: [
        "bench", "--corpus", str(SMALL), "--arm", "bm25", "--measure", "meeting:P@3", "--out", str(w / "out")], 2,
         r"BadInput: --measure 'meeting:P@3': unknown", ("out",)),
    Case("measures", "compare --measure the baseline did not record", lambda w: [
        "compare", str(results(w, name="a")), str(results(w, name="b", measures=("P@5",))), "--measure", "P@5"], 2,
         r"BadInput: --measure P@5: the baseline \(external/unknown on .*\) did not record it; score it again with "
         r"--measure P@5"),
    Case("measures", "compare --measure the candidate did not record", lambda w: [
        "compare", str(results(w, name="a", measures=("P@5", "P@10"))), str(results(w, name="b", measures=("P@5",))),
        "--measure", "P@10", "--measure", "P@5"], 2, r"BadInput: --measure P@10: the candidate .* did not record it"),
    Case("measures", "compare --measure of an unknown name", lambda w: [
        "compare", str(results(w, name="a")), str(results(w, name="b")), "--measure", "Success@3"], 2,
         r"BadInput: --measure 'Success@3': unknown"),
    Case("measures", "an extra value and its rows forged together, digest rewritten", lambda w: [
        "compare", str(results(w, name="a", measures=("P@10",))),
        str(results(w, _extra_forged, name="b", measures=("P@10",))), "--measure", "P@10"], 3,
         r"ResultsIntegrityError: .*query q\d+ P@10: metrics.json's extra block says (0.5|0.25), its exported "
         r"qrels and run give"),
    Case("measures", "a measure asked for twice is asked for once", _twice_and_once, 0, "",
         same=(("one/metrics.json", "out/metrics.json"), ("one/metrics.md", "out/metrics.md"),
               ("one/trec.json", "out/trec.json"), ("one/claim.sha256", "out/claim.sha256"))),
]


CASES = [
    # the generator's contracts, each class of corpus that failed its own validate (issue 42 item 4) -------------
    Case("contracts", "a discussion block left with two speakers", lambda w: ["validate", "--skip-cosine", str(corpus(
        w, _meetings_edit(_silent_participants)))], 1, r"CheckFailed: .*discussion_blocks"),
    Case("contracts", "a turn ending with a marker's first word as a name", lambda w: ["validate", "--skip-cosine",
         str(corpus(w, _meetings_edit(_addressed_by_a_marker_word)))], 1,
         r"CheckFailed: 1 check\(s\) failed: planted_in_short_turns$"),
    Case("contracts", "a fact's subject and value said in a second turn", lambda w: ["validate", "--skip-cosine",
         str(corpus(w, _meetings_edit(_fact_said_twice)))], 1, r"CheckFailed: 1 check\(s\) failed: fact_unique$"),
    # lookups that name a speaker (issue 46 item 4) ------------------------------------------------------------------
    Case("speaker-lookups", "an opinion question crediting the opener's turn to its speaker", lambda w: [
        "validate", "--skip-cosine", str(corpus(w, _speaker_edit(lambda q, f: q.update(
            speaker_turns={f["meeting"]: [f["turn"]]}))))], 1, r"CheckFailed: 1 check\(s\) failed: discussion_blocks$"),
    Case("speaker-lookups", "an opinion question's speaker turn outside its gold", lambda w: [
        "validate", "--skip-cosine", str(corpus(w, _speaker_edit(lambda q, f: q.update(
            speaker_turns={f["meeting"]: [f["last"] + 1]}))))], 1, r"CheckFailed: .*gold_spans_cover_answers"),
    Case("speaker-lookups", "an opinion question naming a speaker and none of their turns", lambda w: [
        "validate", "--skip-cosine", str(corpus(w, _speaker_edit(lambda q, f: q.update(speaker_turns={}))))], 1,
         r"CheckFailed: .*gold_spans_cover_answers"),
    Case("speaker-lookups", "an opinion block without its distractor", lambda w: [
        "validate", "--skip-cosine", str(corpus(w, _no_distractor))], 1,
         r"CheckFailed: 1 check\(s\) failed: discussion_blocks$"),
    Case("speaker-lookups", "a NUL byte in a question's speaker", lambda w: ["validate", str(corpus(
        w, _speaker_edit(lambda q, f: q.update(speaker="a \u0000 b"))))], 3, r"speaker holds a NUL character"),
    # R6 proved from the talk (issue 42 item 2) -----------------------------------------------------------------
    Case("attendance", "a session of an R6 series that stops saying its name", lambda w: ["validate", "--skip-cosine",
         str(corpus(w, _meetings_edit(_r6_session_unnamed)))], 1, r"CheckFailed: .*attendance_max_unique"),
    Case("attendance", "a session of a series asked by its weekday moved a day", lambda w: ["validate",
         "--skip-cosine", str(corpus(w, _meetings_edit(_r6_slot_day_moved)))], 1,
         r"CheckFailed: 1 check\(s\) failed: attendance_max_unique$"),
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
    Case("verdict", "compare --also with one directory", lambda w: ["compare", str(results(w, name="a")), str(
        results(w, name="b")), "--also", str(w / "a")], 2, r"BadInput: .*--also.* requires 2 arguments"),
    Case("verdict", "compare --also giving one corpus twice", lambda w: ["compare", str(results(w, name="a")), str(
        results(w, name="b")), "--gate", "--also", str(w / "a"), str(w / "b")], 3,
         r"UnpairedComparison: corpora 1 and 2 are one corpus"),
    Case("verdict", "compare --rule that says nothing of undetermined", lambda w: ["compare", str(results(
        w, name="a")), str(results(w, name="b")), "--rule", str(_file(w, "rule.txt", "lookup never down\n"))], 2,
         r"BadInput: --rule .*say what an undetermined verdict means"),
    Case("verdict", "compare --rule naming a measure the results lack", lambda w: ["compare", str(results(
        w, name="a")), str(results(w, name="b")), "--rule", str(_file(
            w, "rule.txt", "P@7 up on lookup\nundetermined fails\n"))], 2, r"BadInput: --rule .*line 1: .*'P@7'"),
    Case("verdict", "compare --rule with a negative margin", lambda w: ["compare", str(results(
        w, name="a")), str(results(w, name="b")), "--rule", str(_file(
            w, "rule.txt", "lookup never down within -0.1\nundetermined fails\n"))], 2, r"BadInput: .*margin '-0.1'"),
    Case("verdict", "compare --rule onto its own --json", lambda w: ["compare", str(results(
        w, name="a")), str(results(w, name="b")), "--rule", str(_file(w, "rule.txt", "x")), "--json",
        str(w / "rule.txt")], 2, r"BadInput: ", kept=("rule.txt",)),
    Case("verdict", "plan --delta above 1", lambda w: ["plan", str(results(w, name="a")), "--delta", "2"], 2,
         r"BadInput: --delta 2.0: a loss to detect lies between 0 and 1"),
    Case("verdict", "plan --class aggregation", lambda w: ["plan", str(results(w, name="a")), "--delta", "0.01",
                                                           "--class", "aggregation"], 2, r"not a ranked class"),
    Case("verdict", "plan --check on something that is not a corpus", lambda w: [
        "plan", str(results(w, name="a")), "--delta", "0.01", "--check", str(results(w, name="b"))], 2,
         r"BadInput: "),
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
    # bench's answer-scoring options (issue 46 item 5) -----------------------------------------------------------
    Case("bench-answers", "a negative count tolerance", lambda w: [
        "bench", "--corpus", str(SMALL), "--arm", "bm25", "--tolerance", "-1", "--out", str(w / "out")], 2,
         r"BadInput: Invalid value for '--tolerance': -1 is not in the range x>=0", ("out",)),
    Case("bench-answers", "an unknown set credit", lambda w: [
        "bench", "--corpus", str(SMALL), "--arm", "bm25", "--set-credit", "half", "--out", str(w / "out")], 2,
         r"BadInput: Invalid value for '--set-credit': 'half' is not one of 'f1', 'exact'", ("out",)),
    # the command line itself ------------------------------------------------------------------------------------
    Case("cli", "an unknown command", lambda w: ["frobnicate"], 2, r"BadInput: No such command"),
    Case("cli", "an unknown option", lambda w: ["validate", "--frob", str(SMALL)], 2, r"BadInput: No such option"),
    *ROUND3,
    *REUSE,
    *ROUND4_H3,
    *DECISIONS,
    *FAMILIES,
    *HNSW,
    *TRANSCRIPTS,
    *RELEASES,
    *TIERS,
    *SNAPSHOTS,
    *EXTERNAL,
    *MEASURES,
    *NOTEBOOK_ROWS,
]


def _export_run(w: Path, source: Path, *extra: str, out: Path | None = None) -> list[str]:
    return ["export", "run", str(source), "--format", "ranx", "--out", str(out or w / "run.json"), *extra]


ON_STACK = ("reuse", "external")  # the areas whose rows need real servers: the session's stack


def _tampered_run(res: Path) -> Path:
    with (res / "run.passages.trec").open("a") as f:
        f.write("q00002 Q0 m0001:00000 1 1 forged\n")
    return res


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


@pytest.mark.parametrize("case", [pytest.param(c, marks=[pytest.mark.integration] if c.area in ON_STACK else [])
                                  for c in CASES], ids=lambda c: f"{c.area}: {c.name}")
def test_one_line_the_right_exit_code_nothing_left(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   request: pytest.FixtureRequest) -> None:
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))
    if case.area in ON_STACK and not _SHARED:  # the integration tests' session stack, not a second one
        _SHARED.append(request.getfixturevalue("stack"))
    args = case.args(tmp_path)
    before = {rel: (tmp_path / rel).read_bytes() for rel in case.kept}
    out = run(args, tmp_path, dict(case.env) | (stack_env() if case.area in ON_STACK else {}))
    lines = out.stderr.strip().splitlines()
    assert out.code == case.code, out.stderr[:2000]
    assert case.held(out), (out.stdout + out.stderr)[:2000]
    assert not out.stderr.startswith("Traceback") and "Traceback" not in out.stderr
    # a refusal is exactly one line, with no progress note before it (notes are --verbose ones); a case that must
    # succeed prints no error
    if case.code == 0:
        assert not [line for line in lines if line.startswith("turnbench: ") and "Error" in line], out.stderr[:2000]
    else:
        assert len(lines) == 1 and re.search(case.first, lines[0]) and len(lines[0]) <= 400, out.stderr[:2000]
    for rel in case.left:
        assert not (tmp_path / rel).exists(), f"{rel} was left behind"
    for text in case.absent:
        assert text not in out.stderr, f"{text!r} was printed"
    for rel, data in before.items():
        assert (tmp_path / rel).read_bytes() == data, f"{rel} was overwritten"
    for a, b in case.same:
        assert (tmp_path / a).read_bytes() == (tmp_path / b).read_bytes(), f"{b} differs from {a}"
    assert not list(tmp_path.rglob(".*.partial")), "a staging directory was left behind"
