"""The aggregation planners (R3–R7): marker phrases, deferrals and attendance, with their near-misses and
answers of zero. Each draws from its own seeded generator, after the ranked planners of ``plan.py``.
"""

from __future__ import annotations

import math
import random

from turnbench.corpus.records import MONTHS, Answer
from turnbench.generator import wordlists
from turnbench.generator.config import GeneratorConfig, rng_for
from turnbench.generator.contracts import TargetFact
from turnbench.generator.org import Series
from turnbench.generator.planting import Plant, Planting, month_label, plural
from turnbench.generator.sessions import invitee_counts, leaders, speaker_counts
from turnbench.generator.templates import AGG_SURFACES

# R6: at least this share of questions is about a series where counting invitees gives another answer.
TRAP_QUESTION_SHARE = 0.5
# R6 asks about at most this share of the series: theirs are the sessions that always say what they are.
ANNOUNCED_SHARE = 0.6


def plan_markers(p: Planting, cfg: GeneratorConfig, n_rule: int) -> None:
    """R3, R4 and R7 from one draw of distinct marker phrases: R3 and R4 over the whole corpus, R7 in a month.

    One query in each rule (its first) and about one in ten more have the answer zero (R3, R4), and one in
    four R7 queries asks about a month in which the phrase never came up, when there is such a month.
    """
    rng = rng_for(cfg.seed, "markers")
    pairs = [(a, b) for a in wordlists.MARKER_FIRST for b in wordlists.MARKER_SECOND]
    markers = rng.sample(pairs, 3 * n_rule)
    ids = p.schedule.ids
    max_set = max(1, min(8, len(ids) // 3))
    for rule in ("R3", "R4"):
        for i in range(n_rule):
            a, b = markers[(0 if rule == "R3" else n_rule) + i]
            k = 0 if i == 0 or rng.random() < 0.1 else rng.randint(1, max_set)
            chosen = sorted(rng.sample(ids, k))
            ans = Answer("count", count=k) if rule == "R3" else Answer("meeting_set", meetings=tuple(chosen))
            q = p.aggregation(rng, rule, i, ans, {"phrase": f"{a} {b}"}, x=f"{a} {b}")
            _plant_marker(p, rng, f"{a} {b}", q, chosen)
            _plant_near_misses(p, rng, a, b, q, rng.randint(2 if k == 0 else 1, 3))

    date_of = {mid: s.date for mid, s in zip(ids, p.schedule.sessions, strict=True)}
    months = sorted({month_label(d) for d in date_of.values()},
                    key=lambda m: (m.split()[1], MONTHS.index(m.split()[0])))
    for i in range(n_rule):
        a, b = markers[2 * n_rule + i]
        k = rng.randint(min(2, len(ids)), max(2, max_set))
        chosen = sorted(rng.sample(ids, k))
        used = {month_label(date_of[m]) for m in chosen}
        empty = [m for m in months if m not in used]
        month = empty[rng.randrange(len(empty))] if (i % 4 == 0 and empty) else month_label(date_of[rng.choice(chosen)])
        count = sum(1 for m in chosen if month_label(date_of[m]) == month)
        q = p.aggregation(rng, "R7", i, Answer("count", count=count), {"phrase": f"{a} {b}", "month": month},
                          x=f"{a} {b}", month=month)
        _plant_marker(p, rng, f"{a} {b}", q, chosen)
        _plant_near_misses(p, rng, a, b, q, rng.randint(1, 3))


def _plant_marker(p: Planting, rng: random.Random, phrase: str, q: str, meetings: list[str]) -> None:
    """The phrase one to three times in each chosen meeting."""
    for mid in meetings:
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            sentence = rng.choice(wordlists.MARKER_TEMPLATES).format(x=phrase)
            p.plant(mid, Plant(f"M{q}.{p.planted(mid)}", "marker", (sentence,), {"query": q, "phrase": phrase}))


def _plant_near_misses(p: Planting, rng: random.Random, a: str, b: str, q: str, count: int) -> None:
    """Phrases that look like the marker "a b" but must not be counted, each in a random meeting."""
    ids = p.schedule.ids
    for variant in rng.sample(("plural", "inserted", "reordered", "sibling"), count):
        if variant == "plural":
            phrase = f"{a} {plural(b)}"
        elif variant == "inserted":
            phrase = f"{a} {rng.choice(wordlists.INSERTED)} {b}"
        elif variant == "reordered":
            phrase = f"{b} {a}"
        elif rng.random() < 0.5:
            phrase = f"{a} {rng.choice(wordlists.SIBLING_SECOND)}"
        else:
            phrase = f"{rng.choice(wordlists.SIBLING_FIRST)} {b}"
        mid = ids[rng.randrange(len(ids))]
        sentence = rng.choice(wordlists.MARKER_TEMPLATES).format(x=phrase)
        p.plant(mid, Plant(f"N{q}.{p.planted(mid)}", "near_miss", (sentence,),
                           {"query": q, "phrase": phrase, "of": f"{a} {b}", "variant": variant}))


def plan_deferrals(p: Planting, cfg: GeneratorConfig, n_rule: int) -> None:
    """R5: how many times an item was deferred, with deferrals of look-alike items and mere mentions."""
    rng = rng_for(cfg.seed, "deferrals")
    ids = p.schedule.ids
    items = rng.sample([(a, t) for a in wordlists.ITEM_AREAS for t in wordlists.ITEM_THINGS], n_rule)
    for i, (area, thing) in enumerate(items):
        item = f"{area} {thing}"
        n_events = 0 if i == 0 or rng.random() < 0.1 else rng.randint(1, 6)
        q = p.aggregation(rng, "R5", i, Answer("count", count=n_events), {"item": item}, x=item)
        for j in range(n_events):
            mid = ids[rng.randrange(len(ids))]
            sentence = rng.choice(wordlists.DEFER_TEMPLATES).format(x=item)
            p.plant(mid, Plant(f"D{q}.{j}", "deferral", (sentence,), {"query": q, "item": item}))
        for j, variant in enumerate(rng.sample(("mention", "plural", "sibling", "inserted"), rng.randint(1, 3))):
            if variant == "mention":
                sentence = rng.choice(wordlists.MENTION_TEMPLATES).format(x=item)
            else:
                # both look-alikes are drawn whichever is used: the draws are part of the corpus's bytes
                sibling = f"{area} {rng.choice(wordlists.ITEM_SIBLING_THINGS)}"
                inserted = f"{area} {rng.choice(wordlists.INSERTED)} {thing}"
                near = {"plural": f"{area} {plural(thing)}", "sibling": sibling, "inserted": inserted}[variant]
                sentence = rng.choice(wordlists.DEFER_TEMPLATES).format(x=near)
            mid = ids[rng.randrange(len(ids))]
            p.plant(mid, Plant(f"E{q}.{j}", "deferral_near_miss", (sentence,),
                               {"query": q, "item": item, "variant": variant}))


def attendance_series(p: Planting, rng: random.Random, n_rule: int) -> list[Series]:
    """The series R6 asks about: series with at least two sessions and one leader, at most ``ANNOUNCED_SHARE`` of
    all series, rounded down (those left say what they are only some of the time, generator/speech.py), and none
    when fewer than three can be asked (a rule needs its three phrasing families). Every session of theirs opens
    with the series' name, and a question that names its series ("... in the Growth weekly sync") finds that
    opening close by meaning: more of them would let random turns beat the evidence (``surface_cosine``).

    Half the questions (or as many as there are) are about a series whose invitee list names someone else
    or another count: an engine that takes attendance from invitations instead of speech gets them wrong.
    """
    spoke = speaker_counts(p.schedule.sessions)
    invited = invitee_counts(p.schedule.sessions)
    eligible = [s for s in p.org.series if len(s.dates) >= 2 and len(leaders(spoke[s.id])) == 1]
    traps = [s for s in eligible if leaders(spoke[s.id])[0] not in leaders(invited[s.id])]
    plain = [s for s in eligible if s not in traps]
    n = min(n_rule, len(eligible), math.floor(len(p.org.series) * ANNOUNCED_SHARE))
    if n < 3:
        return []
    k = min(len(traps), max(math.ceil(n * TRAP_QUESTION_SHARE), n - len(plain)))
    chosen = rng.sample(traps, k) + rng.sample(plain, n - k)
    rng.shuffle(chosen)
    return chosen


def plan_attendance(p: Planting, rng: random.Random, chosen: list[Series]) -> None:
    """R6: who attended the most sessions of each chosen series (``attendance_series``). The sessions say what
    they are (generator/speech.py), so the series is named as people name it: by team and kind, by its weekday
    slot ("the Payments design review meetings on Mondays") or as the team's ("the design review meetings the
    Payments team holds")."""
    spoke = speaker_counts(p.schedule.sessions)
    for i, s in enumerate(chosen):
        ((speaker, count),) = leaders(spoke[s.id])
        # the families that name the series as people do take it by slot and as the team's, in turn
        by_slot = "{series}" in AGG_SURFACES["R6"][i % 3].template and bool(s.slot) and (i // 3) % 2 == 0
        named = (f"{s.team} {s.kind} meetings on {s.slot}s" if by_slot
                 else f"{s.kind} meetings the {s.team} team holds")
        target: TargetFact = {"team": s.team, "kind": s.kind, **({"slot": s.slot} if by_slot else {})}
        p.aggregation(rng, "R6", i, Answer("speaker_count", count=count, speaker=speaker), target,
                      team=s.team, kind=s.kind, series=named)
