"""The generic checks: what every format-v1 corpus must hold, whoever wrote it (a QMSum import included).

``open_corpus`` has verified every manifest hash before anything here runs. ``scan_corpus`` then reads
the meetings once into a ``CorpusScan``, and each check is a pure function of that record. A check's
name, status and detail text are an interface: the CLI prints them and users and tests match on them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from turnbench.corpus.format import Corpus
from turnbench.corpus.records import Meeting, Query, Turn

# how many problems a failing check names before it says "... and N more"
SHOW = 5
# Two turns of one speaker overlap when one starts this far before the other ends (the judgements' tolerance).
OVERLAP_EPSILON = 1e-6
# What a record that is not format v1 raises when a check reads it.
MALFORMED = (KeyError, ValueError, TypeError, AttributeError)


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: str  # "pass" | "fail" | "n/a"
    detail: str

    @property
    def ok(self) -> bool:
        return self.status != "fail"

    def line(self) -> str:
        return f"{self.status.upper():<4}  {self.name:<26}  {self.detail}"


def result_of(name: str, problems: Sequence[str], ok_detail: str) -> CheckResult:
    """A pass with ``ok_detail`` when there are no problems, else a fail naming the first few."""
    if not problems:
        return CheckResult(name, "pass", ok_detail)
    more = f" ... and {len(problems) - SHOW} more" if len(problems) > SHOW else ""
    return CheckResult(name, "fail", f"{len(problems)} problem(s): " + "; ".join(problems[:SHOW]) + more)


def failures(results: Iterable[CheckResult]) -> list[str]:
    return [r.name for r in results if not r.ok]


R = TypeVar("R")


def check_name(check: Callable[[R], CheckResult]) -> str:
    return check.__name__.removeprefix("check_")


def run_check(check: Callable[[R], CheckResult], record: R) -> CheckResult:
    """The check's result; data that is not what the check expects is its failure, not a traceback."""
    try:
        return check(record)
    except MALFORMED as exc:
        return CheckResult(check_name(check), "fail", f"malformed corpus data: {type(exc).__name__}: {exc}")


# -- the scan ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MeetingInfo:
    title: str
    recorded_date: str | None
    turns: int
    duration: float


@dataclass(frozen=True)
class CorpusScan:
    """What one pass over a corpus yields for the generic checks (and what other checks build on).

    ``meetings`` is keyed by id, so a repeated id keeps its last meeting; ``meeting_order`` keeps every
    occurrence, so the repetition is still visible.
    """

    manifest: Mapping[str, Any]
    queries: tuple[Query, ...]
    meeting_order: tuple[str, ...]
    meetings: Mapping[str, MeetingInfo]
    duplicate_meetings: tuple[str, ...]
    dense_problems: tuple[str, ...]
    time_problems: tuple[str, ...]
    self_overlaps: tuple[str, ...] = ()

    def turn_count(self, meeting_id: str) -> int:
        """How many turns the meeting has; 0 for a meeting the corpus does not hold."""
        info = self.meetings.get(meeting_id)
        return info.turns if info is not None else 0


def scan_corpus(corpus: Corpus, queries: Sequence[Query] | None = None, *,
                on_meeting: Callable[[Meeting], None] | None = None) -> CorpusScan:
    """Read the queries (unless given) and every meeting once. ``on_meeting`` sees each meeting as it
    is read, so a caller that needs more from the text does not read the corpus a second time."""
    qs = tuple(corpus.queries() if queries is None else queries)
    order: list[str] = []
    info: dict[str, MeetingInfo] = {}
    duplicates: list[str] = []
    dense: list[str] = []
    times: list[str] = []
    overlaps: list[str] = []
    for m in corpus.iter_meetings():
        if m.id in info:
            duplicates.append(m.id)
        order.append(m.id)
        info[m.id] = MeetingInfo(m.title, m.recorded_date, len(m.turns), m.duration)
        prev_start: float | None = None
        for pos, t in enumerate(m.turns):
            if t.index != pos:
                dense.append(f"{m.id} turn at position {pos} has index {t.index}")
            if not (0 <= t.start <= t.end <= m.duration) or (prev_start is not None and t.start < prev_start):
                times.append(f"{m.id}#{t.index} [{t.start}, {t.end}] (duration {m.duration})")
            prev_start = t.start
        overlaps.extend(self_overlaps(m))
        if on_meeting is not None:
            on_meeting(m)
    return CorpusScan(manifest=corpus.manifest, queries=qs, meeting_order=tuple(order), meetings=info,
                      duplicate_meetings=tuple(duplicates), dense_problems=tuple(dense), time_problems=tuple(times),
                      self_overlaps=tuple(overlaps))


def self_overlaps(m: Meeting) -> list[str]:
    """Each turn that starts before an earlier-starting turn of the same speaker has ended.

    A passage is one speaker's turns over a span of time (docs/design.md §6), and it covers every turn of its
    speaker that shares that time: if a speaker overlapped themselves, a passage could be judged for a turn
    it does not hold. A zero-duration turn inside another turn of its speaker counts as an overlap too."""
    by_speaker: dict[str, list[Turn]] = {}
    for t in m.turns:
        by_speaker.setdefault(t.speaker, []).append(t)
    out = []
    for speaker in sorted(by_speaker):
        latest: Turn | None = None
        for t in sorted(by_speaker[speaker], key=lambda t: (t.start, t.end, t.index)):
            if latest is not None and t.start < latest.end - OVERLAP_EPSILON:
                out.append(f"{m.id}#{t.index} starts at {t.start} before {speaker}'s #{latest.index} ends at "
                           f"{latest.end}")
            if latest is None or t.end > latest.end:
                latest = t
    return out


# -- rules a single record must meet (the importers check each record by these before writing) --------

# An id is a column of a TREC run line (split at any whitespace), the head of a passage id and a name in the files
# turnbench writes, so it is 1..MAX_ID printable characters with no space and no path separator.
MAX_ID = 200


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a meeting or query id, or None when it can."""
    if not value:
        return "is empty"
    if len(value) > MAX_ID:
        return f"is {len(value)} characters long, more than {MAX_ID}"
    bad = next((c for c in value if not c.isprintable() or c in " /\\"), None)
    if bad is not None:
        return (f"holds {bad!r}, which a TREC run line (whitespace-separated columns) or a file name cannot carry; "
                "an id is printable characters with no space, '/' or '\\'")
    return None


def meeting_problems(m: Meeting) -> list[str]:
    """What is wrong with one meeting by the rules of a single record: its id, and at least one turn (a meeting
    without turns yields no passage, and the loader refuses a corpus holding one)."""
    problems = [f"meeting id {m.id!r} {why}" for why in [id_problem(m.id)] if why]
    if not m.turns:
        problems.append(f"meeting {m.id} has no turns")
    return problems


# -- the checks --------------------------------------------------------------------------------------

def check_manifest_hashes(scan: CorpusScan) -> CheckResult:
    # open_corpus refused any mismatch before the scan, so reaching here means every hash matched
    files = scan.manifest["files"]
    return CheckResult("manifest_hashes", "pass",
                       f"{len(files)} files match their sha256; corpus {scan.manifest['corpus_sha256'][:12]}")


def check_manifest_counts(scan: CorpusScan) -> CheckResult:
    counts = scan.manifest.get("counts", {})
    problems = []
    n_meetings, n_queries = len(scan.meeting_order), len(scan.queries)
    if "meetings" in counts and counts["meetings"] != n_meetings:
        problems.append(f"manifest says {counts['meetings']} meetings, files hold {n_meetings}")
    if "queries" in counts and counts["queries"] != n_queries:
        problems.append(f"manifest says {counts['queries']} queries, queries.jsonl holds {n_queries}")
    n_turns = sum(i.turns for i in scan.meetings.values())
    if "turns" in counts and counts["turns"] != n_turns:
        problems.append(f"manifest says {counts['turns']} turns, files hold {n_turns}")
    return result_of("manifest_counts", problems, f"{n_meetings} meetings, {n_turns} turns, {n_queries} queries")


def check_meeting_ids_unique(scan: CorpusScan) -> CheckResult:
    return result_of("meeting_ids_unique", [f"{m} repeated" for m in scan.duplicate_meetings],
                     f"{len(scan.meetings)} distinct meeting ids")


def check_query_ids_unique(scan: CorpusScan) -> CheckResult:
    seen: set[str] = set()
    dup = []
    for q in scan.queries:
        if q.id in seen:
            dup.append(f"{q.id} repeated")
        seen.add(q.id)
    return result_of("query_ids_unique", dup, f"{len(seen)} distinct query ids")


def check_ids_portable(scan: CorpusScan) -> CheckResult:
    problems = [f"meeting id {mid!r} {why}" for mid in scan.meeting_order for why in [id_problem(mid)] if why]
    problems += [f"query id {q.id!r} {why}" for q in scan.queries for why in [id_problem(q.id)] if why]
    return result_of("ids_portable", problems, "every meeting and query id can be a TREC run column and a file name")


def check_meetings_have_turns(scan: CorpusScan) -> CheckResult:
    empty = [f"meeting {mid} has no turns" for mid in scan.meeting_order if scan.turn_count(mid) == 0]
    return result_of("meetings_have_turns", empty, "every meeting has at least one turn")


def check_turn_indices_dense(scan: CorpusScan) -> CheckResult:
    return result_of("turn_indices_dense", scan.dense_problems, "every meeting's turns are indexed 0..n-1")


def check_times_ordered(scan: CorpusScan) -> CheckResult:
    return result_of("times_ordered", scan.time_problems,
                     "starts non-decreasing, start <= end, all within [0, duration]")


def check_speaker_turns_disjoint(scan: CorpusScan) -> CheckResult:
    return result_of("speaker_turns_disjoint", scan.self_overlaps, "no speaker's turns overlap each other in time")


def check_gold_refs_real(scan: CorpusScan) -> CheckResult:
    problems = []
    for q in scan.queries:
        if q.scored_on == "retrieval" and not q.gold_meetings:
            problems.append(f"{q.id}: no gold meetings")
        for mid in q.gold_meetings:
            if mid not in scan.meetings:
                problems.append(f"{q.id}: gold meeting {mid} does not exist")
        for mid, ranges in q.gold_turns.items():
            if mid not in q.gold_meetings:
                problems.append(f"{q.id}: gold turns for {mid}, which is not a gold meeting")
            n = scan.turn_count(mid)
            for a, b in ranges:
                if not 0 <= a <= b < n:
                    problems.append(f"{q.id}: range [{a}, {b}] outside {mid}'s {n} turns")
        for kind, turns in (("answer", q.answer_turns), ("speaker", q.speaker_turns)):
            for mid, ts in turns.items():
                n = scan.turn_count(mid)
                problems.extend(f"{q.id}: {kind} turn {mid}#{t} does not exist" for t in ts if not 0 <= t < n)
        if q.scored_on == "retrieval" and q.gold_level == "turn" and not any(q.gold_turns.values()):
            problems.append(f"{q.id}: turn-level gold without turn ranges")
        if q.cls == "aggregation":
            if q.answer is None:
                problems.append(f"{q.id}: aggregation query without an answer")
            elif q.answer.type == "meeting_set":
                problems.extend(f"{q.id}: answer meeting {m} does not exist" for m in q.answer.meetings or ()
                                if m not in scan.meetings)
    return result_of("gold_refs_real", problems, "every gold meeting, range and answer turn exists")


def check_gold_spans_cover_answers(scan: CorpusScan) -> CheckResult:
    problems: list[str] = []
    for q in scan.queries:
        if q.speaker and not any(q.speaker_turns.values()):
            problems.append(f"{q.id}: names {q.speaker} and none of their turns")
        for kind, turns in (("answer", q.answer_turns), ("speaker", q.speaker_turns)):
            for mid, ts in turns.items():
                ranges = q.gold_turns.get(mid, ())
                problems.extend(f"{q.id}: {kind} turn {mid}#{t} outside its gold spans" for t in ts
                                if not any(a <= t <= b for a, b in ranges))
    return result_of("gold_spans_cover_answers", problems,
                     "every answer turn, and every turn of a speaker a query names, lies inside a gold span")


GenericCheck = Callable[[CorpusScan], CheckResult]
GENERIC: tuple[GenericCheck, ...] = (
    check_manifest_hashes, check_manifest_counts, check_meeting_ids_unique, check_query_ids_unique,
    check_ids_portable, check_meetings_have_turns, check_turn_indices_dense, check_times_ordered,
    check_speaker_turns_disjoint, check_gold_refs_real, check_gold_spans_cover_answers,
)


def generic_results(scan: CorpusScan) -> list[CheckResult]:
    """Every generic check's result, in the fixed order of ``GENERIC``."""
    return [run_check(c, scan) for c in GENERIC]
