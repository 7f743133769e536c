"""Word lists the generator draws from. Fixed tuples, never sets, so draws are reproducible.

Bulk text is built from BULK templates and the general lists below. Every word that carries ground
truth (marker tokens, the deferral verb, invented proper nouns) is kept OUT of the bulk lists, so a
planted phrase can only appear where the plan put it; ``tests/unit/generator/test_wordlists.py`` checks the
lists stay disjoint.
"""

from __future__ import annotations

# -- organisation ------------------------------------------------------------------------------

# One-word team names, so that no team name is a prefix of another inside a title.
TEAM_NAMES = (
    "Payments", "Search", "Logistics", "Onboarding", "Platform", "Billing", "Growth", "Security",
    "Analytics", "Mobile", "Support", "Infrastructure", "Pricing", "Marketplace", "Compliance",
    "Identity", "Messaging", "Catalog", "Checkout", "Fulfilment", "Partnerships", "Recruiting",
    "Finance", "Legal", "Procurement", "Research", "Design", "Documentation", "Localization",
    "Reliability", "Storage", "Networking", "Observability", "Notifications", "Ads", "Reporting",
    "Warehouse", "Returns", "Subscriptions", "Loyalty", "Inventory", "Routing", "Scheduling",
    "Ingestion", "Archival", "Accessibility", "Privacy", "Forecasting", "Sourcing", "Training",
    "Facilities", "Hardware", "Firmware", "Telemetry", "Payroll", "Benefits", "Sales", "Renewals",
    "Integrations", "Exports",
)

# Recurring meeting kinds (lowercase, as they appear in titles). None is a prefix of another.
KINDS = (
    "weekly sync", "design review", "incident review", "planning", "vendor review",
    "retrospective", "roadmap review", "budget review", "hiring sync", "architecture forum",
)

# Agenda topics: the words a session on that topic leans on. Near-duplicate sessions share these.
AGENDA_TOPICS = (
    ("quarterly roadmap", ("roadmap", "milestone", "quarter", "priority", "scope", "tradeoff")),
    ("hiring pipeline", ("candidate", "interview", "offer", "headcount", "recruiter", "loop")),
    ("incident follow-ups", ("outage", "pager", "postmortem", "alert", "runbook", "severity")),
    ("vendor shortlist", ("vendor", "contract", "quote", "renewal", "procurement", "terms")),
    ("budget forecast", ("budget", "spend", "forecast", "invoice", "variance", "allocation")),
    ("release readiness", ("release", "rollback", "freeze", "branch", "checklist", "canary")),
    ("customer escalations", ("customer", "ticket", "escalation", "complaint", "refund", "churn")),
    ("data quality", ("dataset", "pipeline", "schema", "backfill", "dashboard", "anomaly")),
    ("performance work", ("latency", "throughput", "cache", "profile", "benchmark", "bottleneck")),
    ("security review", ("audit", "permission", "token", "vulnerability", "patch", "secret")),
    ("onboarding flow", ("signup", "tutorial", "activation", "funnel", "email", "checklist")),
    ("capacity planning", ("capacity", "cluster", "node", "storage", "region", "quota")),
    ("pricing experiments", ("experiment", "variant", "conversion", "discount", "tier", "cohort")),
    ("documentation debt", ("guide", "reference", "example", "tutorial", "glossary", "diagram")),
    ("on-call rotation", ("rotation", "handoff", "shift", "escalation", "pager", "coverage")),
    ("mobile launch", ("app", "store", "review", "crash", "version", "tablet")),
    ("api deprecation", ("endpoint", "client", "deprecation", "migration", "version", "sunset")),
    ("team health", ("morale", "workload", "feedback", "pairing", "burnout", "recognition")),
    ("office move", ("desk", "floor", "lease", "furniture", "badge", "parking")),
    ("partner integrations", ("partner", "integration", "webhook", "sandbox", "certification", "sdk")),
    ("analytics events", ("event", "tracking", "funnel", "attribution", "sampling", "retention")),
    ("accessibility fixes", ("contrast", "screen", "keyboard", "label", "focus", "caption")),
    ("support tooling", ("macro", "queue", "triage", "tag", "backlog", "sla")),
    ("warehouse operations", ("pallet", "dock", "shipment", "carrier", "picking", "forklift")),
)

# Cities: where sites are and offsites and pilots happen. Real one-word names, so tokenisers agree on them.
CITIES = ("Leeds", "Denver", "Lyon", "Austin", "Porto", "Dublin", "Oslo", "Boston", "Seattle", "Glasgow", "Bristol",
          "Toronto", "Madrid", "Vienna", "Prague", "Munich", "Zurich", "Helsinki", "Lisbon", "Phoenix", "Atlanta",
          "Chicago", "Portland", "Detroit", "Dallas", "Houston", "Montreal", "Ottawa", "Calgary", "Sydney",
          "Melbourne", "Auckland", "Singapore", "Seoul", "Osaka", "Nairobi", "Cardiff", "Belfast", "Milan", "Turin")

# -- bulk text ---------------------------------------------------------------------------------

# Names of internal systems. They are ordinary bulk nouns, and a paraphrased question describes its subject
# as "the {topic word} {system}" (generator/paraphrase.py), so the words of a description are common
# across the corpus and only their pairing is rare.
SYSTEMS = ("portal", "tracker", "gateway", "console", "toolkit", "hub", "engine", "registry", "scheduler",
           "connector", "assistant", "monitor", "importer", "planner", "widget", "service")
SUBJECTS = ("we", "I", "they", "the team", "we all", "our side", "the other team", "you")
MODALS = ("should", "could", "might", "need to", "want to", "will", "can")
VERBS = ("check", "review", "update", "finish", "share", "test", "plan", "track", "simplify",
         "document", "measure", "move", "split", "merge", "clean up", "look at", "sort out", "revisit",
         "estimate", "prioritise", "rework", "discuss", "confirm", "ship")
VERBS_PAST = ("checked", "reviewed", "updated", "finished", "shared", "tested", "planned", "tracked",
              "measured", "moved", "split", "merged", "cleaned up", "looked at", "sorted out",
              "estimated", "reworked", "discussed", "confirmed", "shipped", "started", "paused")
ADJECTIVES = ("new", "old", "current", "main", "second", "final", "draft", "shared", "internal",
              "external", "small", "large", "manual", "automated", "weekly", "monthly", "open",
              "blocked", "urgent", "minor", "tricky", "simple", "slow", "fast", "stable", "flaky")
NOUNS = ("plan", "doc", "ticket", "change", "numbers", "proposal", "estimate", "timeline", "dashboard",
         "report", "question", "issue", "process", "template", "spreadsheet", "summary", "thread",
         "meeting", "deadline", "owner", "draft", "review", "feature", "workflow", "board", "metric",
         "target", "request", "list", "note", "update", "sprint", "demo", "goal", "risk", "budget line",
         "follow-up", "decision", "agenda", "backlog", "ticket queue", "config", "script", "test suite",
         *SYSTEMS)
TIMES = ("next week", "this week", "by friday", "before the demo", "this sprint", "after the release",
         "tomorrow", "later today", "end of month", "in the next sync", "soon", "first thing monday")
PREPS = ("for", "with", "around", "about", "behind", "after", "before", "on")
OPENERS = ("Okay so", "Right", "Yeah", "So", "Also", "Honestly", "Actually", "Anyway", "Well",
           "To be fair", "On that note", "Quick thing")
NUMBERS = ("two", "three", "four", "five", "six", "a few", "a couple of", "several", "ten", "twelve")
FILLERS = ("Um, ", "Uh, ", "So, ", "I mean, ", "You know, ", "Like, ", "Hmm, ")
BACKCHANNELS = ("Mm-hm.", "Right.", "Yeah.", "Okay.", "Sure.", "Uh-huh.", "Right, right.", "Yep.",
                "Got it.", "Makes sense.", "Mm.", "Yeah, yeah.")
# How often each is said, in the order above. Real transcripts lean on a few forms: in QMSum and MeetingQA the
# commonest backchannel alone is 6-8% of all passages and the first four are over half of them, a head a uniform
# draw never makes. Those identical passages are what an HNSW graph loses recall on (docs/agreement.md), so the
# head is reproduced: weights falling roughly as 1/rank, "Yeah." first.
BACKCHANNEL_WEIGHTS = (14, 6, 40, 20, 3, 4, 2, 3, 2, 1, 10, 5)

# Short fragments of interactive talk (the interactive register): "{n}" noun, "{a}" adjective, "{t}" time,
# "{o}" opener. None is made only of backchannel words, so a fragment is never counted as one.
FRAGMENTS = ("Yeah, the {n}.", "The {a} one?", "Which {n}?", "So the {n}, yeah.", "Maybe {t}.", "The {n}?",
             "Right, the {a} {n}.", "Um, the {n}.", "Not {t}, no.", "{o}, sure.", "I guess so.", "That works.",
             "Fair enough.", "Hmm, {a}.", "Could be.", "And the {n}?", "Too {a}, I think.", "Good point.",
             "Uh, the {a} {n}.", "Me too.")

# Bulk sentence templates: "{s}" subject, "{m}" modal, "{v}" verb, "{p}" past verb, "{a}" adjective,
# "{n}" noun (topic-weighted), "{t}" time, "{r}" preposition, "{o}" opener, "{k}" number.
# No template starts with a slot that could carry a reserved word (none can: reserved words are
# not in these lists at all).
BULK_TEMPLATES = (
    "{s} {m} {v} the {a} {n} {t}.",
    "{o}, {s} {p} the {n} {r} the {n}.",
    "{s} {p} {k} {n} items {t}.",
    "the {a} {n} is still {a}, so {s} {m} {v} it {t}.",
    "{o}, the {n} {r} the {a} {n} looks {a}.",
    "can {s} {v} the {n} {t}?",
    "{s} {p} it, but the {n} is {a}.",
    "I think the {n} and the {n} need an owner.",
    "{o}, {s} {m} {v} that {r} the {n}.",
    "what about the {a} {n}?",
    "my worry is the {n}, it is {a} and {a}.",
    "{s} {p} the {n} and {p} the {n} {t}.",
    "if {s} {p} the {n}, the {n} got {a}.",
    "there are {k} {a} {n} items {r} the {n}.",
    "the {n} {r} the {n} came up again.",
    "{s} {m} {v} the {n} first and then the {n}.",
    "{o}, let me {v} the {a} {n} {t}.",
    "it depends on the {n}, really.",
    "the {a} {n} {r} {n} is mostly done.",
    "who is on the {n} {t}?",
)

# -- ground truth: reserved vocabulary ----------------------------------------------------------

# Marker phrases are "{MARKER_FIRST} {MARKER_SECOND}" pairs. Neither list's words occur in bulk text,
# the lists are disjoint, and a marker always starts with a first-list word, so no marker's token
# pair can occur inside another phrase (reordering puts a second-list word first).
MARKER_FIRST = (
    "cedar", "amber", "cobalt", "saffron", "granite", "willow", "copper", "indigo", "juniper",
    "marble", "obsidian", "hazel", "crimson", "birch", "ivory", "sable", "teal", "ochre", "slate",
    "cinder", "aspen", "russet", "pewter", "quartz", "onyx", "maple", "silver", "topaz", "garnet",
    "umber", "coral", "jasper", "bronze", "linen", "scarlet", "violet", "walnut", "basalt",
)
MARKER_SECOND = (
    "lantern", "heron", "compass", "harbor", "falcon", "meadow", "anvil", "beacon", "orchard",
    "kestrel", "lighthouse", "canyon", "glacier", "sparrow", "citadel", "prairie", "quarry",
    "thistle", "tundra", "voyager", "wharf", "zephyr", "badger", "bramble", "cascade", "dune",
    "ember", "fjord", "grove", "hollow", "island", "jetty", "keystone", "lagoon", "mesa", "nightjar",
)
# Words used only to build sibling near-misses ("cedar harbor"-style phrases sharing one word).
SIBLING_FIRST = ("frost", "pine", "rust", "ash", "moss", "storm", "dusk", "dawn")
SIBLING_SECOND = ("kite", "spire", "bridge", "ridge", "summit", "delta", "reef", "forge")
# Words inserted between a marker's tokens for the "inserted word" near-miss.
INSERTED = ("blue", "big", "north", "pilot", "mini", "legacy")

# R5 items: "{ITEM_AREAS} {ITEM_THINGS}", two tokens, pairwise distinct, so no item is a token
# prefix of another; plurals ("...s") are near-misses and no plural is itself an item word.
ITEM_AREAS = ("billing", "search", "onboarding", "pricing", "reporting", "checkout", "payroll",
              "inventory", "routing", "archive", "telemetry", "ledger", "invoice", "catalog")
ITEM_THINGS = ("migration", "rollout", "redesign", "cleanup", "launch", "rewrite", "upgrade",
               "consolidation")
ITEM_SIBLING_THINGS = ("dashboard", "handbook", "survey", "offsite")
DEFER_VERB = "defer"

# Sentences that carry ground truth. "{x}" is the phrase / item / fact slot. None starts with the
# slot, so a planted token is never the first token of a turn or sentence.
MARKER_TEMPLATES = (
    "I think we should revisit the {x} next week.",
    "Any update on the {x} from your side?",
    "The numbers on the {x} look better than expected.",
    "Let us keep the {x} on the list for now.",
    "We got some feedback about the {x} from the field.",
    "I spoke to legal about the {x} yesterday.",
    "So the {x} is moving again, which is good.",
    "My only concern with the {x} is staffing.",
)
DEFER_TEMPLATES = (
    "I would say we defer the {x} until next quarter.",
    "Can we defer the {x} to the next sync?",
    "Defer the {x}, it is not ready yet.",
    "Honestly we should defer the {x} for now.",
    "Let us defer the {x} and revisit in a month.",
)
# Near-misses for R5: the item mentioned without the deferral pattern.
MENTION_TEMPLATES = (
    "The {x} is still on track as far as I know.",
    "Who owns the {x} these days?",
    "We finished the first half of the {x} last week.",
)

# Syllables for invented proper nouns (lookup subjects, multi-file subjects, vendor names).
SYLLABLES = ("va", "lor", "mi", "ren", "qua", "tho", "zel", "bri", "dun", "ka", "vex", "ori", "sta",
             "lin", "mo", "ra", "tu", "pel", "gra", "sen", "fa", "nir", "ost", "el", "cor", "yan")
