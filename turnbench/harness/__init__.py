"""The measurement core: judgements, pytrec_eval metrics, answer scoring, reports, compare (DESIGN §6, §7, §10)."""
