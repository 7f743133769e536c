"""A load keeps its passage inventory beside its record in the state directory; a run reads it there (no PostgreSQL
client imported, PostgreSQL not even asked), and never trusts a copy further than the index's marker vouches for it:
another load's copy, or an edited one, is passed over for PostgreSQL's, and when that is wrong too the run is
refused."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.tinycorpus import MAX_WORDS
from turnbench.engines.retrieval import run_arm
from turnbench.errors import IndexNotSettled
from turnbench.loading import proof
from turnbench.loading.load import load_corpus
from turnbench.loading.spec import LoadSpec
from turnbench.loading.tables import SCHEMA
from turnbench.passages import canonical_blocks
from turnbench.stack.clients import postgres_connect
from turnbench.stack.state import UP, Recorded, write_state

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
INDEX = "turnbench-kept-inventory-test"


@pytest.fixture(autouse=True)
def _state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))


@pytest.fixture
def loaded(stack, tiny):
    return load_corpus(stack, tiny, LoadSpec(max_words=MAX_WORDS, index=INDEX))


def _drop_a_stored_passage(stack) -> None:
    with postgres_connect(stack) as conn:
        conn.execute(f"DELETE FROM {SCHEMA}.passages WHERE id = (SELECT max(id) FROM {SCHEMA}.passages)")


def test_a_load_keeps_its_inventory_as_passages_jsonl_and_a_run_reads_it(stack, tiny, loaded):
    kept = proof.inventory_path(INDEX).read_bytes()
    assert kept == b"".join(canonical_blocks(loaded.passages))
    assert hashlib.sha256(kept).hexdigest() == loaded.passages_sha256
    _drop_a_stored_passage(stack)  # PostgreSQL's copy is wrong now; the kept one is the load's
    result = run_arm(stack, tiny, "bm25", index=INDEX)
    assert result.passages == loaded.passages and result.passages_sha256 == loaded.passages_sha256


def test_a_kept_inventory_that_is_not_the_loads_is_passed_over_for_postgresql(stack, tiny, loaded):
    path = proof.inventory_path(INDEX)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # a well-formed inventory, but not the one the marker records
    result = run_arm(stack, tiny, "bm25", index=INDEX)
    assert result.passages == loaded.passages and result.passages_sha256 == loaded.passages_sha256
    path.write_bytes(b"".join(lines[:-1]) + b"{not a passage\n")  # nor is a copy that is no inventory
    assert proof.kept_inventory(INDEX) is None
    assert run_arm(stack, tiny, "bm25", index=INDEX).passages == loaded.passages
    # with PostgreSQL's copy wrong too, nothing vouches for an inventory: refused
    _drop_a_stored_passage(stack)
    with pytest.raises(IndexNotSettled, match="another passage inventory"):
        run_arm(stack, tiny, "bm25", index=INDEX)


def test_a_load_again_forgets_the_kept_inventory_until_it_settles(stack, tiny, loaded):
    path = proof.inventory_path(INDEX)
    assert path.is_file()
    proof.forget(INDEX)
    assert not path.exists() and proof.kept_inventory(INDEX) is None
    assert run_arm(stack, tiny, "bm25", index=INDEX).passages == loaded.passages  # read from PostgreSQL


def test_a_run_process_imports_no_postgresql_client(stack, tiny, loaded, tmp_path):
    write_state(Recorded(UP, "external", {}, stack))  # the session's stack, recorded as `stack up` records one
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TURNBENCH_OPENSEARCH", "TURNBENCH_POSTGRES"))}
    cli = [sys.executable, "-X", "importtime", "-c", "from turnbench.cli import main; main()"]
    done = subprocess.run([*cli, "run", "--corpus", str(tiny.root), "--arm", "bm25", "--index", INDEX, "--out",
                           str(out)], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time")}
    assert "turnbench.engines.retrieval" in imported and "psycopg" not in imported
    assert (out / "passages.jsonl").read_bytes() == proof.inventory_path(INDEX).read_bytes()
