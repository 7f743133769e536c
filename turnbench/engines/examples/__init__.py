"""Engines written against the engine protocol (turnbench.engines.protocol, docs/engines.md), shipped as examples
and benched like any other: ``turnbench bench --engine turnbench.engines.examples.bm25:engine``.

- ``bm25``: BM25 in memory (rank_bm25's BM25Okapi) over lowercased word tokens.
- ``dense``: exact cosine in numpy over a turnbench encoder's cached, rounded vectors.
- ``pg_fulltext``: PostgreSQL full-text search (tsvector, ts_rank_cd) on the stack's own PostgreSQL.

Each is what a user would write; none reads anything but the passages and questions it is handed (and the stack's
endpoints, for the one that searches on a server).
"""
