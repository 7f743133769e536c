"""The seeded, model-free meeting-corpus generator (DESIGN §5) and its validator.

Steps, one module each: ``config`` (resolved options, derived seeds), ``vocab`` (word lists), ``org``
(teams, rosters, series, dates), ``plan`` (the global planting plan), ``render`` (one meeting's
transcript), ``queries`` (gold from where things were written), ``generate`` (orchestration and the
manifest), ``validate`` (re-derive every gold item from the text on disk).
"""

# Bump whenever the same seed and options would produce different bytes.
GENERATOR_VERSION = 1
PRODUCER_NAME = "turnbench.generator"


def generator_version() -> str:
    from turnbench import __version__

    return f"{__version__}+g{GENERATOR_VERSION}"
