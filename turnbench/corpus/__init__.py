"""Corpus format v1: records, reader and writer, manifest and hash checks, generic checks, adapters."""

from turnbench.corpus.format import Corpus, CorpusWriter, open_corpus
from turnbench.corpus.records import Answer, Meeting, Query, Turn

__all__ = ["Answer", "Corpus", "CorpusWriter", "Meeting", "Query", "Turn", "open_corpus"]
