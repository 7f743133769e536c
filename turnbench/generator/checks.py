"""The synthetic checks: a generated corpus's gold, re-derived from the text on disk.

This module holds the checks of the ranked classes (lookup, multi_file, summarize) and the questions' distance;
``aggregation_checks`` holds those of the aggregation rules; ``SYNTHETIC`` lists them all in their order.

They apply only to a corpus written by turnbench.generator with its facts.jsonl. Each is a pure function
of a ``SyntheticScan``: facts.jsonl says what to look for and where it claims it was written, and every
count, set, maximum and location is compared with what the scan found in the turns themselves, under
the contracts of ``turnbench.generator.contracts``.
"""

from __future__ import annotations

from collections.abc import Callable

from turnbench.corpus.checks import CheckResult, result_of
from turnbench.corpus.records import Query
from turnbench.generator.aggregation_checks import (
    check_aggregation_coverage,
    check_attendance_max_unique,
    check_deferral_counts_exact,
    check_invitee_trap_share,
    check_marker_counts_exact,
    check_month_counts_exact,
    check_near_misses_not_counted,
    check_no_phrase_inside_another,
    check_planted_in_short_turns,
)
from turnbench.generator.contracts import (
    MENTION_SHARE,
    contains_tokens,
    series_name,
    tokens,
)
from turnbench.generator.lexicon import OVERLAP_MIN, calibration_gap, overlap_bound, overlap_share
from turnbench.generator.scan import LocatedFact, SpokenTurn, SyntheticScan


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
        if q.cls != "lookup" or q.rule != "R1":
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
    return result_of("lookup_answer_in_turn", problems, f"{n} lookup answers in their declared turns")


def check_fact_unique(scan: SyntheticScan) -> CheckResult:
    """Exactly one meeting holds each fact: its subject and its value are said together in exactly one turn of the
    corpus, the one facts.jsonl names (the subject is talked about elsewhere, never with that value), and no two
    facts ask the same thing of one subject (a (subject, template) pair is planted once, a multi-file question's
    components apart)."""
    problems = []
    qs = scan.queries_by_id()
    asked: dict[tuple[str, str], str] = {}
    n = 0
    for f in scan.located_of("lookup_answer", "component"):
        q = qs.get(f["query"])
        if q is None:
            problems.append(f"facts name unknown query {f['query']}")
            continue
        n += 1
        stating = sorted(set(scan.fact_hits_of(f["subject"], f["value"])))
        if stating != [(f["meeting"], f["turn"])]:
            problems.append(f"{q.id}: {f['subject']} with {f['value']} is said in {len(stating)} turns "
                            f"{[f'{m}#{t}' for m, t in stating[:3]]}, must be one ({f['meeting']}#{f['turn']})")
        pair = (f["subject"].lower(), f.get("template", ""))
        if asked.setdefault(pair, q.id) != q.id:
            problems.append(f"{q.id} and {asked[pair]} ask the same of {f['subject']} ({pair[1]})")
    return result_of("fact_unique", sorted(set(problems)), f"{n} planted facts each stated in exactly one turn")


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
        series = {scan.series_of_meeting(m) for m in q.gold_meetings}
        if len(series) != 1 or None in series:
            problems.append(f"{q.id}: gold meetings span {len(series)} series")
        for f in fs:
            text = scan.turn(f["meeting"], f["turn"]).text
            if f["text"] not in text or tuple(q.answer_turns.get(f["meeting"], ())) != (f["turn"],):
                problems.append(f"{q.id}: component not in declared turn {f['meeting']}#{f['turn']}")
    return result_of("multi_file_components", problems, f"{n} multi-file queries spread over 2-4 sessions")


def check_summarize_covers_series(scan: SyntheticScan) -> CheckResult:
    problems = []
    by_series: dict[tuple[str, str], list[str]] = {}
    for mid in scan.corpus.meeting_order:
        key = scan.series_of_meeting(mid)
        if key:
            by_series.setdefault(key, []).append(mid)
    n = 0
    for q in scan.queries:
        if q.cls != "summarize" or q.gold_level != "meeting":
            continue
        n += 1
        keys = {scan.series_of_meeting(m) for m in q.gold_meetings}
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


def check_series_named_in_speech(scan: SyntheticScan) -> CheckResult:
    """Every planted series mention is in a session of the series it names, in the form recorded; no turn
    names another series in full; every series is named in full in one of its sessions; between
    ``MENTION_SHARE`` of the sessions say what they are and at least one never does."""
    problems = []
    named: set[str] = set()
    for f in scan.located_of("series_mention"):
        where = f"{f['meeting']}#{f['turn']}"
        if scan.series_of_meeting(f["meeting"]) != (f["team"], f["kind"]):
            problems.append(f"{where} names the {f['team']} {f['kind']} in a session of another series")
            continue
        said = tokens(scan.turn(f["meeting"], f["turn"]).text)
        form = {"full": series_name(f["team"], f["kind"]), "team": (*tokens(f["team"]), "team"),
                "kind": tuple(tokens(f["kind"]))}.get(f["form"], ())
        if not form or not contains_tokens(said, form):
            problems.append(f"{where} does not say the {f['form']} name of the {f['team']} {f['kind']}")
        else:
            named.add(f["meeting"])
    full: dict[tuple[str, str], set[str]] = {}
    for name, hits in scan.series_hits.items():
        for mid, t in hits:
            key = scan.series_of_meeting(mid)
            if key is None or series_name(*key) != name:
                problems.append(f"{mid}#{t} names the series '{' '.join(name)}', not its own")
            else:
                full.setdefault(key, set()).add(mid)
    sessions: dict[tuple[str, str], int] = {}
    for mid in scan.corpus.meeting_order:
        key = scan.series_of_meeting(mid)
        if key is not None:
            sessions[key] = sessions.get(key, 0) + 1
    problems.extend(f"no session of the {t} {k} names it in full" for (t, k) in sorted(sessions)
                    if (t, k) not in full)
    n = sum(sessions.values())
    share = len(named) / n if n else 0.0
    lo, hi = MENTION_SHARE
    if n and not lo <= share <= hi:
        problems.append(f"{len(named)} of {n} sessions say what they are ({share:.2f}), want {lo}-{hi}")
    if n and len(named) == n:
        problems.append("every session says what it is; some never should")
    return result_of("series_named_in_speech", problems,
                     f"{len(named)} of {n} sessions ({share:.2f}) name their series or team in speech")


def check_discussion_blocks(scan: SyntheticScan) -> CheckResult:
    """A discussion question's gold (R9, or a summary request about one discussion) is its block: the span
    facts.jsonl records, several speakers (three, or all of a smaller meeting's), opened by a turn that names the
    subject's aspect; the person an opinion question names speaks in it and is addressed in it by first name; and
    no turn outside the block names that aspect of that subject."""
    problems = []
    blocks = {f["query"]: f for f in scan.located_of("discussion") if "query" in f}
    n = 0
    for q in scan.queries:
        if not (q.rule == "R9" or (q.cls == "summarize" and q.surface == "discussion")):
            continue
        n += 1
        f = blocks.get(q.id)
        if f is None or not isinstance(f.get("last"), int):
            problems.append(f"{q.id}: no discussion block in facts.jsonl")
            continue
        mid, first, last = f["meeting"], f["turn"], f["last"]
        if q.gold_meetings != (mid,) or tuple(q.gold_turns.get(mid, ())) != ((first, last),):
            problems.append(f"{q.id}: gold {dict(q.gold_turns)}, the block is {mid}#{first}-{last}")
            continue
        said = [scan.turn(mid, t) for t in range(first, last + 1)]
        speakers = {t.speaker for t in said}
        need = min(3, len(scan.spoke.get(mid, ())))
        if len(speakers) < need:
            problems.append(f"{q.id}: the block has {len(speakers)} speakers, want {need}")
        topic = tuple(tokens(f"{f['subject']} {f['aspect']}"))
        if not contains_tokens(tokens(said[0].text), topic):
            problems.append(f"{q.id}: the block's first turn does not name the {f['subject']} {f['aspect']}")
        outside = sorted(k for k in scan.topic_hits.get(topic, ()) if k[0] != mid or not first <= k[1] <= last)
        if outside:
            problems.append(f"{q.id}: the {f['subject']} {f['aspect']} is named outside its block, in "
                            f"{', '.join(f'{m}#{t}' for m, t in outside[:3])}")
        person = f.get("person")
        if q.surface == "opinion":
            spoke = [t for t in said if t.speaker.split(" ")[0] == person]
            if not person or not spoke or person.lower() not in tokens(" ".join(t.text for t in said)):
                problems.append(f"{q.id}: {person or 'nobody'} is not both addressed and speaking in the block")
            elif person.lower() not in tokens(q.text):
                problems.append(f"{q.id} does not name {person}")
            else:
                problems.extend(_named_speaker(q, mid, first, said, topic))
    return result_of("discussion_blocks", problems, f"{n} discussion questions, each with its one block")


def _named_speaker(q: Query, mid: str, first: int, said: list[SpokenTurn], topic: tuple[str, ...]) -> list[str]:
    """An opinion question's gold names its speaker and exactly the block's turns they spoke; one of those takes a
    stand on the aspect, and so does a turn of someone else between the opening and the close (the distractor)."""
    theirs = tuple(first + i for i, t in enumerate(said) if t.speaker == q.speaker)
    if not theirs or not contains_tokens(tokens(q.text), tuple(tokens(q.speaker))):
        return [f"{q.id}: names {q.speaker or 'no speaker'} in its gold, not the person it asks about"]
    if dict(q.speaker_turns) != {mid: theirs}:
        return [f"{q.id}: speaker turns {dict(q.speaker_turns)}, {q.speaker} spoke {mid}#{list(theirs)}"]
    stand = [contains_tokens(tokens(t.text), topic) > 0 for t in said]
    if not any(stand[t - first] for t in theirs):
        return [f"{q.id}: {q.speaker} never names the {' '.join(topic)}"]
    if not any(stand[i] and t.speaker != q.speaker for i, t in enumerate(said) if 0 < i < len(said) - 1):
        return [f"{q.id}: no one but {q.speaker} names the {' '.join(topic)} between the opening and the close "
                "(no distractor)"]
    return []


def check_question_overlap(scan: SyntheticScan) -> CheckResult:
    """The lookup questions' distance from their evidence, recomputed on disk (the share of a question's words its
    answer turns, else its gold turns, hold: ``contracts.question_words``), is distributed as the calibration
    says: the largest gap between its distribution and ``OVERLAP_DECILES``' is at most ``OVERLAP_KS``. Fewer than
    ``OVERLAP_MIN`` questions cannot show it (n/a)."""
    shares = []
    for q in scan.queries:
        if q.cls != "lookup" or q.scored_on != "retrieval" or q.gold_level != "turn":
            continue
        if any(q.answer_turns.values()):
            keys = [(m, t) for m, ts in q.answer_turns.items() for t in ts]
        else:
            keys = [(m, t) for m, rs in q.gold_turns.items() for a, b in rs for t in range(a, b + 1)]
        evidence = frozenset().union(*(scan.words.get(k, frozenset()) for k in keys))
        share = overlap_share(q.text, evidence)
        if share is not None:
            shares.append(share)
    if len(shares) < OVERLAP_MIN:
        return CheckResult("question_overlap", "n/a", f"{len(shares)} lookup questions, fewer than {OVERLAP_MIN}")
    gap = calibration_gap(shares)
    bound = overlap_bound(len(shares))
    mean = sum(shares) / len(shares)
    detail = (f"{len(shares)} lookup questions, mean share {mean:.3f}, largest gap to the calibration {gap:.3f} "
              f"(at most {bound:.3f})")
    return result_of("question_overlap", [detail] if gap > bound else [], detail)


SyntheticCheck = Callable[[SyntheticScan], CheckResult]
SYNTHETIC: tuple[SyntheticCheck, ...] = (
    check_facts_located, check_lookup_answer_in_turn, check_fact_unique, check_multi_file_components,
    check_summarize_covers_series, check_marker_counts_exact, check_deferral_counts_exact,
    check_attendance_max_unique, check_month_counts_exact, check_no_phrase_inside_another,
    check_near_misses_not_counted, check_planted_in_short_turns, check_aggregation_coverage,
    check_series_named_in_speech, check_discussion_blocks, check_question_overlap, check_invitee_trap_share,
)
