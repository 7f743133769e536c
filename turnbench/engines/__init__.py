"""Engines under test: retrieval arms on OpenSearch and the answer engine."""
