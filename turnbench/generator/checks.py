"""The synthetic checks: a generated corpus's gold, re-derived from the text on disk.

This module holds the checks of the ranked classes (lookup, multi_file, summarize) and the lexical gap;
``aggregation_checks`` holds those of the aggregation rules; ``SYNTHETIC`` lists them all in their order.

They apply only to a corpus written by turnbench.generator with its facts.jsonl. Each is a pure function
of a ``SyntheticScan``: facts.jsonl says what to look for and where it claims it was written, and every
count, set, maximum and location is compared with what the scan found in the turns themselves, under
the contracts of ``turnbench.generator.contracts``.
"""

from __future__ import annotations

from collections.abc import Callable

from turnbench.corpus.checks import CheckResult, result_of
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
    PARAPHRASE_MAX_OVERLAP,
    contains_tokens,
    content_words,
    series_name,
    series_of_title,
    tokens,
)
from turnbench.generator.scan import LocatedFact, SyntheticScan


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
    qs = scan.queries_by_id()
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
    # an alias turn establishes a paraphrased question's description; it names the subject and adds nothing
    aliases = {(f["meeting"], f["turn"]) for f in scan.located_of("alias")}
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
            subject_turns = {t for m, t in scan.subject_hits.get(f["subject"].lower(), ())
                             if m == f["meeting"] and (m, t) not in aliases}
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


def check_paraphrase_gap(scan: SyntheticScan) -> CheckResult:
    """A paraphrased question shares at most ``PARAPHRASE_MAX_OVERLAP`` content words with its answer turns,
    names no subject, and uses a description that an alias turn of a gold meeting (not an answer turn)
    establishes for the subject."""
    problems = []
    aliases: dict[str, list[LocatedFact]] = {}
    for f in scan.located_of("alias"):
        aliases.setdefault(f["query"], []).append(f)
    overlap: dict[int, int] = {}
    n = 0
    for q in scan.queries:
        if q.surface != "paraphrase" or q.scored_on != "retrieval":
            continue
        n += 1
        said: set[str] = set()
        for mid, ts in sorted(q.answer_turns.items()):
            for t in ts:
                said |= content_words(scan.turn(mid, t).text)
        shared = sorted(content_words(q.text) & said)
        overlap[len(shared)] = overlap.get(len(shared), 0) + 1
        if len(shared) > PARAPHRASE_MAX_OVERLAP:
            problems.append(f"{q.id} shares {len(shared)} content words with its answer turns: {', '.join(shared)}")
        found = aliases.get(q.id, [])
        if not found:
            problems.append(f"{q.id}: no alias turn establishes what it describes")
        for a in found:
            where = f"{a['meeting']}#{a['turn']}"
            spoken = tokens(scan.turn(a["meeting"], a["turn"]).text)
            if a["meeting"] not in q.gold_meetings or a["turn"] in q.answer_turns.get(a["meeting"], ()):
                problems.append(f"{q.id}: alias {where} is not another turn of a gold meeting")
            elif not (contains_tokens(spoken, tuple(tokens(a["description"])))
                      and a["subject"].lower() in spoken):
                problems.append(f"{q.id}: alias {where} does not name {a['subject']} as the {a['description']}")
            if not contains_tokens(tokens(q.text), tuple(tokens(a["description"]))):
                problems.append(f"{q.id} does not use the description '{a['description']}'")
            if a["subject"].lower() in tokens(q.text):
                problems.append(f"{q.id} names its subject {a['subject']}")
    spread = ", ".join(f"{k}: {v}" for k, v in sorted(overlap.items()))
    return result_of("paraphrase_gap", problems,
                     f"{n} paraphrased questions, content words shared with the answer turns {{{spread}}}")


SyntheticCheck = Callable[[SyntheticScan], CheckResult]
SYNTHETIC: tuple[SyntheticCheck, ...] = (
    check_facts_located, check_lookup_answer_in_turn, check_phrase_exclusivity, check_multi_file_components,
    check_summarize_covers_series, check_marker_counts_exact, check_deferral_counts_exact,
    check_attendance_max_unique, check_month_counts_exact, check_no_phrase_inside_another,
    check_near_misses_not_counted, check_planted_in_short_turns, check_aggregation_coverage,
    check_series_named_in_speech, check_paraphrase_gap, check_invitee_trap_share,
)
