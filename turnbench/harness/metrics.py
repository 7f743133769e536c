"""Measures as values, and pytrec_eval-terrier behind one function (docs/design.md §7).

A ``Measure`` is a small hashable value whose canonical string (``nDCG@10``, ``R@5``, ``MRR``,
``meeting:nDCG@10``) is the key in every report and parses back to the same value. ``evaluate`` is the
only place that touches pytrec_eval, and it adds ``trec_eval -c`` semantics: a judged query the run
did not answer scores zero on every measure instead of disappearing from the results.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from turnbench.errors import BadInput
from turnbench.vocab import ExtraMeasure

ENGINE_NAME = "pytrec_eval-terrier"
ENGINE_DIST = "pytrec-eval-terrier"
LEVELS = ("passage", "meeting")
# canonical name -> (trec_eval measure family, whether it takes a cutoff); P, MAP and Success are only ever extra
# measures (``EXTRA_MEASURES``), computed when asked for
_FAMILIES = {"nDCG": ("ndcg_cut", True), "R": ("recall", True), "MRR": ("recip_rank", False), "P": ("P", True),
             "MAP": ("map_cut", True), "Success": ("success", True)}
_PATTERN = re.compile(r"(?:(meeting):)?(nDCG|R|MRR|P|MAP|Success)(?:@([1-9][0-9]{0,4}))?")


@dataclass(frozen=True, order=True)
class Measure:
    """What to compute: a measure family, its cutoff, and the level (passages, or meetings)."""

    name: str
    cutoff: int | None = None
    level: str = "passage"

    def __post_init__(self) -> None:
        if self.name not in _FAMILIES:
            raise BadInput(f"unknown measure {self.name!r}; known: {', '.join(sorted(_FAMILIES))}")
        if _FAMILIES[self.name][1] != (self.cutoff is not None):
            raise BadInput(f"measure {self.name} {'needs' if _FAMILIES[self.name][1] else 'takes no'} cutoff")
        if self.level not in LEVELS:
            raise BadInput(f"measure level must be one of {', '.join(LEVELS)}, not {self.level!r}")

    def __str__(self) -> str:
        prefix = "meeting:" if self.level == "meeting" else ""
        return f"{prefix}{self.name}" + (f"@{self.cutoff}" if self.cutoff is not None else "")

    @classmethod
    def parse(cls, text: str) -> Measure:
        m = _PATTERN.fullmatch(text)
        if not m:
            raise BadInput(f"{text!r} is not a measure (e.g. nDCG@10, R@5, MRR, meeting:nDCG@10)")
        level, name, cutoff = m.groups()
        return cls(name, int(cutoff) if cutoff else None, level or "passage")

    @property
    def trec_family(self) -> str:
        return _FAMILIES[self.name][0]

    @property
    def trec_key(self) -> str:
        """The key pytrec_eval reports this measure under."""
        return self.trec_family + (f"_{self.cutoff}" if self.cutoff is not None else "")


def _m(text: str) -> Measure:
    return Measure.parse(text)


PASSAGE_MEASURES = tuple(_m(s) for s in ("nDCG@5", "nDCG@10", "nDCG@20", "R@5", "R@10", "R@20", "MRR"))
MEETING_MEASURES = tuple(_m(s) for s in ("meeting:nDCG@10", "meeting:R@10"))
ALL_MEASURES = PASSAGE_MEASURES + MEETING_MEASURES
# what ``--measure`` may add (the measures papers report), at both levels, in this order whatever the order asked
EXTRA_NAMES = tuple(str(m) for m in ExtraMeasure)
EXTRA_MEASURES = tuple(_m(s) for s in EXTRA_NAMES) + tuple(_m(f"meeting:{s}") for s in EXTRA_NAMES)


def selected(names: Iterable[str], option: str = "--measure") -> tuple[Measure, ...]:
    """The extra measures ``names`` ask for, each once, in ``EXTRA_MEASURES`` order (so the same set always writes the
    same bytes); a name that is not one of them (a headline measure too: it is always computed) is refused in one line
    naming those that are."""
    known = {str(m): m for m in EXTRA_MEASURES}
    try:
        names = [names] if isinstance(names, str) else list(names)
    except TypeError:
        raise BadInput(f"measures must be measure names (a list of str), not {type(names).__name__}") from None
    for name in names:
        if not isinstance(name, str) or name not in known:
            headline = name in {str(m) for m in ALL_MEASURES}
            raise BadInput(f"{option} {name!r}: {'always computed, not an extra measure' if headline else 'unknown'}"
                           f"; one of {', '.join(EXTRA_NAMES)}, each also as meeting:NAME (the run's meetings)")
    wanted = set(names)
    return tuple(m for m in EXTRA_MEASURES if str(m) in wanted)


def depth_read(measures: Sequence[Measure], ranked: Sequence[str], relevant: Container[str]) -> int:
    """How far down ``ranked`` the measures look: the deepest cutoff, or, with a measure that has none (MRR), the
    first relevant document when it lies deeper. trec_eval reads nothing below, so a list cut there scores the same
    on every one of ``measures``, and is a fraction of a 100-deep run to hand over."""
    cut = max((m.cutoff for m in measures if m.cutoff is not None), default=0)
    if all(m.cutoff is not None for m in measures) or any(d in relevant for d in ranked[:cut]):
        return cut
    for i in range(cut, len(ranked)):
        if ranked[i] in relevant:
            return i + 1
    return cut  # no relevant document below the cutoffs: the cut list's MRR is the whole list's (0, or above)


def engine_version() -> str:
    """The installed pytrec_eval-terrier's version, from the METADATA beside the module (importlib.metadata, whose
    import and search of every path entry took a twentieth of a second of each score, where that is not found)."""
    import pytrec_eval

    found = list(Path(pytrec_eval.__file__).parent.parent.glob(f"{ENGINE_DIST.replace('-', '_')}-*.dist-info"))
    if len(found) == 1:
        try:
            with open(found[0] / "METADATA", encoding="utf-8") as fh:
                for line in fh:
                    if line.startswith("Version: "):
                        return line[len("Version: "):].strip()
                    if not line.strip():
                        break  # the headers end at the first blank line
        except OSError:
            pass
    from importlib.metadata import version

    return version(ENGINE_DIST)


def engine_provenance() -> dict:
    return {"name": ENGINE_NAME, "version": engine_version(), "semantics": "trec_eval -c",
            "ndcg": "ndcg_cut (ideal ranking truncated at k), linear gain", "mrr": "recip_rank over the run depth",
            "relevance_level": 1}


def _trec_measure_set(measures: Sequence[Measure]) -> set[str]:
    cutoffs: dict[str, set[int]] = {}
    plain: set[str] = set()
    for m in measures:
        if m.cutoff is None:
            plain.add(m.trec_family)
        else:
            cutoffs.setdefault(m.trec_family, set()).add(m.cutoff)
    return plain | {f"{fam}.{','.join(str(c) for c in sorted(cs))}" for fam, cs in cutoffs.items()}


def evaluate(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
             measures: Iterable[Measure]) -> dict[str, dict[Measure, float]]:
    """Per-query values for every query in ``qrels``; run queries without qrels are ignored.

    ``run`` maps each query to ``{doc id: score}``. A query in ``qrels`` that ``run`` lacks, or maps
    to nothing, scores 0.0 on every measure (``trec_eval -c``); pytrec_eval alone would omit it.
    Scores should already be tie-free (``turnbench.rankings.normalise``): trec_eval breaks ties by doc id.
    """
    import pytrec_eval

    measures = tuple(measures)
    if not measures:
        raise BadInput("no measures to evaluate")
    for qid, docs in qrels.items():
        if not any(g > 0 for g in docs.values()):
            # trec_eval would silently skip such a query; an unjudgeable query is the caller's to drop and count
            raise BadInput(f"query {qid} has no relevant document in the qrels; drop it as unjudgeable first")
    qrels_in = {qid: {d: int(g) for d, g in docs.items()} for qid, docs in qrels.items()}
    run_in = {qid: run[qid] if isinstance(run[qid], dict) else dict(run[qid]) for qid in qrels if run.get(qid)}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_in, _trec_measure_set(measures))
    raw = evaluator.evaluate(run_in) if run_in else {}
    zero = {m: 0.0 for m in measures}
    keys = [(m, m.trec_key) for m in measures]
    out: dict[str, dict[Measure, float]] = {}
    for qid in sorted(qrels):
        r = raw.get(qid)
        out[qid] = dict(zero) if r is None else {m: float(r[key]) for m, key in keys}
    return out


class Scorer:
    """Strictly decreasing scores in list order (no tie is left for trec_eval to break), built at C speed."""

    def __init__(self, depth: int):
        self.desc = [float(x) for x in range(depth, 0, -1)]

    def __call__(self, ids: Sequence[str]) -> dict[str, float]:
        if len(ids) > len(self.desc):
            self.desc = [float(x) for x in range(len(ids), 0, -1)]
        return dict(zip(ids, self.desc[len(self.desc) - len(ids):], strict=True))


EVAL_CHUNK = 2000  # queries handed to pytrec_eval at once: its input dicts stay small whatever the run's size


def evaluate_lists(qrels: Mapping[str, Mapping[str, int]], ranked: Mapping[str, Sequence[str]],
                   scored: Callable[[Sequence[str]], dict[str, float]], measures: Sequence[Measure]
                   ) -> dict[str, dict[Measure, float]]:
    """``evaluate`` over ``ranked`` (scored as ``scored`` does), a chunk of queries at a time: per-query
    values do not depend on the other queries, and a million-hit run never exists as one dict of dicts."""
    out: dict[str, dict[Measure, float]] = {}
    qids = sorted(qrels)
    for lo in range(0, len(qids), EVAL_CHUNK):
        part = qids[lo:lo + EVAL_CHUNK]
        out.update(evaluate({q: qrels[q] for q in part}, lists_read(ranked, qrels, part, scored, measures), measures))
    return out


def lists_read(ranked: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]], qids: Iterable[str],
               scored: Callable[[Sequence[str]], dict[str, float]], measures: Sequence[Measure]
               ) -> dict[str, dict[str, float]]:
    """The run pytrec_eval is handed for ``qids``: each list cut where the measures stop reading (``depth_read``),
    scored as ``scored`` scores it."""
    return {q: scored(r[:depth_read(measures, r, qrels[q])]) for q in qids if (r := ranked.get(q))}
