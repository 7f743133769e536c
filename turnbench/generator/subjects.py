"""What meetings talk about, named the way people name things: customers, projects, products and places.

A subject is ordinary words: a customer is a brand word and a sector ("Harper Logistics"), a project a code word
("Project Skylark", "the Skylark project"), a product an area and a thing ("the partner portal"), a place a city and
a site ("the Leeds warehouse"). Each team keeps a pool of them and comes back to them across its sessions, so a
subject's name alone never finds the meeting: what was said about it there (a fact, a discussion) does. Only a few
subjects (``INVENTED_SHARE``) get an invented code word, as some real projects do.

Every subject has a *sense*: the ordinary words a speaker uses for what it is (a logistics customer is a "shipping
company", a warehouse a "depot"), which the question lexicon (``generator/lexicon.py``) may put in a question
instead of the name's own words — meaning kept, wording changed. The identifying word of a name (the brand, the
code word, the city) is never substituted: without it a question would not say which subject it means.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from turnbench.generator import wordlists

CUSTOMER, PROJECT, PRODUCT, PLACE = "customer", "project", "product", "place"
KINDS = (CUSTOMER, PROJECT, PRODUCT, PLACE)
# Subjects per team: enough that no (subject, fact template) pair is used twice in a default corpus.
POOL_PER_TEAM = 24
INVENTED_SHARE = 0.08

# Brand words of customers and code words of projects: ordinary capitalised words, none a word of any other list.
BRANDS = ("Harrow", "Dalby", "Brookline", "Pioneer", "Evergreen", "Riverside", "Horizon", "Liberty",
          "Frontier", "Heritage", "Meridian", "Crescent", "Sterling", "Redwood", "Oakridge", "Westfield",
          "Northgate", "Bayside", "Lakeshore", "Hillcrest", "Fairview", "Ashford", "Bramley", "Holloway",
          "Whitmore", "Pemberton", "Lockwood", "Winslow", "Greystone", "Kingfisher", "Larchmont", "Millbrook",
          "Northfield", "Pinehurst", "Rosewood", "Silverton", "Stonebridge", "Thornbury", "Wexford")
SECTORS = {  # sector word -> what a speaker calls such a company (the sense)
    "Foods": ("food company", "grocer"), "Logistics": ("shipping company", "freight firm"),
    "Health": ("healthcare client", "clinic group"), "Bank": ("banking client", "lender"),
    "Motors": ("car maker", "automotive client"), "Energy": ("utility", "power company"),
    "Media": ("publisher", "broadcaster"), "Insurance": ("insurer", "insurance client"),
    "Pharma": ("drug company", "pharmaceutical client"), "Retail": ("retailer", "store chain"),
    "Airlines": ("airline", "carrier"), "Hotels": ("hotel chain", "hospitality client"),
}
CODEWORDS = ("Aurora", "Nimbus", "Tidewater", "Lodestar", "Skylark", "Bluebird", "Harvest", "Northstar",
             "Driftwood", "Foxglove", "Marigold", "Sandpiper", "Starling", "Bellwether", "Cornerstone",
             "Greenfield", "Ironwood", "Larkspur", "Moonbeam", "Riverbend", "Seabird", "Sunflower", "Thunderbird",
             "Waypoint", "Windmill", "Halcyon", "Everest", "Kilimanjaro", "Monsoon", "Solstice")
PRODUCT_AREAS = {  # area word -> its sense
    "mobile": ("phone",), "partner": ("reseller",), "admin": ("back office",), "loyalty": ("rewards",),
    "referral": ("invite",), "shipping": ("delivery",), "fraud": ("scam",), "booking": ("reservation",),
    "wallet": ("stored payment",), "kiosk": ("self service",), "desktop": ("laptop",), "voice": ("spoken",),
}
PRODUCT_THINGS = {  # thing word -> its sense
    "app": ("application",), "portal": ("website",), "api": ("interface",), "widget": ("component",),
    "scanner": ("reader",), "chatbot": ("assistant",), "feed": ("stream",), "plugin": ("extension",),
    "calculator": ("estimator",), "form": ("questionnaire",),
}
SITES = {  # site word -> its sense
    "office": ("branch",), "warehouse": ("depot",), "store": ("shop",), "plant": ("factory",),
    "lab": ("workshop",), "studio": ("workspace",),
}


@dataclass(frozen=True)
class Subject:
    """A thing meetings talk about: how it is named, which of its words identify it, and what else it is called."""

    name: str  # as said after "the": "Harrow Logistics", "Skylark project", "Project Skylark", "partner portal"
    kind: str
    key: tuple[str, ...]  # the identifying words, never substituted (lowercase)
    parts: tuple[tuple[str, tuple[str, ...]], ...]  # (word of the name, what else it is called), substitutable
    invented: bool = False

    @property
    def words(self) -> tuple[str, ...]:
        """Every lowercase word of the name."""
        return tuple(w.lower() for w in self.name.split())

    @property
    def said(self) -> str:
        """The name as a noun phrase on its own: "the partner portal", "Harrow Logistics", "Project Skylark"."""
        return self.name if self.kind == CUSTOMER or self.name.startswith("Project ") else f"the {self.name}"

    def marked(self) -> str:
        """The name with its substitutable parts in brackets, for a question form (generator/lexicon.py)."""
        parts = dict(self.parts)
        return " ".join(f"[{w}]" if w in parts else w for w in self.name.split())

    def senses(self) -> dict[str, tuple[str, ...]]:
        """What each substitutable part may be called instead."""
        return dict(self.parts)


class SubjectPool:
    """Subjects drawn once per corpus, each name used once; a team's pool is a fixed slice."""

    def __init__(self, rng: random.Random, cities: tuple[str, ...], forbidden: set[str],
                 invented: list[str]) -> None:
        self.rng = rng
        self.forbidden = forbidden
        self.used: set[str] = set()
        self.cities = cities
        self.invented = invented

    def _new(self) -> Subject:
        rng = self.rng
        for _ in range(1000):
            kind = KINDS[rng.randrange(len(KINDS))]
            if rng.random() < INVENTED_SHARE and self.invented and kind in (CUSTOMER, PROJECT):
                word = self.invented.pop(0)
            elif kind == CUSTOMER:
                word = BRANDS[rng.randrange(len(BRANDS))]
            elif kind == PROJECT:
                word = CODEWORDS[rng.randrange(len(CODEWORDS))]
            elif kind == PLACE:
                word = self.cities[rng.randrange(len(self.cities))] if self.cities else "Central"
            else:
                word = ""
            subject = self._named(kind, word, rng)
            if subject.name not in self.used and not set(subject.words) & self.forbidden:
                self.used.add(subject.name)
                return subject
        raise RuntimeError("the subject lists ran out of names")  # a corpus far beyond MEETINGS_RANGE

    @staticmethod
    def _named(kind: str, word: str, rng: random.Random) -> Subject:
        invented = word not in BRANDS and word not in CODEWORDS and kind in (CUSTOMER, PROJECT)
        if kind == CUSTOMER:
            sector = sorted(SECTORS)[rng.randrange(len(SECTORS))]
            return Subject(f"{word} {sector}", kind, (word.lower(),), ((sector, SECTORS[sector]),), invented)
        if kind == PROJECT:
            name = f"Project {word}" if rng.random() < 0.5 else f"{word} project"
            return Subject(name, kind, (word.lower(),), (), invented)
        if kind == PRODUCT:
            area = sorted(PRODUCT_AREAS)[rng.randrange(len(PRODUCT_AREAS))]
            thing = sorted(PRODUCT_THINGS)[rng.randrange(len(PRODUCT_THINGS))]
            return Subject(f"{area} {thing}", kind, (), ((area, PRODUCT_AREAS[area]), (thing, PRODUCT_THINGS[thing])))
        site = sorted(SITES)[rng.randrange(len(SITES))]
        return Subject(f"{word} {site}", kind, tuple(w.lower() for w in word.split()), ((site, SITES[site]),))

    def draw(self, n: int) -> tuple[Subject, ...]:
        return tuple(self._new() for _ in range(n))


def subject_words() -> frozenset[str]:
    """Every word a subject's name or sense can hold (cities aside): kept out of the aggregation phrases."""
    words: set[str] = set()
    for group in (BRANDS, CODEWORDS, SECTORS, PRODUCT_AREAS, PRODUCT_THINGS, SITES):
        words.update(w.lower() for w in group)
    for senses in (*SECTORS.values(), *PRODUCT_AREAS.values(), *PRODUCT_THINGS.values(), *SITES.values()):
        for s in senses:
            words.update(s.split())
    words.update(("project",))
    return frozenset(words)


def reserved_for_aggregation() -> frozenset[str]:
    """The words aggregation phrases and items are made of: no subject may use one."""
    words: set[str] = set()
    for group in (wordlists.MARKER_FIRST, wordlists.MARKER_SECOND, wordlists.SIBLING_FIRST, wordlists.SIBLING_SECOND,
                  wordlists.INSERTED, wordlists.ITEM_AREAS, wordlists.ITEM_THINGS, wordlists.ITEM_SIBLING_THINGS):
        words.update(w.lower() for w in group)
    words.add(wordlists.DEFER_VERB)
    return frozenset(words)
