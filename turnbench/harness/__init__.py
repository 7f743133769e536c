"""The measurement core: judgements, pytrec_eval metrics, answer scoring, reports, compare
(docs/design.md §6, §7, §10)."""
