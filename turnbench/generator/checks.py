"""The synthetic checks: a generated corpus's gold, re-derived from the text on disk.

They apply only to a corpus written by turnbench.generator with its facts.jsonl. Each is a pure function
of a ``SyntheticScan``: facts.jsonl says what to look for and where it claims it was written, and every
count, set, maximum and location is compared with what the scan found in the turns themselves, under
the contracts of ``turnbench.generator.contracts``.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from turnbench.corpus.checks import CheckResult, result_of
from turnbench.corpus.records import AGGREGATION_RULES, MONTHS, Query
from turnbench.generator.contracts import (
    MAX_PLANTED_TURN_WORDS,
    contains_tokens,
    deferral_pattern,
    series_of_title,
    tokens,
)
from turnbench.generator.scan import LocatedFact, SyntheticScan

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


def _queries_by_id(scan: SyntheticScan) -> dict[str, Query]:
    return {q.id: q for q in scan.queries}


def _series_of_meeting(scan: SyntheticScan, meeting_id: str) -> tuple[str, str] | None:
    info = scan.corpus.meetings.get(meeting_id)
    return series_of_title(info.title if info is not None else "")


def check_facts_located(scan: SyntheticScan) -> CheckResult:
    problems = []
    for f in scan.located:
        speaker, text = scan.turn(f["meeting"], f["turn"])
        if f["text"] not in text:
            problems.append(f"{f['type']} for {f.get('query')} not in {f['meeting']}#{f['turn']}")
        elif speaker != f.get("speaker"):
            problems.append(f"{f['type']} for {f.get('query')}: {f['meeting']}#{f['turn']} is spoken by "
                            f"{speaker!r}, facts say {f.get('speaker')!r}")
    return result_of("facts_located", problems,
                     f"{len(scan.located)} planted sentences found where facts.jsonl says")


def check_lookup_answer_in_turn(scan: SyntheticScan) -> CheckResult:
    problems = []
    setups = {f["query"]: f for f in scan.located_of("lookup_setup")}
    answers = {f["query"]: f for f in scan.located_of("lookup_answer")}
    n = 0
    for q in scan.queries:
        if q.cls != "lookup":
            continue
        n += 1
        a, s = answers.get(q.id), setups.get(q.id)
        if a is None or s is None:
            problems.append(f"{q.id}: no setup/answer fact")
            continue
        mid = a["meeting"]
        if q.gold_meetings != (mid,) or s["meeting"] != mid:
            problems.append(f"{q.id}: gold meetings {list(q.gold_meetings)}, answer written in {mid}")
            continue
        if tuple(q.answer_turns.get(mid, ())) != (a["turn"],):
            problems.append(f"{q.id}: answer turn {list(q.answer_turns.get(mid, ()))}, answer written at {a['turn']}")
        if tuple(q.gold_turns.get(mid, ())) != ((s["turn"], a["turn"]),):
            problems.append(f"{q.id}: gold span {[list(r) for r in q.gold_turns.get(mid, ())]}, "
                            f"setup..answer is [{s['turn']}, {a['turn']}]")
        for t in q.answer_turns.get(mid, ()):
            speaker, text = scan.turn(mid, t)
            if a["text"] not in text:
                problems.append(f"{q.id}: declared answer turn {mid}#{t} does not state the answer")
            elif speaker != a.get("speaker"):
                problems.append(f"{q.id}: answer turn {mid}#{t} spoken by {speaker!r}, the answer was given by "
                                f"{a.get('speaker')!r}")
        s_speaker, s_text = scan.turn(mid, s["turn"])
        if s["text"] not in s_text:
            problems.append(f"{q.id}: setup turn {mid}#{s['turn']} does not ask the question")
        elif s_speaker == a.get("speaker") or s_speaker != s.get("speaker"):
            problems.append(f"{q.id}: setup turn {mid}#{s['turn']} speaker {s_speaker!r} is wrong")
        if q.surface == "verbatim":
            quoted = q.text.strip('"')
            if quoted not in scan.turn(mid, a["turn"]).text:
                problems.append(f"{q.id}: verbatim quote is not in the answer turn")
    return result_of("lookup_answer_in_turn", problems, f"{n} lookup answers in their declared turns")


def check_phrase_exclusivity(scan: SyntheticScan) -> CheckResult:
    """A lookup's answer is stated in exactly one turn of the corpus, its subject named only in that
    meeting and in its recorded echoes; a multi-file subject occurs only in the gold meetings and in
    echo sessions that add no component."""
    problems = []
    qs = _queries_by_id(scan)
    echoes: dict[str, set[str]] = {}
    for f in scan.located_of("lookup_echo", "component_echo"):
        echoes.setdefault(f["query"], set()).add(f["meeting"])
    n = 0
    for f in scan.located_of("lookup_answer", "component"):
        q = qs.get(f["query"])
        hits = scan.subject_hits.get(f["subject"].lower(), ())
        where = {m for m, _ in hits}
        if q is None:
            problems.append(f"facts name unknown query {f['query']}")
            continue
        n += 1
        if f["type"] == "lookup_answer":
            allowed = {f["meeting"]} | echoes.get(q.id, set())
            if f["meeting"] not in where or not where <= allowed:
                problems.append(f"{q.id}: {f['subject']} occurs in {sorted(where)}, allowed {sorted(allowed)}")
            stating = sorted(key for key in set(hits) if f["text"] in scan.subject_texts.get(key, ""))
            if stating != [(f["meeting"], f["turn"])]:
                problems.append(f"{q.id}: the answer is stated in {len(stating)} turns {stating[:3]}, must be one")
        elif not where <= set(q.gold_meetings) | echoes.get(q.id, set()):
            problems.append(f"{q.id}: {f['subject']} occurs outside the gold meetings and its echoes: "
                            f"{sorted(where - set(q.gold_meetings) - echoes.get(q.id, set()))}")
        elif echoes.get(q.id, set()) & set(q.gold_meetings):
            problems.append(f"{q.id}: an echo of {f['subject']} sits in a gold meeting")
    return result_of("phrase_exclusivity", sorted(set(problems)), f"{n} planted answers occur only where gold says")


def check_multi_file_components(scan: SyntheticScan) -> CheckResult:
    problems = []
    comps: dict[str, list[LocatedFact]] = {}
    for f in scan.located_of("component"):
        comps.setdefault(f["query"], []).append(f)
    n = 0
    for q in scan.queries:
        if q.cls != "multi_file":
            continue
        n += 1
        fs = comps.get(q.id, [])
        meetings = [f["meeting"] for f in fs]
        if not 2 <= len(set(q.gold_meetings)) <= 4:
            problems.append(f"{q.id}: {len(q.gold_meetings)} gold meetings, need 2-4")
        if len(set(meetings)) != len(meetings) or sorted(meetings) != sorted(q.gold_meetings):
            problems.append(f"{q.id}: components in {sorted(meetings)}, gold {sorted(q.gold_meetings)}")
        series = {_series_of_meeting(scan, m) for m in q.gold_meetings}
        if len(series) != 1 or None in series:
            problems.append(f"{q.id}: gold meetings span {len(series)} series")
        for f in fs:
            text = scan.turn(f["meeting"], f["turn"]).text
            if f["text"] not in text or tuple(q.answer_turns.get(f["meeting"], ())) != (f["turn"],):
                problems.append(f"{q.id}: component not in declared turn {f['meeting']}#{f['turn']}")
            subject_turns = {t for m, t in scan.subject_hits.get(f["subject"].lower(), ()) if m == f["meeting"]}
            if len(subject_turns) != 1:
                problems.append(f"{q.id}: {f['meeting']} mentions {f['subject']} in {len(subject_turns)} turns")
    return result_of("multi_file_components", problems, f"{n} multi-file queries spread over 2-4 sessions")


def check_summarize_covers_series(scan: SyntheticScan) -> CheckResult:
    problems = []
    by_series: dict[tuple[str, str], list[str]] = {}
    for mid in scan.corpus.meeting_order:
        key = series_of_title(scan.corpus.meetings[mid].title)
        if key:
            by_series.setdefault(key, []).append(mid)
    n = 0
    for q in scan.queries:
        if q.cls != "summarize":
            continue
        n += 1
        keys = {_series_of_meeting(scan, m) for m in q.gold_meetings}
        key = keys.pop() if len(keys) == 1 else None
        if key is None:
            problems.append(f"{q.id}: gold meetings are not one series")
            continue
        if sorted(q.gold_meetings) != sorted(by_series.get(key, [])):
            problems.append(f"{q.id}: gold has {len(q.gold_meetings)} of the {len(by_series.get(key, []))} "
                            f"sessions of {key[0]} — {key[1]}")
        if q.gold_level != "meeting":
            problems.append(f"{q.id}: gold level {q.gold_level}, want meeting")
        for mid in q.gold_meetings:
            if tuple(q.gold_turns.get(mid, ())) != ((0, scan.corpus.meetings[mid].turns - 1),):
                problems.append(f"{q.id}: {mid} gold span is not the whole meeting")
    return result_of("summarize_covers_series", problems, f"{n} summarize queries cover their whole series")


def _marker_meetings(scan: SyntheticScan, phrase: str) -> set[str]:
    return {m for m, _, _ in scan.phrase_hits_of(phrase)}


def _marker_facts_agree(scan: SyntheticScan, qid: str, phrase: str, problems: list[str]) -> None:
    written = sorted((f["meeting"], f["turn"]) for f in scan.located_of("marker") if f.get("query") == qid)
    found = sorted((m, t) for m, t, _ in scan.phrase_hits_of(phrase))
    if sorted(set(written)) != sorted(set(found)):
        problems.append(f"{qid}: '{phrase}' found in turns {found[:4]}, facts.jsonl wrote {written[:4]}")


def check_marker_counts_exact(scan: SyntheticScan) -> CheckResult:
    problems: list[str] = []
    qs = _queries_by_id(scan)
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
    qs = _queries_by_id(scan)
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
    qs = _queries_by_id(scan)
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


def check_attendance_max_unique(scan: SyntheticScan) -> CheckResult:
    problems = []
    qs = _queries_by_id(scan)
    targets = scan.targets_of("R6")
    for f in targets:
        q = qs.get(f["query"])
        counts: dict[str, int] = {}
        for mid in scan.corpus.meeting_order:
            if series_of_title(scan.corpus.meetings[mid].title) == (f["team"], f["kind"]):
                for p in scan.spoke[mid]:
                    counts[p] = counts.get(p, 0) + 1
        top = max(counts.values(), default=0)
        leaders = sorted(p for p, c in counts.items() if c == top)
        if len(leaders) != 1:
            problems.append(f"{f['query']}: {len(leaders)} people share the maximum {top}")
        elif q is None or q.answer is None or (q.answer.speaker, q.answer.count) != (leaders[0], top):
            got = (q.answer.speaker, q.answer.count) if q and q.answer else None
            problems.append(f"{f['query']}: answer {got}, text says ({leaders[0]!r}, {top})")
    return result_of("attendance_max_unique", problems, f"{len(targets)} R6 answers recomputed from who spoke")


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


SyntheticCheck = Callable[[SyntheticScan], CheckResult]
SYNTHETIC: tuple[SyntheticCheck, ...] = (
    check_facts_located, check_lookup_answer_in_turn, check_phrase_exclusivity, check_multi_file_components,
    check_summarize_covers_series, check_marker_counts_exact, check_deferral_counts_exact,
    check_attendance_max_unique, check_month_counts_exact, check_no_phrase_inside_another,
    check_near_misses_not_counted, check_planted_in_short_turns, check_aggregation_coverage,
)
