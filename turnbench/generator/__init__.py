"""The seeded, model-free meeting-corpus generator (DESIGN §5) and its validator.

Steps, one module each: ``config`` (resolved options, derived seeds), ``vocab`` (word lists), ``org``
(teams, rosters, series, dates), ``sessions`` (who speaks in each session, what it discusses),
``names`` (invented subjects), ``templates`` (how facts and questions are phrased), ``plan`` (the global
planting plan), ``render`` (one meeting's transcript), ``queries`` (gold from where things were
written), ``generate`` (orchestration and the manifest). ``contracts`` holds what the generator writes
and the validator reads back; ``validate`` re-derives every gold item from the text on disk with the
synthetic checks (``scan``, ``checks``) beside the generic ones of ``turnbench.corpus.checks``;
``measure`` reports how hard a corpus is for plain BM25.
"""

# Bump whenever the same seed and options would produce different bytes.
GENERATOR_VERSION = 1
PRODUCER_NAME = "turnbench.generator"


def generator_version() -> str:
    from turnbench import __version__

    return f"{__version__}+g{GENERATOR_VERSION}"
