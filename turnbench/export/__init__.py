"""Exports: a corpus written in the formats other tools read, its ids and grades turnbench's own, so that what those
tools produce is scored back by ``turnbench score`` unchanged.

A room of its own, beside the pipeline: an export needs the load's chunking (turnbench.loading.chunking) and the
harness's judgements (turnbench.harness.judgements), and neither the corpus room (the bottom) nor the harness (which
imports no other room) may import both.
"""
