"""The generator's resolved configuration and its per-purpose seeds.

Everything that shapes the output bytes is in ``GeneratorConfig`` and is written into the manifest;
``--workers`` is not, because it never changes a byte.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from turnbench.errors import BadInput
from turnbench.generator.register import DEFAULT_REGISTER, REGISTERS, Register

DEFAULT_SEED = 20261130
DEFAULT_MEETINGS = 200
DEFAULT_WORDS = 3000
DEFAULT_NEAR_DUPLICATE_RATE = 0.25
DEFAULT_START_DATE = "2026-01-05"
DEFAULT_SPAN_DAYS = 182

TITLES = ("series", "opaque")  # series: "Payments — design review #3"; opaque: named like a recording's file
DEFAULT_TITLES = "opaque"
DEFAULT_ENTITY_ACCURACY = 0.82

SEED_RANGE = (0, 2**31 - 1)
MEETINGS_RANGE = (8, 20000)
WORDS_RANGE = (300, 20000)


@dataclass(frozen=True)
class GeneratorConfig:
    seed: int = DEFAULT_SEED
    meetings: int = DEFAULT_MEETINGS
    words_per_meeting: int = DEFAULT_WORDS
    near_duplicate_rate: float = DEFAULT_NEAR_DUPLICATE_RATE
    start_date: str = DEFAULT_START_DATE
    span_days: int = DEFAULT_SPAN_DAYS
    register: str = DEFAULT_REGISTER
    titles: str = DEFAULT_TITLES
    asr_wer: float = 0.0  # the ASR preset's word error rate; 0 is no ASR noise (generator/noise.py)
    asr_entity_accuracy: float = DEFAULT_ENTITY_ACCURACY

    def __post_init__(self) -> None:
        if not isinstance(self.register, str) or self.register not in REGISTERS:
            raise BadInput(f"register must be one of {', '.join(sorted(REGISTERS))}, got {self.register!r}")
        _in_range("seed", self.seed, SEED_RANGE)
        _in_range("meetings", self.meetings, MEETINGS_RANGE)
        _in_range("words per meeting", self.words_per_meeting, WORDS_RANGE)
        if not (isinstance(self.near_duplicate_rate, (int, float)) and 0.0 <= self.near_duplicate_rate <= 1.0):
            raise BadInput(f"near-duplicate rate must be between 0 and 1, got {self.near_duplicate_rate!r}")
        _in_range("span days", self.span_days, (28, 3650))
        if self.titles not in TITLES:
            raise BadInput(f"titles must be one of {', '.join(TITLES)}, got {self.titles!r}")
        _in_unit("ASR word error rate", self.asr_wer, 0.0, 0.5)
        _in_unit("ASR named-entity accuracy", self.asr_entity_accuracy, 0.5, 1.0)
        import datetime

        try:
            datetime.date.fromisoformat(self.start_date)
        except (TypeError, ValueError):
            raise BadInput(f"start date must be an ISO date, got {self.start_date!r}") from None

    @property
    def voice(self) -> Register:
        """The register's shape parameters."""
        return REGISTERS[self.register]

    @classmethod
    def from_options(cls, **given: Any) -> GeneratorConfig:
        """A config from command-line options (None = not given): a register supplies the words per meeting
        unless they are given too."""
        options = {k: v for k, v in given.items() if v is not None}
        register = options.get("register", DEFAULT_REGISTER)
        if "words_per_meeting" not in options and isinstance(register, str) and register in REGISTERS:
            options["words_per_meeting"] = REGISTERS[register].words_per_meeting
        return cls(**options)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("near_duplicate_rate", "asr_wer", "asr_entity_accuracy"):
            d[key] = float(d[key])
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> GeneratorConfig:
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        unknown = sorted(set(d) - set(cls.__dataclass_fields__))
        if unknown:
            raise BadInput(f"unknown generator config key(s): {', '.join(unknown)}")
        return cls(**known)


def _in_range(name: str, value: Any, bounds: tuple[int, int]) -> None:
    lo, hi = bounds
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise BadInput(f"{name} must be an integer from {lo} to {hi}, got {value!r}")


def _in_unit(name: str, value: Any, lo: float, hi: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        raise BadInput(f"{name} must be a number from {lo:g} to {hi:g}, got {value!r}")


def derived_seed(seed: int, purpose: str, key: str = "") -> int:
    """A seed for one purpose (and one meeting): independent of call order, process and PYTHONHASHSEED."""
    digest = hashlib.sha256(f"{seed}:{purpose}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def rng_for(seed: int, purpose: str, key: str = "") -> random.Random:
    return random.Random(derived_seed(seed, purpose, key))
