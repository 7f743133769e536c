"""Corpus format v1: records, reader and writer, manifest and hash checks, adapters."""

from turnbench.corpus.records import Answer, Meeting, Query, Turn  # noqa: F401
from turnbench.corpus.format import Corpus, CorpusWriter, open_corpus  # noqa: F401
