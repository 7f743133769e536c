"""The corpus validator: named checks that re-derive every gold item from the text on disk.

``validate_corpus(root)`` verifies every manifest hash first (``open_corpus`` raises
CorpusIntegrityError), then reads the meetings once, scanning the text for what facts.jsonl says to
look for, and runs each check. facts.jsonl only says *what* to look for and *where it claims* it was
written; every count, set, maximum and location is recomputed from the turns themselves.

Generic checks apply to any format-v1 corpus (a QMSum import included); synthetic checks apply only
to a corpus written by turnbench.generator with its facts.jsonl, and report "n/a" elsewhere.

Lexical contracts (docs/question-grammar.md states them for the answer engine):
- a phrase is *mentioned* in a turn when its tokens occur consecutively in the turn's tokens, where
  tokens are the lowercased text split on every non-alphanumeric character;
- a *deferral* of an item is a case-insensitive, word-bounded match of ``defer the {item}``;
- a person *attended* a session when they spoke at least one turn in it.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from turnbench.corpus.format import Corpus, open_corpus
from turnbench.corpus.records import AGGREGATION_RULES, Query
from turnbench.errors import CorpusIntegrityError
from turnbench.generator import PRODUCER_NAME

MAX_PLANTED_TURN_WORDS = 150
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
_TOKEN = re.compile(r"[a-z0-9]+")
TITLE = re.compile(r"^(?P<team>.+) — (?P<kind>.+) #(?P<n>[0-9]+)$")
# how many problems a failing check names before it says "... and N more"
SHOW = 5


def tokens(text: str) -> list[str]:
    """The phrase-matching tokens of a text: lowercase, split on non-alphanumerics (standard analyzer)."""
    return _TOKEN.findall(text.lower())


def contains_tokens(haystack: list[str] | tuple[str, ...], needle: tuple[str, ...]) -> int:
    """How many times ``needle`` occurs as a consecutive run in ``haystack``."""
    n, k = len(haystack), len(needle)
    if k == 0:
        return 0
    first = needle[0]
    return sum(1 for i in range(n - k + 1) if haystack[i] == first and tuple(haystack[i:i + k]) == needle)


def deferral_pattern(item: str) -> re.Pattern[str]:
    """The R5 contract: ``defer the {item}``, word-bounded, case-insensitive, single spaces."""
    return re.compile(r"\bdefer the " + re.escape(item.lower()) + r"\b", re.IGNORECASE)


def words(text: str) -> int:
    return len(text.split())


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


@dataclass
class _Ctx:
    corpus: Corpus
    synthetic: bool
    queries: list[Query]
    facts: list[Mapping[str, Any]]
    meeting_order: list[str] = field(default_factory=list)
    info: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> title, date, turns, duration
    duplicate_meetings: list[str] = field(default_factory=list)
    dense_problems: list[str] = field(default_factory=list)
    time_problems: list[str] = field(default_factory=list)
    spoke: dict[str, set[str]] = field(default_factory=dict)
    turns_needed: dict[tuple[str, int], tuple[str, str]] = field(default_factory=dict)  # -> speaker, text
    phrase_hits: dict[tuple[str, ...], list[tuple[str, int, int]]] = field(default_factory=dict)
    boundary_hits: list[str] = field(default_factory=list)
    deferral_hits: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict)
    subject_hits: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    subject_texts: dict[tuple[str, int], str] = field(default_factory=dict)

    def targets(self, rule: str | None = None) -> list[Mapping[str, Any]]:
        return [f for f in self.facts if f.get("type") == "aggregation_target" and (rule is None or f.get("rule") == rule)]

    def located(self, *types: str) -> list[Mapping[str, Any]]:
        return [f for f in self.facts if f.get("meeting") is not None and f.get("type") in types]


def _scan(ctx: _Ctx) -> None:
    """One pass over the meetings, collecting what every check needs."""
    phrases: set[tuple[str, ...]] = set()
    for f in ctx.targets():
        if "phrase" in f:
            phrases.add(tuple(tokens(f["phrase"])))
    for f in ctx.located("near_miss"):
        phrases.add(tuple(tokens(f["phrase"])))
    phrases.discard(())
    by_first: dict[str, list[tuple[str, ...]]] = {}
    for p in sorted(phrases):
        by_first.setdefault(p[0], []).append(p)
    longest = max((len(p) for p in phrases), default=0)
    heads = {p[:k] for p in phrases for k in range(1, len(p))}
    tails = {p[-k:] for p in phrases for k in range(1, len(p))}
    items = sorted({f["item"].lower() for f in ctx.targets("R5") if "item" in f})
    item_re = (re.compile(r"\bdefer the (" + "|".join(re.escape(i) for i in sorted(items, key=len, reverse=True))
                          + r")\b", re.IGNORECASE) if items else None)
    subjects = {f["subject"].lower() for f in ctx.located("lookup_setup", "lookup_answer", "lookup_echo", "component",
                                                          "component_echo") if "subject" in f}
    for f in ctx.facts:
        if f.get("meeting") is not None and isinstance(f.get("turn"), int):
            ctx.turns_needed[(f["meeting"], f["turn"])] = ("", "")
    for q in ctx.queries:
        for mid, ts in q.answer_turns.items():
            for t in ts:
                ctx.turns_needed[(mid, t)] = ("", "")
    ctx.phrase_hits = {p: [] for p in sorted(phrases)}
    ctx.deferral_hits = {i: [] for i in items}
    ctx.subject_hits = {s: [] for s in sorted(subjects)}

    for m in ctx.corpus.iter_meetings():
        if m.id in ctx.info:
            ctx.duplicate_meetings.append(m.id)
        ctx.meeting_order.append(m.id)
        ctx.info[m.id] = {"title": m.title, "date": m.recorded_date, "turns": len(m.turns), "duration": m.duration}
        spoke = ctx.spoke.setdefault(m.id, set())
        prev_start = None
        for pos, t in enumerate(m.turns):
            if t.index != pos:
                ctx.dense_problems.append(f"{m.id} turn at position {pos} has index {t.index}")
            if not (0 <= t.start <= t.end <= m.duration) or (prev_start is not None and t.start < prev_start):
                ctx.time_problems.append(f"{m.id}#{t.index} [{t.start}, {t.end}] (duration {m.duration})")
            prev_start = t.start
            spoke.add(t.speaker)
            key = (m.id, t.index)
            if key in ctx.turns_needed:
                ctx.turns_needed[key] = (t.speaker, t.text)
            if not (by_first or item_re or subjects):
                continue
            toks = tokens(t.text)
            n_words = words(t.text)
            if by_first:
                for i, tok in enumerate(toks):
                    cands = by_first.get(tok)
                    if cands:
                        for p in cands:
                            if tuple(toks[i:i + len(p)]) == p:
                                ctx.phrase_hits[p].append((m.id, t.index, n_words))
                # A chunker may join turns in another order than their indices (overlapping speech
                # sorts by start and end), so no turn may end with a phrase's beginning or start with
                # its end: then no joining of whole turns can make a phrase across two of them.
                for k in range(1, min(longest, len(toks) + 1)):
                    if tuple(toks[-k:]) in heads:
                        ctx.boundary_hits.append(f"{m.id}#{t.index} ends with '{' '.join(toks[-k:])}'")
                    if tuple(toks[:k]) in tails:
                        ctx.boundary_hits.append(f"{m.id}#{t.index} starts with '{' '.join(toks[:k])}'")
            if item_re is not None and "defer" in t.text.lower():
                for hit in item_re.finditer(t.text):
                    ctx.deferral_hits[hit.group(1).lower()].append((m.id, t.index, n_words))
            if subjects:
                hit = subjects.intersection(toks)
                for s in hit:
                    ctx.subject_hits[s].append((m.id, t.index))
                if hit:
                    ctx.subject_texts[(m.id, t.index)] = t.text


# -- check helpers --------------------------------------------------------------------------------

def _result(name: str, problems: list[str], ok_detail: str) -> CheckResult:
    if not problems:
        return CheckResult(name, "pass", ok_detail)
    more = f" ... and {len(problems) - SHOW} more" if len(problems) > SHOW else ""
    return CheckResult(name, "fail", f"{len(problems)} problem(s): " + "; ".join(problems[:SHOW]) + more)


def _series_key(title: str) -> tuple[str, str] | None:
    m = TITLE.match(title)
    return (m.group("team"), m.group("kind")) if m else None


def _month_of(label: str) -> tuple[int, int]:
    name, year = label.lower().split()
    return int(year), MONTHS.index(name) + 1


def _year_month(iso: str | None) -> tuple[int, int] | None:
    if not iso:
        return None
    d = datetime.date.fromisoformat(iso)
    return d.year, d.month


def _queries_by_id(ctx: _Ctx) -> dict[str, Query]:
    return {q.id: q for q in ctx.queries}


# -- generic checks -------------------------------------------------------------------------------

def check_manifest_hashes(ctx: _Ctx) -> CheckResult:
    files = ctx.corpus.manifest["files"]
    return CheckResult("manifest_hashes", "pass",
                       f"{len(files)} files match their sha256; corpus {ctx.corpus.sha256[:12]}")


def check_manifest_counts(ctx: _Ctx) -> CheckResult:
    counts = ctx.corpus.manifest.get("counts", {})
    problems = []
    if "meetings" in counts and counts["meetings"] != len(ctx.meeting_order):
        problems.append(f"manifest says {counts['meetings']} meetings, files hold {len(ctx.meeting_order)}")
    if "queries" in counts and counts["queries"] != len(ctx.queries):
        problems.append(f"manifest says {counts['queries']} queries, queries.jsonl holds {len(ctx.queries)}")
    n_turns = sum(i["turns"] for i in ctx.info.values())
    if "turns" in counts and counts["turns"] != n_turns:
        problems.append(f"manifest says {counts['turns']} turns, files hold {n_turns}")
    return _result("manifest_counts", problems,
                   f"{len(ctx.meeting_order)} meetings, {n_turns} turns, {len(ctx.queries)} queries")


def check_meeting_ids_unique(ctx: _Ctx) -> CheckResult:
    return _result("meeting_ids_unique", [f"{m} repeated" for m in ctx.duplicate_meetings],
                   f"{len(ctx.info)} distinct meeting ids")


def check_query_ids_unique(ctx: _Ctx) -> CheckResult:
    seen: set[str] = set()
    dup = []
    for q in ctx.queries:
        if q.id in seen:
            dup.append(f"{q.id} repeated")
        seen.add(q.id)
    return _result("query_ids_unique", dup, f"{len(seen)} distinct query ids")


def check_turn_indices_dense(ctx: _Ctx) -> CheckResult:
    return _result("turn_indices_dense", ctx.dense_problems, "every meeting's turns are indexed 0..n-1")


def check_times_ordered(ctx: _Ctx) -> CheckResult:
    return _result("times_ordered", ctx.time_problems,
                   "starts non-decreasing, start <= end, all within [0, duration]")


def check_gold_refs_real(ctx: _Ctx) -> CheckResult:
    problems = []
    for q in ctx.queries:
        if q.scored_on == "retrieval" and not q.gold_meetings:
            problems.append(f"{q.id}: no gold meetings")
        for mid in q.gold_meetings:
            if mid not in ctx.info:
                problems.append(f"{q.id}: gold meeting {mid} does not exist")
        for mid, ranges in q.gold_turns.items():
            if mid not in q.gold_meetings:
                problems.append(f"{q.id}: gold turns for {mid}, which is not a gold meeting")
            n = ctx.info.get(mid, {}).get("turns", 0)
            for a, b in ranges:
                if not 0 <= a <= b < n:
                    problems.append(f"{q.id}: range [{a}, {b}] outside {mid}'s {n} turns")
        for mid, ts in q.answer_turns.items():
            n = ctx.info.get(mid, {}).get("turns", 0)
            problems.extend(f"{q.id}: answer turn {mid}#{t} does not exist" for t in ts if not 0 <= t < n)
        if q.scored_on == "retrieval" and q.gold_level == "turn" and not any(q.gold_turns.values()):
            problems.append(f"{q.id}: turn-level gold without turn ranges")
        if q.cls == "aggregation":
            if q.answer is None:
                problems.append(f"{q.id}: aggregation query without an answer")
            elif q.answer.type == "meeting_set":
                problems.extend(f"{q.id}: answer meeting {m} does not exist" for m in q.answer.meetings or ()
                                if m not in ctx.info)
    return _result("gold_refs_real", problems, "every gold meeting, range and answer turn exists")


def check_gold_spans_cover_answers(ctx: _Ctx) -> CheckResult:
    problems = []
    for q in ctx.queries:
        for mid, ts in q.answer_turns.items():
            ranges = q.gold_turns.get(mid, ())
            problems.extend(f"{q.id}: answer turn {mid}#{t} outside its gold spans" for t in ts
                            if not any(a <= t <= b for a, b in ranges))
    return _result("gold_spans_cover_answers", problems, "every answer turn lies inside a gold span")


# -- synthetic checks -----------------------------------------------------------------------------

def check_facts_located(ctx: _Ctx) -> CheckResult:
    problems = []
    located = [f for f in ctx.facts if f.get("meeting") is not None]
    for f in located:
        speaker, text = ctx.turns_needed.get((f["meeting"], f["turn"]), ("", ""))
        if f["text"] not in text:
            problems.append(f"{f['type']} for {f.get('query')} not in {f['meeting']}#{f['turn']}")
        elif speaker != f.get("speaker"):
            problems.append(f"{f['type']} for {f.get('query')}: {f['meeting']}#{f['turn']} is spoken by "
                            f"{speaker!r}, facts say {f.get('speaker')!r}")
    return _result("facts_located", problems, f"{len(located)} planted sentences found where facts.jsonl says")


def check_lookup_answer_in_turn(ctx: _Ctx) -> CheckResult:
    problems = []
    setups = {f["query"]: f for f in ctx.located("lookup_setup")}
    answers = {f["query"]: f for f in ctx.located("lookup_answer")}
    n = 0
    for q in ctx.queries:
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
            speaker, text = ctx.turns_needed.get((mid, t), ("", ""))
            if a["text"] not in text:
                problems.append(f"{q.id}: declared answer turn {mid}#{t} does not state the answer")
            elif speaker != a.get("speaker"):
                problems.append(f"{q.id}: answer turn {mid}#{t} spoken by {speaker!r}, the answer was given by "
                                f"{a.get('speaker')!r}")
        s_speaker, s_text = ctx.turns_needed.get((mid, s["turn"]), ("", ""))
        if s["text"] not in s_text:
            problems.append(f"{q.id}: setup turn {mid}#{s['turn']} does not ask the question")
        elif s_speaker == a.get("speaker") or s_speaker != s.get("speaker"):
            problems.append(f"{q.id}: setup turn {mid}#{s['turn']} speaker {s_speaker!r} is wrong")
        if q.surface == "verbatim":
            quoted = q.text.strip('"')
            if quoted not in ctx.turns_needed.get((mid, a["turn"]), ("", ""))[1]:
                problems.append(f"{q.id}: verbatim quote is not in the answer turn")
    return _result("lookup_answer_in_turn", problems, f"{n} lookup answers in their declared turns")


def check_phrase_exclusivity(ctx: _Ctx) -> CheckResult:
    """A lookup's answer is stated in exactly one turn of the corpus, its subject named only in that
    meeting and in its recorded echoes; a multi-file subject occurs only in the gold meetings and in
    echo sessions that add no component."""
    problems = []
    qs = _queries_by_id(ctx)
    echoes: dict[str, set[str]] = {}
    for f in ctx.located("lookup_echo", "component_echo"):
        echoes.setdefault(f["query"], set()).add(f["meeting"])
    n = 0
    for f in ctx.located("lookup_answer", "component"):
        q = qs.get(f["query"])
        hits = ctx.subject_hits.get(f["subject"].lower(), [])
        where = {m for m, _ in hits}
        if q is None:
            problems.append(f"facts name unknown query {f['query']}")
            continue
        n += 1
        if f["type"] == "lookup_answer":
            allowed = {f["meeting"]} | echoes.get(q.id, set())
            if f["meeting"] not in where or not where <= allowed:
                problems.append(f"{q.id}: {f['subject']} occurs in {sorted(where)}, allowed {sorted(allowed)}")
            stating = sorted(key for key in {(m, t) for m, t in hits} if f["text"] in ctx.subject_texts.get(key, ""))
            if stating != [(f["meeting"], f["turn"])]:
                problems.append(f"{q.id}: the answer is stated in {len(stating)} turns {stating[:3]}, must be one")
        elif not where <= set(q.gold_meetings) | echoes.get(q.id, set()):
            problems.append(f"{q.id}: {f['subject']} occurs outside the gold meetings and its echoes: "
                            f"{sorted(where - set(q.gold_meetings) - echoes.get(q.id, set()))}")
        elif echoes.get(q.id, set()) & set(q.gold_meetings):
            problems.append(f"{q.id}: an echo of {f['subject']} sits in a gold meeting")
    return _result("phrase_exclusivity", sorted(set(problems)), f"{n} planted answers occur only where gold says")


def check_multi_file_components(ctx: _Ctx) -> CheckResult:
    problems = []
    comps: dict[str, list[Mapping[str, Any]]] = {}
    for f in ctx.located("component"):
        comps.setdefault(f["query"], []).append(f)
    n = 0
    for q in ctx.queries:
        if q.cls != "multi_file":
            continue
        n += 1
        fs = comps.get(q.id, [])
        meetings = [f["meeting"] for f in fs]
        if not 2 <= len(set(q.gold_meetings)) <= 4:
            problems.append(f"{q.id}: {len(q.gold_meetings)} gold meetings, need 2-4")
        if len(set(meetings)) != len(meetings) or sorted(meetings) != sorted(q.gold_meetings):
            problems.append(f"{q.id}: components in {sorted(meetings)}, gold {sorted(q.gold_meetings)}")
        series = {_series_key(ctx.info.get(m, {}).get("title", "")) for m in q.gold_meetings}
        if len(series) != 1 or None in series:
            problems.append(f"{q.id}: gold meetings span {len(series)} series")
        for f in fs:
            speaker, text = ctx.turns_needed.get((f["meeting"], f["turn"]), ("", ""))
            if f["text"] not in text or tuple(q.answer_turns.get(f["meeting"], ())) != (f["turn"],):
                problems.append(f"{q.id}: component not in declared turn {f['meeting']}#{f['turn']}")
            subject_turns = {t for m, t in ctx.subject_hits.get(f["subject"].lower(), []) if m == f["meeting"]}
            if len(subject_turns) != 1:
                problems.append(f"{q.id}: {f['meeting']} mentions {f['subject']} in {len(subject_turns)} turns")
    return _result("multi_file_components", problems, f"{n} multi-file queries spread over 2-4 sessions")


def check_summarize_covers_series(ctx: _Ctx) -> CheckResult:
    problems = []
    by_series: dict[tuple[str, str], list[str]] = {}
    for mid in ctx.meeting_order:
        key = _series_key(ctx.info[mid]["title"])
        if key:
            by_series.setdefault(key, []).append(mid)
    n = 0
    for q in ctx.queries:
        if q.cls != "summarize":
            continue
        n += 1
        keys = {_series_key(ctx.info.get(m, {}).get("title", "")) for m in q.gold_meetings}
        if len(keys) != 1 or None in keys:
            problems.append(f"{q.id}: gold meetings are not one series")
            continue
        (key,) = keys
        if sorted(q.gold_meetings) != sorted(by_series.get(key, [])):
            problems.append(f"{q.id}: gold has {len(q.gold_meetings)} of the {len(by_series.get(key, []))} "
                            f"sessions of {key[0]} — {key[1]}")
        if q.gold_level != "meeting":
            problems.append(f"{q.id}: gold level {q.gold_level}, want meeting")
        for mid in q.gold_meetings:
            if tuple(q.gold_turns.get(mid, ())) != ((0, ctx.info[mid]["turns"] - 1),):
                problems.append(f"{q.id}: {mid} gold span is not the whole meeting")
    return _result("summarize_covers_series", problems, f"{n} summarize queries cover their whole series")


def _marker_meetings(ctx: _Ctx, phrase: str) -> set[str]:
    return {m for m, _, _ in ctx.phrase_hits.get(tuple(tokens(phrase)), [])}


def _marker_facts_agree(ctx: _Ctx, qid: str, phrase: str, problems: list[str]) -> None:
    written = sorted((f["meeting"], f["turn"]) for f in ctx.located("marker") if f.get("query") == qid)
    found = sorted((m, t) for m, t, _ in ctx.phrase_hits.get(tuple(tokens(phrase)), []))
    if sorted(set(written)) != sorted(set(found)):
        problems.append(f"{qid}: '{phrase}' found in turns {found[:4]}, facts.jsonl wrote {written[:4]}")


def check_marker_counts_exact(ctx: _Ctx) -> CheckResult:
    problems = []
    qs = _queries_by_id(ctx)
    targets = ctx.targets("R3") + ctx.targets("R4")
    for f in targets:
        q = qs.get(f["query"])
        meetings = _marker_meetings(ctx, f["phrase"])
        if q is None or q.answer is None:
            problems.append(f"{f['query']}: no such aggregation query")
        elif f["rule"] == "R3" and q.answer.count != len(meetings):
            problems.append(f"{q.id}: answer {q.answer.count}, text has '{f['phrase']}' in {len(meetings)} meetings")
        elif f["rule"] == "R4" and sorted(q.answer.meetings or ()) != sorted(meetings):
            problems.append(f"{q.id}: answer {len(q.answer.meetings or ())} meetings, text has "
                            f"'{f['phrase']}' in {len(meetings)} (differ: "
                            f"{sorted(set(q.answer.meetings or ()) ^ meetings)[:4]})")
        _marker_facts_agree(ctx, f["query"], f["phrase"], problems)
    return _result("marker_counts_exact", problems, f"{len(targets)} R3/R4 answers recomputed by phrase match")


def check_month_counts_exact(ctx: _Ctx) -> CheckResult:
    problems = []
    qs = _queries_by_id(ctx)
    targets = ctx.targets("R7")
    for f in targets:
        q = qs.get(f["query"])
        year, month = _month_of(f["month"])
        meetings = {m for m in _marker_meetings(ctx, f["phrase"]) if _year_month(ctx.info[m]["date"]) == (year, month)}
        if q is None or q.answer is None:
            problems.append(f"{f['query']}: no such aggregation query")
        elif q.answer.count != len(meetings):
            problems.append(f"{q.id}: answer {q.answer.count}, text has '{f['phrase']}' in {len(meetings)} "
                            f"meetings of {f['month']}")
        _marker_facts_agree(ctx, f["query"], f["phrase"], problems)
    return _result("month_counts_exact", problems, f"{len(targets)} R7 answers recomputed by phrase match and month")


def check_deferral_counts_exact(ctx: _Ctx) -> CheckResult:
    problems = []
    qs = _queries_by_id(ctx)
    targets = ctx.targets("R5")
    for f in targets:
        q = qs.get(f["query"])
        hits = ctx.deferral_hits.get(f["item"].lower(), [])
        if q is None or q.answer is None:
            problems.append(f"{f['query']}: no such aggregation query")
        elif q.answer.count != len(hits):
            problems.append(f"{q.id}: answer {q.answer.count}, text defers the {f['item']} {len(hits)} times")
        written = sorted((d["meeting"], d["turn"]) for d in ctx.located("deferral") if d.get("query") == f["query"])
        if written != sorted((m, t) for m, t, _ in hits):
            problems.append(f"{f['query']}: deferrals of the {f['item']} found at {len(hits)} places, "
                            f"facts.jsonl wrote {len(written)}")
    return _result("deferral_counts_exact", problems, f"{len(targets)} R5 answers recomputed by the deferral pattern")


def check_attendance_max_unique(ctx: _Ctx) -> CheckResult:
    problems = []
    qs = _queries_by_id(ctx)
    targets = ctx.targets("R6")
    for f in targets:
        q = qs.get(f["query"])
        counts: dict[str, int] = {}
        for mid in ctx.meeting_order:
            if _series_key(ctx.info[mid]["title"]) == (f["team"], f["kind"]):
                for p in ctx.spoke[mid]:
                    counts[p] = counts.get(p, 0) + 1
        top = max(counts.values(), default=0)
        leaders = sorted(p for p, c in counts.items() if c == top)
        if len(leaders) != 1:
            problems.append(f"{f['query']}: {len(leaders)} people share the maximum {top}")
        elif q is None or q.answer is None or (q.answer.speaker, q.answer.count) != (leaders[0], top):
            got = (q.answer.speaker, q.answer.count) if q and q.answer else None
            problems.append(f"{f['query']}: answer {got}, text says ({leaders[0]!r}, {top})")
    return _result("attendance_max_unique", problems, f"{len(targets)} R6 answers recomputed from who spoke")


def check_no_phrase_inside_another(ctx: _Ctx) -> CheckResult:
    problems = []
    markers = sorted({tuple(tokens(f["phrase"])) for f in ctx.targets() if "phrase" in f})
    others = sorted(set(markers) | {tuple(tokens(f["phrase"])) for f in ctx.located("near_miss")})
    for m in markers:
        for p in others:
            if p != m and contains_tokens(p, m):
                problems.append(f"'{' '.join(m)}' inside '{' '.join(p)}'")
    items = sorted({f["item"].lower() for f in ctx.targets("R5")})
    for i in items:
        pat = deferral_pattern(i)
        problems.extend(f"'defer the {i}' matches inside 'defer the {j}'" for j in items
                        if j != i and pat.search(f"defer the {j}"))
    return _result("no_phrase_inside_another", problems,
                   f"{len(markers)} marker phrases, {len(others) - len(markers)} near-misses, {len(items)} items disjoint")


def check_near_misses_not_counted(ctx: _Ctx) -> CheckResult:
    problems = []
    nm = ctx.located("near_miss")
    for f in nm:
        p = tuple(tokens(f["phrase"]))
        if (f["meeting"], f["turn"]) not in {(m, t) for m, t, _ in ctx.phrase_hits.get(p, [])}:
            problems.append(f"near-miss '{f['phrase']}' missing from {f['meeting']}#{f['turn']}")
        if contains_tokens(tokens(f["text"]), tuple(tokens(f["of"]))):
            problems.append(f"near-miss sentence '{f['text']}' contains the marker '{f['of']}'")
    dm = ctx.located("deferral_near_miss")
    for f in dm:
        if deferral_pattern(f["item"]).search(f["text"]):
            problems.append(f"deferral near-miss '{f['text']}' matches the pattern for '{f['item']}'")
    per_rule = {r: 0 for r in ("R3", "R4", "R5", "R7")}
    rule_of = {f["query"]: f["rule"] for f in ctx.targets()}
    for f in nm + dm:
        if rule_of.get(f["query"]) in per_rule:
            per_rule[rule_of[f["query"]]] += 1
    problems.extend(f"no near-miss planted for {r}" for r, c in per_rule.items() if c == 0 and ctx.targets(r))
    return _result("near_misses_not_counted", problems,
                   f"{len(nm)} phrase and {len(dm)} deferral near-misses present and outside the contracts")


def check_planted_in_short_turns(ctx: _Ctx) -> CheckResult:
    problems = [f"a phrase could cross turns: {b}" for b in ctx.boundary_hits]
    for p, hits in ctx.phrase_hits.items():
        problems.extend(f"'{' '.join(p)}' in {m}#{t}, a {w}-word turn" for m, t, w in hits
                        if w > MAX_PLANTED_TURN_WORDS)
    for item, hits in ctx.deferral_hits.items():
        problems.extend(f"'defer the {item}' in {m}#{t}, a {w}-word turn" for m, t, w in hits
                        if w > MAX_PLANTED_TURN_WORDS)
    return _result("planted_in_short_turns", problems,
                   f"every phrase and deferral sits inside one turn of at most {MAX_PLANTED_TURN_WORDS} words")


def check_aggregation_coverage(ctx: _Ctx) -> CheckResult:
    problems = []
    agg = [q for q in ctx.queries if q.cls == "aggregation"]
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
    return _result("aggregation_coverage", problems,
                   f"{len(agg)} aggregation queries, {len(zeros)} zero answers, 3+ families per rule")


Check = Callable[[_Ctx], CheckResult]
GENERIC: tuple[Check, ...] = (
    check_manifest_hashes, check_manifest_counts, check_meeting_ids_unique, check_query_ids_unique,
    check_turn_indices_dense, check_times_ordered, check_gold_refs_real, check_gold_spans_cover_answers,
)
SYNTHETIC: tuple[Check, ...] = (
    check_facts_located, check_lookup_answer_in_turn, check_phrase_exclusivity, check_multi_file_components,
    check_summarize_covers_series, check_marker_counts_exact, check_deferral_counts_exact,
    check_attendance_max_unique, check_month_counts_exact, check_no_phrase_inside_another,
    check_near_misses_not_counted, check_planted_in_short_turns, check_aggregation_coverage,
)
CHECK_NAMES = tuple(c.__name__.removeprefix("check_") for c in GENERIC + SYNTHETIC)


def _run(check: Check, ctx: _Ctx) -> CheckResult:
    name = check.__name__.removeprefix("check_")
    try:
        return check(ctx)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        return CheckResult(name, "fail", f"malformed corpus data: {type(exc).__name__}: {exc}")


def validate_corpus(root: Path) -> list[CheckResult]:
    """Every check's result, in a fixed order. Raises CorpusIntegrityError when hashes do not match."""
    corpus = open_corpus(Path(root))
    files = corpus.manifest.get("files", {})
    synthetic = corpus.manifest.get("producer", {}).get("name") == PRODUCER_NAME and "facts.jsonl" in files
    try:
        ctx = _Ctx(corpus=corpus, synthetic=synthetic, queries=corpus.queries(),
                   facts=[f for f in corpus.facts() if isinstance(f, dict)] if synthetic else [])
        _scan(ctx)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        # hashes matched, so the manifest itself vouches for records that are not format v1
        raise CorpusIntegrityError(f"{root}: a record is not valid format v1 ({type(exc).__name__}: {exc})") from None
    results = [_run(c, ctx) for c in GENERIC]
    for c in SYNTHETIC:
        if synthetic:
            results.append(_run(c, ctx))
        else:
            results.append(CheckResult(c.__name__.removeprefix("check_"), "n/a",
                                       "not a turnbench.generator corpus with facts.jsonl"))
    return results


def failures(results: Iterable[CheckResult]) -> list[str]:
    return [r.name for r in results if not r.ok]
