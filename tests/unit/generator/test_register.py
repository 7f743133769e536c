"""Registers (turnbench/generator/register.py): each is a complete, consistent preset, and generating with one
moves the figures it is calibrated on in the direction of the QMSum domain it stands for."""

from __future__ import annotations

import json

import pytest

from turnbench.corpus.records import Meeting
from turnbench.errors import BadInput
from turnbench.generator.config import GeneratorConfig
from turnbench.generator.plan import build_plan
from turnbench.generator.realism import meeting_figures, profile_meeting
from turnbench.generator.register import DEFAULT_REGISTER, REGISTERS
from turnbench.generator.transcript import write_meeting


def test_every_register_is_a_consistent_preset():
    assert DEFAULT_REGISTER in REGISTERS and set(REGISTERS) == {"default", "interactive", "formal"}
    for r in REGISTERS.values():
        share = r.backchannel_rate + r.fragment_rate + sum(b.weight for b in r.turns)
        assert share == pytest.approx(1.0), r.name
        assert all(0 < b.lo <= b.hi for b in r.turns)
        assert r.team_size[0] > r.template_others[1] and r.team_size[0] > r.session_others[1]
    assert REGISTERS["default"].words_per_meeting == GeneratorConfig().words_per_meeting


def test_an_unknown_register_is_bad_input():
    with pytest.raises(BadInput, match="register must be one of default, formal, interactive, got 'loud'"):
        GeneratorConfig(register="loud")
    with pytest.raises(BadInput, match="register must be one of"):
        GeneratorConfig.from_options(register=3)


def _figures(register: str) -> dict:
    cfg = GeneratorConfig.from_options(seed=8, meetings=40, register=register)
    profiles = [profile_meeting(Meeting.from_json(json.loads(write_meeting(mp)[0])), "x", True)
                for mp in build_plan(cfg).meetings]
    return meeting_figures(profiles)


def test_registers_sound_like_the_meetings_they_are_calibrated_on():
    # QMSum product: ~6,000 words, 4 speakers, median turn 5 words, a fifth backchannels; committee: ~13,000
    # words, 10 speakers, median turn 44 words, about 1% backchannels
    interactive, formal, default = _figures("interactive"), _figures("formal"), _figures("default")
    assert 5000 <= interactive["words_per_meeting"] <= 7000 and interactive["speakers_per_meeting"] == 4
    assert 3 <= interactive["turn_words_p50"] <= 8 and 0.15 <= interactive["backchannel_share"] <= 0.25
    assert 11000 <= formal["words_per_meeting"] <= 15000 and 8 <= formal["speakers_per_meeting"] <= 12
    assert 30 <= formal["turn_words_p50"] <= 60 and formal["backchannel_share"] <= 0.03
    assert formal["overlap_share"] < default["overlap_share"] < interactive["overlap_share"]
