"""Submitted answers: what any answerer (ours or another team's) hands the harness (docs/design.md §1, §8).

An answerer turns each answer-scored query into a :class:`SubmittedAnswer` — a typed answer, or ``None``
when it declines — together with the mechanism that produced it, so every results file says how each
number was obtained. Another team's answerer plugs in by writing the same records as ``answers.jsonl``.
This is the answer side's contract, as :mod:`turnbench.passages` and :mod:`turnbench.rankings` are the retrieval
side's: the answer engines (``turnbench.engines.answer``) write these records and the harness reads them, neither
importing the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.corpus.records import Answer
from turnbench.errors import BadInput

DECLINED = "declined"


@dataclass(frozen=True)
class SubmittedAnswer:
    """One answerer's output for one query. ``answer`` is ``None`` when the answerer declined.

    ``mechanism`` names how the answer was computed (or ``"declined"``); ``intent`` holds what the
    parser understood (rule, phrase, month, team, kind) or why it declined (``reason``)."""

    query_id: str
    answer: Answer | None
    mechanism: str
    intent: Mapping[str, str] = field(default_factory=dict)

    @property
    def declined(self) -> bool:
        return self.answer is None

    def to_json(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "answer": self.answer.to_json() if self.answer is not None else None,
            "mechanism": self.mechanism,
            "intent": {k: self.intent[k] for k in sorted(self.intent)},
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SubmittedAnswer:
        """A submitted answer record; a malformed one raises KeyError, TypeError or ValueError."""
        qid = d["query_id"]
        if not isinstance(qid, str) or not qid:
            raise TypeError("query_id is not a non-empty string")
        raw = d.get("answer")
        if raw is not None and not isinstance(raw, dict):
            raise TypeError(f"answer is a {type(raw).__name__}, not an object")
        answer = Answer.from_json(raw) if raw is not None else None
        if answer is not None:
            _check_answer(answer)
        intent = d.get("intent") or {}
        if not isinstance(intent, dict):
            raise TypeError(f"intent is a {type(intent).__name__}, not an object")
        mechanism = d.get("mechanism", DECLINED if answer is None else "")
        if not isinstance(mechanism, str):
            raise TypeError("mechanism is not a string")
        return cls(qid, answer, mechanism, {str(k): str(v) for k, v in intent.items()})


def declined(query_id: str, reason: str, **intent: str) -> SubmittedAnswer:
    """A declined answer, with the reason kept beside what was understood."""
    return SubmittedAnswer(query_id, None, DECLINED, {**intent, "reason": reason})


def write_answers(path: Path, answers: Iterable[SubmittedAnswer]) -> str:
    """Write ``answers.jsonl`` sorted by query id; returns its sha256."""
    rows = sorted(answers, key=lambda a: a.query_id)
    return canonical.write_jsonl(path, (a.to_json() for a in rows))


def _check_answer(a: Answer) -> None:
    """The fields an answer of its type needs, of the right types: a count is a whole number, a meeting set a list
    of ids, a speaker a name."""
    if a.type in ("count", "speaker_count") and (isinstance(a.count, bool) or not isinstance(a.count, int)):
        raise TypeError(f"a {a.type} answer needs a whole-number count, not {a.count!r}")
    if a.type == "meeting_set" and not all(isinstance(m, str) for m in a.meetings or ()):
        raise TypeError("a meeting_set answer needs a list of meeting ids")
    if a.type == "speaker_count" and not isinstance(a.speaker, str):
        raise TypeError("a speaker_count answer needs a speaker name")


def read_answers(path: Path) -> list[SubmittedAnswer]:
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"{path}: answers file not found")
    return list(canonical.read_records(path, SubmittedAnswer.from_json, "a submitted answer", BadInput))
