"""The synthetic checks of the aggregation rules (R3–R7): every count, set and maximum recomputed from the
text on disk with the contracts of ``turnbench.generator.contracts``, the near-misses shown not to count,
and the invitee trap shown to be there. Pure functions of a ``SyntheticScan``, like ``generator/checks.py``.
"""

from __future__ import annotations

import datetime

from turnbench.corpus.checks import CheckResult, result_of
from turnbench.corpus.records import AGGREGATION_RULES, MONTHS
from turnbench.generator.contracts import (
    INVITEE_TRAP_SHARE,
    MAX_PLANTED_TURN_WORDS,
    TargetFact,
    contains_tokens,
    deferral_pattern,
    series_name,
    tokens,
)
from turnbench.generator.scan import SyntheticScan

# R7 month labels are "{Month} {year}"; matching is case-insensitive.
_MONTH_NAMES = tuple(m.lower() for m in MONTHS)


def _month_of(label: str) -> tuple[int, int]:
    name, year = label.lower().split()
    return int(year), _MONTH_NAMES.index(name) + 1


def _year_month(iso: str | None) -> tuple[int, int] | None:
    if not iso:
        return None
    d = datetime.date.fromisoformat(iso)
    return d.year, d.month


def _marker_meetings(scan: SyntheticScan, phrase: str) -> set[str]:
    return {m for m, _, _ in scan.phrase_hits_of(phrase)}


def _marker_facts_agree(scan: SyntheticScan, qid: str, phrase: str, problems: list[str]) -> None:
    written = sorted((f["meeting"], f["turn"]) for f in scan.located_of("marker") if f.get("query") == qid)
    found = sorted((m, t) for m, t, _ in scan.phrase_hits_of(phrase))
    if sorted(set(written)) != sorted(set(found)):
        problems.append(f"{qid}: '{phrase}' found in turns {found[:4]}, facts.jsonl wrote {written[:4]}")


def check_marker_counts_exact(scan: SyntheticScan) -> CheckResult:
    problems: list[str] = []
    qs = scan.queries_by_id()
    targets = scan.targets_of("R3") + scan.targets_of("R4")
    for f in targets:
        q = qs.get(f["query"])
        meetings = _marker_meetings(scan, f["phrase"])
        if q is None or q.answer is None:
            problems.append(f"{f['query']}: no such aggregation query")
        elif f["rule"] == "R3" and q.answer.count != len(meetings):
            problems.append(f"{q.id}: answer {q.answer.count}, text has '{f['phrase']}' in {len(meetings)} meetings")
        elif f["rule"] == "R4" and sorted(q.answer.meetings or ()) != sorted(meetings):
            problems.append(f"{q.id}: answer {len(q.answer.meetings or ())} meetings, text has "
                            f"'{f['phrase']}' in {len(meetings)} (differ: "
                            f"{sorted(set(q.answer.meetings or ()) ^ meetings)[:4]})")
        _marker_facts_agree(scan, f["query"], f["phrase"], problems)
    return result_of("marker_counts_exact", problems, f"{len(targets)} R3/R4 answers recomputed by phrase match")


def check_month_counts_exact(scan: SyntheticScan) -> CheckResult:
    problems: list[str] = []
    qs = scan.queries_by_id()
    targets = scan.targets_of("R7")
    for f in targets:
        q = qs.get(f["query"])
        year, month = _month_of(f["month"])
        meetings = {m for m in _marker_meetings(scan, f["phrase"])
                    if _year_month(scan.corpus.meetings[m].recorded_date) == (year, month)}
        if q is None or q.answer is None:
            problems.append(f"{f['query']}: no such aggregation query")
        elif q.answer.count != len(meetings):
            problems.append(f"{q.id}: answer {q.answer.count}, text has '{f['phrase']}' in {len(meetings)} "
                            f"meetings of {f['month']}")
        _marker_facts_agree(scan, f["query"], f["phrase"], problems)
    return result_of("month_counts_exact", problems, f"{len(targets)} R7 answers recomputed by phrase match and month")


def check_deferral_counts_exact(scan: SyntheticScan) -> CheckResult:
    problems = []
    qs = scan.queries_by_id()
    targets = scan.targets_of("R5")
    for f in targets:
        q = qs.get(f["query"])
        hits = scan.deferral_hits.get(f["item"].lower(), ())
        if q is None or q.answer is None:
            problems.append(f"{f['query']}: no such aggregation query")
        elif q.answer.count != len(hits):
            problems.append(f"{q.id}: answer {q.answer.count}, text defers the {f['item']} {len(hits)} times")
        written = sorted((d["meeting"], d["turn"]) for d in scan.located_of("deferral") if d.get("query") == f["query"])
        if written != sorted((m, t) for m, t, _ in hits):
            problems.append(f"{f['query']}: deferrals of the {f['item']} found at {len(hits)} places, "
                            f"facts.jsonl wrote {len(written)}")
    return result_of("deferral_counts_exact", problems, f"{len(targets)} R5 answers recomputed by the deferral pattern")


def _sessions(scan: SyntheticScan, f: TargetFact, problems: list[str]) -> list[str]:
    """The sessions of an R6 question's series as the transcripts show them: the meetings in which a turn says the
    series' full name (docs/question-grammar.md §1). Where that is not every session the generator recorded (by title
    or ``meta``), or a slot it names is not the weekday every session fell on, a problem says so."""
    team, kind = f["team"], f["kind"]
    spoken = scan.said_in(series_name(team, kind))
    recorded = [m for m in scan.corpus.meeting_order if scan.series_of_meeting(m) == (team, kind)]
    if spoken != recorded:
        problems.append(f"{f['query']}: the {team} {kind} is named in {len(spoken)} meetings, it has "
                        f"{len(recorded)} sessions (differ: {sorted(set(spoken) ^ set(recorded))[:4]})")
    slot = f.get("slot")
    if slot:
        days = {datetime.date.fromisoformat(d).strftime("%A") for d in
                (scan.corpus.meetings[m].recorded_date for m in spoken) if d}
        if days != {slot}:
            problems.append(f"{f['query']}: the {team} {kind} meets on {', '.join(sorted(days))}, not {slot}s")
        if not set(scan.said_in(tuple(tokens(f"{slot} {team} {kind}")))) & set(spoken):
            problems.append(f"{f['query']}: no session of the {team} {kind} says it is the {slot} one")
    return spoken


def check_attendance_max_unique(scan: SyntheticScan) -> CheckResult:
    """Every R6 answer recomputed from the transcripts alone: the series' sessions are the meetings that say its
    full name, attendance is speaking in one, and the person with the most is unique."""
    problems: list[str] = []
    qs = scan.queries_by_id()
    targets = scan.targets_of("R6")
    for f in targets:
        q = qs.get(f["query"])
        counts: dict[str, int] = {}
        for mid in _sessions(scan, f, problems):
            for p in scan.spoke[mid]:
                counts[p] = counts.get(p, 0) + 1
        top = max(counts.values(), default=0)
        leaders = sorted(p for p, c in counts.items() if c == top)
        if len(leaders) != 1:
            problems.append(f"{f['query']}: {len(leaders)} people share the maximum {top}")
        elif q is None or q.answer is None or (q.answer.speaker, q.answer.count) != (leaders[0], top):
            got = (q.answer.speaker, q.answer.count) if q and q.answer else None
            problems.append(f"{f['query']}: answer {got}, text says ({leaders[0]!r}, {top})")
    return result_of("attendance_max_unique", problems,
                     f"{len(targets)} R6 answers recomputed from who spoke in the sessions that name their series")


def check_no_phrase_inside_another(scan: SyntheticScan) -> CheckResult:
    problems = []
    markers = sorted({tuple(tokens(f["phrase"])) for f in scan.targets_of() if "phrase" in f})
    others = sorted(set(markers) | {tuple(tokens(f["phrase"])) for f in scan.located_of("near_miss")})
    for m in markers:
        for p in others:
            if p != m and contains_tokens(p, m):
                problems.append(f"'{' '.join(m)}' inside '{' '.join(p)}'")
    items = sorted({f["item"].lower() for f in scan.targets_of("R5")})
    for i in items:
        pat = deferral_pattern(i)
        problems.extend(f"'defer the {i}' matches inside 'defer the {j}'" for j in items
                        if j != i and pat.search(f"defer the {j}"))
    return result_of("no_phrase_inside_another", problems,
                     f"{len(markers)} marker phrases, {len(others) - len(markers)} near-misses, "
                     f"{len(items)} items disjoint")


def check_near_misses_not_counted(scan: SyntheticScan) -> CheckResult:
    problems = []
    nm = scan.located_of("near_miss")
    for f in nm:
        hits = scan.phrase_hits_of(f["phrase"])
        if (f["meeting"], f["turn"]) not in {(m, t) for m, t, _ in hits}:
            problems.append(f"near-miss '{f['phrase']}' missing from {f['meeting']}#{f['turn']}")
        if contains_tokens(tokens(f["text"]), tuple(tokens(f["of"]))):
            problems.append(f"near-miss sentence '{f['text']}' contains the marker '{f['of']}'")
    dm = scan.located_of("deferral_near_miss")
    for f in dm:
        if deferral_pattern(f["item"]).search(f["text"]):
            problems.append(f"deferral near-miss '{f['text']}' matches the pattern for '{f['item']}'")
    per_rule = {r: 0 for r in ("R3", "R4", "R5", "R7")}
    rule_of = {f["query"]: f["rule"] for f in scan.targets_of()}
    for f in nm + dm:
        rule = rule_of.get(f["query"])
        if rule in per_rule:
            per_rule[rule] += 1
    problems.extend(f"no near-miss planted for {r}" for r, c in per_rule.items() if c == 0 and scan.targets_of(r))
    return result_of("near_misses_not_counted", problems,
                     f"{len(nm)} phrase and {len(dm)} deferral near-misses present and outside the contracts")


def check_planted_in_short_turns(scan: SyntheticScan) -> CheckResult:
    problems = [f"a phrase could cross turns: {b}" for b in scan.boundary_hits]
    for p, hits in scan.phrase_hits.items():
        problems.extend(f"'{' '.join(p)}' in {m}#{t}, a {w}-word turn" for m, t, w in hits
                        if w > MAX_PLANTED_TURN_WORDS)
    for item, hits in scan.deferral_hits.items():
        problems.extend(f"'defer the {item}' in {m}#{t}, a {w}-word turn" for m, t, w in hits
                        if w > MAX_PLANTED_TURN_WORDS)
    return result_of("planted_in_short_turns", problems,
                     f"every phrase and deferral sits inside one turn of at most {MAX_PLANTED_TURN_WORDS} words")


def check_aggregation_coverage(scan: SyntheticScan) -> CheckResult:
    problems = []
    agg = [q for q in scan.queries if q.cls == "aggregation"]
    for q in agg:
        if q.meta.get("grammar") not in ("in", "out"):
            problems.append(f"{q.id}: meta.grammar is {q.meta.get('grammar')!r}")
        if q.scored_on != "answer":
            problems.append(f"{q.id}: aggregation scored on {q.scored_on}")
    for rule in AGGREGATION_RULES:
        qs = [q for q in agg if q.rule == rule]
        if not qs:
            continue
        if len({q.surface for q in qs}) < 3:
            problems.append(f"{rule}: {len({q.surface for q in qs})} phrasing families, need 3")
        if not any(q.meta.get("grammar") == "out" for q in qs):
            problems.append(f"{rule}: no out-of-grammar family")
    zeros = [q for q in agg if q.answer and ((q.answer.type == "count" and q.answer.count == 0)
                                             or (q.answer.type == "meeting_set" and not q.answer.meetings))]
    if agg and not zeros:
        problems.append("no aggregation answer of zero")
    return result_of("aggregation_coverage", problems,
                     f"{len(agg)} aggregation queries, {len(zeros)} zero answers, 3+ families per rule")




def _leaders(counts: dict[str, int]) -> list[tuple[str, int]]:
    top = max(counts.values(), default=0)
    return sorted((p, c) for p, c in counts.items() if c == top)


def check_invitee_trap_share(scan: SyntheticScan) -> CheckResult:
    """Everyone who spoke is on the invitee list, and at least ``INVITEE_TRAP_SHARE`` of the R6 questions that
    can hold the trap (a series of three or more sessions) have another answer when attendance is counted
    from invitations: the gold (speaker, count) is not among the invitee count's leaders."""
    problems = [f"{mid}: {', '.join(sorted(scan.spoke[mid] - invited))} spoke without being invited"
                for mid, invited in sorted(scan.invited.items()) if not scan.spoke.get(mid, frozenset()) <= invited]
    qs = scan.queries_by_id()
    targets = scan.targets_of("R6")
    trappable = changed = 0
    for f in targets:
        q = qs.get(f["query"])
        sessions = _sessions(scan, f, [])
        invited: dict[str, int] = {}
        for mid in sessions:
            for p in scan.invited.get(mid, frozenset()):
                invited[p] = invited.get(p, 0) + 1
        if len(sessions) < 3:
            continue
        trappable += 1
        if q is None or q.answer is None:
            problems.append(f"{f['query']}: no such aggregation query")
        elif (q.answer.speaker, q.answer.count) not in _leaders(invited):
            changed += 1
    if trappable and changed < INVITEE_TRAP_SHARE * trappable:
        problems.append(f"{changed} of {trappable} R6 questions on series of 3+ sessions change when invitees are "
                        f"counted; need at least {INVITEE_TRAP_SHARE:.2f}")
    detail = (f"{changed} of {len(targets)} R6 answers ({changed / len(targets):.2f}) change if invitees are counted"
              if trappable else f"{len(targets)} R6 questions, none on a series of 3+ sessions: no trap possible")
    return result_of("invitee_trap_share", problems, detail)
