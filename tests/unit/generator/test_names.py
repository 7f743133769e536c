"""Invented names (turnbench/generator/names.py): unique, and never a word the generator otherwise uses."""

from __future__ import annotations

import random

from turnbench.generator.config import GeneratorConfig
from turnbench.generator.names import InventedNames, reserved_words
from turnbench.generator.org import build_organisation


def test_invented_names_never_run_out():
    names = InventedNames(random.Random(1), set())
    made = [names.new() for _ in range(30000)]  # more than three syllables can spell
    assert len(set(made)) == len(made)


def test_invented_names_avoid_every_reserved_word():
    org = build_organisation(GeneratorConfig(seed=4, meetings=16))
    reserved = reserved_words(org)
    assert {"lantern", "migration", "the"} <= reserved and set(org.name_tokens) <= reserved
    names = InventedNames(random.Random(2), reserved)
    made = [names.new() for _ in range(2000)]
    assert all(len(n) >= 6 and n == n.capitalize() for n in made)
    assert not {n.lower() for n in made} & reserved
