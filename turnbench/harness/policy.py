"""The relevance policy: the thresholds that turn what a passage holds of a query's gold into a grade (docs/design.md
§6; ``turnbench.harness.judgements`` applies it)."""

from __future__ import annotations

from dataclasses import dataclass

from turnbench.errors import BadInput

COVERAGE_RULE = (
    "words held of gold turns / words held, gold ranges unioned per meeting; what a passage holds: its declared "
    "spans, else its text found in the turns its times cover for its speakers, else the run or window its text "
    "hash is of, else each covered turn's words apportioned by seconds"
)
GRADE_ANSWER = 3
GRADE_HIGH = 2
GRADE_LOW = 1


@dataclass(frozen=True)
class RelevancePolicy:
    """The grading thresholds as a value; its canonical string is what results files record and compare."""

    high: float = 0.5
    low: float = 0.0
    binary: bool = False
    answer: float = 0.5  # the share of an answer turn a passage must hold for grade 3

    def __post_init__(self) -> None:
        for name in ("high", "low", "answer"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
                raise BadInput(f"relevance {name} must be a number in [0, 1], not {v!r}")
            object.__setattr__(self, name, float(v))
        if self.low > self.high:
            raise BadInput(f"relevance low ({self.low}) must not exceed relevance high ({self.high})")
        if not isinstance(self.binary, bool):
            raise BadInput(f"binary relevance must be true or false, not {self.binary!r}")

    def __str__(self) -> str:
        return f"{'binary' if self.binary else 'graded'}(high={self.high!r},low={self.low!r},answer={self.answer!r})"

    @classmethod
    def parse(cls, text: str) -> RelevancePolicy:
        """Inverse of ``str``: ``graded(high=0.5,low=0.0,answer=0.5)`` → ``RelevancePolicy(0.5, 0.0, False, 0.5)``."""
        try:
            kind, rest = text.split("(", 1)
            fields = dict(part.split("=", 1) for part in rest.rstrip(")").split(","))
            if kind not in ("graded", "binary") or set(fields) != {"high", "low", "answer"}:
                raise ValueError
            return cls(float(fields["high"]), float(fields["low"]), kind == "binary", float(fields["answer"]))
        except ValueError:
            raise BadInput(f"{text!r} is not a relevance policy (expected e.g. "
                           "'graded(high=0.5,low=0.0,answer=0.5)')") from None

    def grade(self, coverage: float, answer_share: float, speaker_share: float | None = None) -> int:
        """``speaker_share``: for a query that names a speaker, the largest share of one of that speaker's gold
        turns the passage holds (None otherwise); short of ``answer``, the passage grades at most 1 — it holds the
        discussion, not what the named speaker said (docs/design.md §6)."""
        if answer_share > 0.0 and answer_share >= self.answer:
            g = GRADE_ANSWER
        elif coverage >= self.high and coverage > 0.0:
            g = GRADE_HIGH
        elif coverage > self.low:
            g = GRADE_LOW
        else:
            g = 0
        if speaker_share is not None and not (speaker_share > 0.0 and speaker_share >= self.answer):
            g = min(g, GRADE_LOW)
        return min(g, 1) if self.binary else g

    def to_json(self) -> dict:
        """Everything a reader needs to challenge a grade, written in full (docs/design.md §3 rule 1)."""
        return {
            "name": str(self),
            "high": self.high,
            "low": self.low,
            "answer": self.answer,
            "binary": self.binary,
            "grades": {"3": "holds at least `answer` of an answer turn's words",
                       "2": "coverage >= high; for a query that names a speaker, also holds at least `answer` of "
                            "one of that speaker's gold turns",
                       "1": "coverage > low", "0": "otherwise"}
            if not self.binary else {"1": "graded 1, 2 or 3 under the same thresholds", "0": "otherwise"},
            "gain": "linear (trec_eval)",
            "coverage": COVERAGE_RULE,
            "zero_duration_turns": "a turn with end - start <= 1e-06 s is covered when the passage's closed interval "
                                   "contains its start",
            "qrels": "positive grades only; unjudged passages score 0 and take a rank slot",
            "meeting_level": "gold meetings at grade 1; run collapsed to meetings by first occurrence",
        }
