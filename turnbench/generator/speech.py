"""Sessions that say what they are: the series or the team named in speech.

Real meetings often open with "okay, welcome to the weekly vendor review", hand over with "anything else
for the Payments team?" and close with "that is it for this design review", and sometimes say none of it.
So a session opens, hands over and closes with a mention at the rates below, each drawn from several
phrasings of three forms: ``full`` (the team and the kind in a row, "the Payments design review"),
``team`` ("the Payments team") and ``kind`` ("this design review"). ``QUIET_SHARE`` of the sessions never
say what they are; every other session says it at least once, and every series names itself in full at
least once (in the opening of its first session that speaks, when no other mention does). A summarize
question is then answered from what was said, and a title helps without being the only way; the validator
checks every mention and that no session names another series in full.

Some series always say what they are: the chair opens every session of an *announced* series with its full
name (``ANNOUNCEMENTS``), and its first session with its weekday slot too when it has one ("welcome to the
Monday Payments design review"). R6 asks only about announced series, so who attended the most of them is
proved from the transcripts alone, titles or none; the quiet sessions are drawn from the other series.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from turnbench.generator.org import Series
from turnbench.generator.planting import ANYWHERE, CLOSING, OPENING, Plant, Schedule

FULL, TEAM, KIND = "full", "team", "kind"
# position -> (form, phrasing); {T} is the team, {K} the kind
PHRASINGS: dict[str, tuple[tuple[str, str], ...]] = {
    OPENING: (
        (FULL, "Okay, welcome everyone to the {T} {K}."),
        (FULL, "Hi all, this is the {T} {K}, so let us get going."),
        (KIND, "Right, let us get this {K} started."),
        (TEAM, "Morning, good to see the whole {T} team here."),
    ),
    ANYWHERE: (
        (TEAM, "Before I hand over, anything else for the {T} team?"),
        (KIND, "Over to you for the next item on this {K}."),
        (FULL, "Next item for the {T} {K}, over to you."),
    ),
    CLOSING: (
        (FULL, "That is it for this {T} {K}, thanks everyone."),
        (KIND, "Thanks all, see you at the next {K}."),
        (TEAM, "Okay, I think that wraps it up for the {T} team today."),
    ),
}
# The opening of every session of an announced series: (with the slot {D}, without).
ANNOUNCEMENTS = (
    ("Okay, welcome everyone to the {D} {T} {K}.", "Okay, welcome everyone to the {T} {K}."),
    ("Right, it is the {D} {T} {K} again, so let us start.", "Hi all, this is the {T} {K}, so let us get going."),
)
RATES = {OPENING: 0.45, ANYWHERE: 0.2, CLOSING: 0.3}
POSITION_NAMES = {OPENING: "opening", ANYWHERE: "handover", CLOSING: "closing"}
# This share of sessions never says what it is (fewer when a series would otherwise never name itself).
QUIET_SHARE = 0.3


def series_mentions(schedule: Schedule, rng: random.Random,
                    announced: frozenset[str] = frozenset()) -> Iterable[tuple[str, Plant]]:
    """(meeting id, plant) for every mention, series by series, in meeting order within each; every session of an
    ``announced`` series (ids) opens with its full name, and the quiet sessions are drawn from the others."""
    others = [m for m in schedule.ids if schedule.session_of[m].series.id not in announced]
    quiet = set(rng.sample(others, min(len(others), round(len(schedule.ids) * QUIET_SHARE))))
    for sid in sorted(schedule.series_meetings):
        mids = schedule.series_meetings[sid]
        if all(m in quiet for m in mids):
            quiet.discard(mids[0])
        planted: list[tuple[str, Plant]] = []
        for mid in mids:
            if mid in quiet:
                continue
            s = schedule.session_of[mid].series
            positions = [pos for pos in (OPENING, ANYWHERE, CLOSING) if rng.random() < RATES[pos]] or [OPENING]
            if sid in announced:
                positions = [OPENING, *(pos for pos in positions if pos != OPENING)]
            for position in positions:
                if sid in announced and position == OPENING:
                    with_slot, without = ANNOUNCEMENTS[rng.randrange(len(ANNOUNCEMENTS))]
                    # the first session says the slot, so the talk itself tells when the series meets
                    says_slot = mid == mids[0] and bool(s.slot)
                    planted.append((mid, _mention(mid, s, position, FULL, with_slot if says_slot else without)))
                    continue
                form, text = PHRASINGS[position][rng.randrange(len(PHRASINGS[position]))]
                planted.append((mid, _mention(mid, s, position, form, text)))
        if not any(plant.fact["form"] == FULL for _, plant in planted):
            first = next(m for m in mids if m not in quiet)
            s = schedule.session_of[first].series
            form, text = next((f, t) for f, t in PHRASINGS[OPENING] if f == FULL)
            planted = [(m, pl) for m, pl in planted if not (m == first and pl.position == OPENING)]
            planted.insert(0, (first, _mention(first, s, OPENING, form, text)))
        yield from sorted(planted, key=lambda mp: (mp[0], (OPENING, ANYWHERE, CLOSING).index(mp[1].position)))


def _mention(mid: str, s: Series, position: str, form: str, text: str) -> Plant:
    return Plant(f"S{mid}.{POSITION_NAMES[position]}", "series_mention", (text.format(T=s.team, K=s.kind, D=s.slot),),
                 {"team": s.team, "kind": s.kind, "form": form, "position": POSITION_NAMES[position]},
                 position=position)
