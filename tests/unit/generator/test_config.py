"""The generator's configuration (turnbench/generator/config.py): bounds refused with BadInput, the JSON
form the manifest records, and seeds derived per purpose independently of call order."""

from __future__ import annotations

import pytest

from turnbench.errors import BadInput
from turnbench.generator.config import GeneratorConfig, derived_seed, rng_for


@pytest.mark.parametrize("kwargs, message", [
    ({"seed": True}, "seed must be an integer"),
    ({"meetings": 7}, "meetings must be an integer from 8 to 20000"),
    ({"words_per_meeting": 299.5}, "words per meeting must be an integer"),
    ({"near_duplicate_rate": -0.1}, "near-duplicate rate must be between 0 and 1"),
    ({"span_days": 27}, "span days must be an integer from 28"),
    ({"start_date": "2026-02-30"}, "start date must be an ISO date"),
])
def test_out_of_range_options_are_bad_input(kwargs, message):
    with pytest.raises(BadInput, match=message):
        GeneratorConfig(**kwargs)


def test_the_recorded_config_round_trips_and_unknown_keys_are_refused():
    cfg = GeneratorConfig(seed=5, meetings=16, near_duplicate_rate=1)
    d = cfg.to_json()
    assert d["near_duplicate_rate"] == 1.0 and isinstance(d["near_duplicate_rate"], float)
    assert GeneratorConfig.from_json(d) == cfg
    assert GeneratorConfig.from_json({"seed": 5}) == GeneratorConfig(seed=5)
    with pytest.raises(BadInput, match="unknown generator config key"):
        GeneratorConfig.from_json({**d, "colour": "blue"})


def test_derived_seeds_depend_only_on_seed_purpose_and_key():
    a = derived_seed(1, "render", "m0001")
    assert a == derived_seed(1, "render", "m0001") and 0 <= a < 2**64
    assert len({a, derived_seed(2, "render", "m0001"), derived_seed(1, "bank", "m0001"),
                derived_seed(1, "render", "m0002")}) == 4
    assert rng_for(1, "lookup").random() == rng_for(1, "lookup").random()
