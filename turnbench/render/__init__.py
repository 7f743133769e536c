"""Rendering for people (docs/design.md §10): metrics.md, answers.md and compare.md tables, the
self-contained HTML report and its plots. Everything here draws what the harness computed; nothing here computes a
number a claim rests on."""
