"""The generator keeps its contracts at every size (issue 42 item 4): no seed at 8 or 16 meetings writes a corpus its
own validator fails (``make generator-contracts`` adds 200 meetings). Before the fix, seed 7 at 16 meetings wrote a
discussion block of two speakers where the contract wants three, a person called Amber put a marker's word at
the start of the turns that addressed her, and one called Austin said a fact whose value was the city a second time.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from turnbench.generator.config import GeneratorConfig
from turnbench.generator.org import build_organisation
from turnbench.generator.plan import build_plan
from turnbench.generator.subjects import reserved_for_aggregation
from turnbench.generator.transcript import write_meeting

ROOT = Path(__file__).resolve().parents[3]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generator_contracts", ROOT / "scripts" / "generator_contracts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("meetings", [8, 16])
def test_no_seed_writes_a_corpus_its_own_validate_fails(meetings):
    contracts = _script()
    failing = {seed: problems for seed in range(1, 51) if (problems := contracts.contract_failures(seed, meetings))}
    assert failing == {}


def test_every_participant_of_a_discussion_speaks_in_its_block():
    """The cause of the two-speaker blocks: the speakers of a block were drawn turn by turn, and one of three could
    be left out; now the last turns go to those not heard yet."""
    checked = 0
    for mp in (mp for seed in range(1, 21) for mp in build_plan(GeneratorConfig(seed=seed, meetings=16)).meetings):
        line, facts, _ = write_meeting(mp)
        turns = json.loads(line)["turns"]
        for f in facts:
            if f["type"] != "discussion":
                continue
            d = next(d for d in mp.discussions if d.query == f["query"])
            assert {t["speaker"] for t in turns[f["turn"]:f["last"] + 1]} >= set(d.speakers), (mp.id, f["query"])
            checked += 1
    assert checked >= 20 * 16


def test_no_person_is_named_with_a_word_of_an_aggregation_phrase_or_a_city():
    """The causes of the phrases that could cross turns ("Amber, what do you make of it?" starts with a marker's
    word) and of a fact said twice ("Austin has a point about the Calgary plant" beside "the Calgary plant offsite
    will be in Austin"). No name of any seed uses such a word."""
    reserved = reserved_for_aggregation()
    for seed in range(1, 51):
        org = build_organisation(GeneratorConfig(seed=seed, meetings=200))
        assert reserved.isdisjoint(org.name_tokens), seed
        assert {c.lower() for c in org.cities}.isdisjoint(org.name_tokens), seed


def test_the_sweep_reports_a_failing_corpus_and_exits_1(monkeypatch, capsys):
    """The sweep itself can fail: a corpus whose check fails is listed and the exit code is 1."""
    contracts = _script()
    failing = ["discussion_blocks: q1: the block has 2 speakers"]
    monkeypatch.setattr(contracts, "contract_failures", lambda seed, meetings, cosine: failing if seed == 2 else [])
    assert contracts.main(["--seeds", "1-3", "--meetings", "8"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  seed 2, 8 meetings: discussion_blocks" in out and "2/3 seeds pass" in out
    monkeypatch.setattr(contracts, "contract_failures", lambda seed, meetings, cosine: [])
    assert contracts.main(["--seeds", "1-3", "--meetings", "8"]) == 0
