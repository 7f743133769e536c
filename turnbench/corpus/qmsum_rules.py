"""The QMSum adapter's judgement calls, each a pure function of one value and each recorded in the
manifest's producer record, because these are the parts of the conversion a reviewer may challenge.

Domains
    The domain comes from the meeting id (``DOMAIN_ID_PATTERNS``); a meeting with no recognised id
    takes it from its speaker labels (``DOMAIN_SPEAKER_RULES``); one that neither names has domain
    ``unknown``.

Times
    QMSum has no timestamps. Each turn lasts ``max(words, 1) × 60 / 150`` seconds (150 words per
    minute) and is followed by a 0.5 s gap, computed in integer milliseconds so the bytes never depend
    on float summation.

Summaries
    A specific query asks for a summary when, casefolded, it matches ``SUMMARY_PATTERN``.

Spans
    QMSum's spans are 0-based inclusive ``[first, last]`` turn pairs, our gold's convention. A query's
    spans become integer ranges, unioned (overlapping or adjacent ranges merge). A span that is
    malformed, reversed or outside the transcript refuses its query with a reason — never clipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from turnbench.corpus.records import Turn

Ranges = tuple[tuple[int, int], ...]

WORDS_PER_MINUTE = 150
MS_PER_WORD = 60_000 // WORDS_PER_MINUTE  # 400 ms
GAP_MS = 500

# Meeting id → domain. AMI scenario meetings (ES/IS/TS + 4 digits + session letter) are the remote-control
# design task; ICSI meetings (B + three-letter group + 3 digits) are research-group meetings; QMSum's
# committee meetings are named after the parliamentary inquiry (covid_N, education_N).
DOMAIN_ID_PATTERNS = (
    ("product", r"^(?:ES|IS|TS)\d{4}[a-z]$"),
    ("academic", r"^B[a-z]{2}\d{3}$"),
    ("committee", r"^(?:covid|education)_\d+$"),
)
# Speaker labels → domain, for meetings without a recognised id (QMSum's JSONL lines): AMI labels are
# the four roles, ICSI labels are an academic rank and a letter; committee speakers are named people,
# so only a meeting that fits neither rule and has a speaker with a parliamentary title counts.
DOMAIN_SPEAKER_RULES = (
    ("product", r"^(?:Industrial Designer|Marketing|Project Manager|User Interface)$", "all"),
    ("academic", r"^(?:Professor|PhD|Grad|Postdoc|Undergrad) [A-Z]$", "all"),
    ("committee", r"(?:\bChair\b|\bHon\.|\bAM$|\bMP$|\bMS$)", "any"),
)
UNKNOWN_DOMAIN = "unknown"

# A specific query asks for a summary when, casefolded, it starts with one of these.
SUMMARY_PATTERN = (
    r"^(?:please\s+)?(?:summari[sz]e\b|sum\s+up\b|give\s+(?:me\s+)?an?\s+(?:summary|overview)\b"
    r"|what\s+did\s+(?:the\s+)?(?:group|team|meeting|committee|members)\s+discuss\b)"
)
_SUMMARY_RE = re.compile(SUMMARY_PATTERN)
_DIGITS_RE = re.compile(r"\d{1,9}")


def domain_of(meeting_id: str, speakers: Iterable[str]) -> str:
    """The QMSum domain of a meeting: from its id when recognised, else from its speaker labels."""
    for dom, pat in DOMAIN_ID_PATTERNS:
        if re.match(pat, meeting_id):
            return dom
    labels = sorted(set(speakers))
    for dom, pat, quantifier in DOMAIN_SPEAKER_RULES:
        hits = [bool(re.search(pat, s)) for s in labels]
        if labels and (all(hits) if quantifier == "all" else any(hits)):
            return dom
    return UNKNOWN_DOMAIN


def is_summary_request(text: str) -> bool:
    return bool(_SUMMARY_RE.match(text.strip().casefold()))


def synthetic_turns(transcript: Sequence[Mapping[str, str]]) -> tuple[tuple[Turn, ...], float]:
    """Turns with times from word counts (150 words/min, 0.5 s gaps); returns them and the duration."""
    turns = []
    t_ms = 0
    end_ms = 0
    for i, t in enumerate(transcript):
        words = len(t["content"].split())
        end_ms = t_ms + max(words, 1) * MS_PER_WORD
        turns.append(Turn(i, t["speaker"].strip(), t_ms / 1000, end_ms / 1000, t["content"]))
        t_ms = end_ms + GAP_MS
    return tuple(turns), end_ms / 1000


def merge_ranges(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """The fewest sorted inclusive ranges covering the same turns: overlapping and adjacent ranges merge."""
    out: list[list[int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return tuple((a, b) for a, b in out)


def parse_spans(spans: Any, n_turns: int) -> tuple[Ranges, str, str]:
    """Integer ranges from QMSum spans, or an empty tuple with the refusal reason and its detail."""
    if not isinstance(spans, list) or not spans:
        return (), "no_span", "no relevant_text_span"
    out = []
    for span in spans:
        if not (isinstance(span, list) and len(span) == 2):
            return (), "span_malformed", f"span {span!r} is not a pair"
        ends = []
        for v in span:
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                ends.append(v)
            elif isinstance(v, str) and _DIGITS_RE.fullmatch(v.strip()):
                ends.append(int(v.strip()))
            else:
                return (), "span_malformed", f"span {span!r} is not two non-negative decimal numbers"
        a, b = ends
        if a > b:
            return (), "span_reversed", f"span [{a}, {b}] is reversed"
        if b >= n_turns:
            return (), "span_out_of_range", f"span [{a}, {b}] ends past the last turn ({n_turns - 1})"
        out.append((a, b))
    return merge_ranges(out), "", ""
