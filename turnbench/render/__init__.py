"""Rendering for people (DESIGN §10, docs/design.md): metrics.md, answers.md and compare.md tables, the
self-contained HTML report and its plots. Everything here draws what the harness computed; nothing here computes a
number a claim rests on."""
