"""The recall benchmark's synthetic banks: invented lives from templates, seeded.

Memories come from templates over invented people (first x last names), cities, venues,
activities and objects, with dates over three years, mixed fact types and a few tags;
questions are made from the same components, a quarter of them naming a time. Every text
keeps its *components* (the generic frame, then each slot's filler), which
:class:`benchmarks.recall_bench_vectors.CompositeEmbedder` turns into its vector. The same
seed gives the same banks and questions.
"""

from __future__ import annotations

import functools
import random
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from benchmarks.recall_bench_vectors import CompositeEmbedder
from hindsight_tools.models import FactType

NOW = datetime(2025, 1, 15, 12, tzinfo=UTC)  # every question is asked "today" = this moment
DATES_FROM = datetime(2022, 1, 1, tzinfo=UTC)
DATES_SPAN_SECONDS = 3 * 365 * 86400
TIME_SHARE = 0.25
OVERLAP_QUERIES = 50

# --- vocabulary ------------------------------------------------------------------------


def _split(spec: str) -> tuple[str, ...]:
    """``a|b c|d`` -> ("a", "b c", "d"); line breaks inside the spec are spaces."""
    return tuple(" ".join(part.split()) for part in spec.split("|"))


def _words(spec: str) -> tuple[str, ...]:
    return tuple(spec.split())


FIRST_NAMES = _words(
    """Priya Tomasz Amara Kenji Sofia Mateo Leila Oren Nadia Emeka Ingrid Rafael Yuki
Hamid Chiara Tariq Freya Diego Anouk Bilal Mireille Kwame Elena Joon Farah Lukas Ximena Arjun
Hana Milo Zainab Pavel Noor Sebastian Ines Kofi Astrid Ravi Lucia Dmitri Aisha Henrik Camila
Tenzin Olga Greta Nikhil Rosa Idris Signe Marco Yara Felix Amina Bruno Keiko Omar Lena Thiago
Sade Viktor Maya Jonas Esra Luca Adaeze Sven Paloma Hiro Zara Anton Mei Gabriel Nia Florian
Leyla Andrei Emil Dalia Rohan Clara Yusuf Wren Ibrahim Soraya Niko Talia Kai Noemi Bashir Elif
Casper Imani Ruben Saoirse Teodor Linnea Fatima Malika"""
)
LAST_NAMES = _words(
    """Nair Kowalski Okafor Tanaka Rossi Herrera Haddad Levi Petrova Eze Lindqvist
Moreau Sato Rahimi Bianchi Qureshi Larsen Alvarez Janssen Mensah Novak Fischer Duarte Kaur
Ivanova Costa Nakamura Osei Horvat Berg Silva Adeyemi Romero Park Dubois Kaya Schmidt Mwangi
Castillo Yilmaz"""
)
CITIES = """Lisbon|Porto|Madrid|Valencia|Marseille|Lyon|Antwerp|Rotterdam|Hamburg|Leipzig|Krakow|
Prague|Vienna|Ljubljana|Zagreb|Athens|Istanbul|Tbilisi|Cairo|Nairobi|Accra|Lagos|Dakar|
Casablanca|Montreal|Toronto|Vancouver|Seattle|Denver|Chicago|Boston|Atlanta|Austin|Oaxaca|
Bogota|Lima|Quito|Montevideo|Recife|Havana|Mumbai|Pune|Kathmandu|Hanoi|Osaka|Seoul|Taipei|
Manila|Auckland|Reykjavik"""
VENUE_KINDS = """climbing gym|farmers market|bakery|public library|cinema|jazz bar|community
garden|bookshop|co-working space|ramen shop|swimming pool|science museum|train station|concert
hall|tennis club|flea market|yoga studio|brewery|botanical garden|night market"""
VENUE_MOODS = ("old", "new", "riverside", "downtown", "little")
# Lowercase on purpose: only people and cities should come out of entity extraction.
ACTIVITIES = """plan the hackathon|rehearse the wedding speech|fix the bike|repaint the kitchen|
train for the marathon|study for the bar exam|practise the cello|build a treehouse|bake
sourdough bread|prepare the tax return|learn to surf|write the grant proposal|record a podcast
episode|organise the book club|move the piano|plant tomatoes|review the budget|debug the
payment service|shoot a short film|brew a pale ale|learn the guitar|sew a quilt|restore an old
motorbike|prepare for the job interview|plan the road trip|draft the novel|sort out the visa
paperwork|coach the youth football team|volunteer at the food bank|paint a mural|edit the
wedding photos|build a website for the shop|plan the surprise party|learn to knit|renovate the
bathroom|pack for the move|practise chess openings|go birdwatching|run the charity quiz|prepare
the pitch deck|learn to sail|fix the leaking roof|take pottery lessons|translate the manual|
compose a song|tune the piano|set up the home server|learn to dance salsa|assemble the
furniture|write a cookbook|train the new puppy|plan the garden|prepare the conference talk|
study astronomy|test the new recipe|repair the fence|shop for a wedding dress|learn to ski|
mentor the interns|organise the street festival|rebuild the greenhouse|record the choir|prepare
for the citizenship test|try rock climbing|make jam|write thank-you letters|clean out the attic|
design the logo|plan the anniversary dinner|learn sign language|practise yoga|run a half
marathon|write the quarterly report|photograph the eclipse|plan the family reunion|negotiate
the lease|build a canoe|learn to code|grow mushrooms|scan the old family photos|prepare the art
exhibition|rehearse the play|choose a new apartment|plan the honeymoon|learn calligraphy|paint
the boat|fix the car brakes|sort the vinyl collection|plan a camping trip|study for the driving
test|decorate the nursery|launch the newsletter|migrate the database|plan the product launch|
write a eulogy|make a documentary|learn beekeeping|prepare for the triathlon|donate blood"""
OBJECTS = """a vintage camera|the sourdough starter|a second-hand piano|a cargo bike|a new laptop|
a camping tent|an espresso machine|a rare vinyl record|a wool sweater|a telescope|a sailing
dinghy|a drone|a hand-made vase|a first edition novel|a standing desk|an electric scooter|a
kayak|a sewing machine|a mechanical keyboard|a pair of hiking boots|a bonsai tree|an old
typewriter|a film projector|a chess set|a violin|a tablet|a painting of the harbour|a set of
kitchen knives|a rocking chair|a 3D printer|a pizza oven|a fishing rod|a road bike|a smartwatch|
a record player|a leather jacket|a wedding ring|a rowing machine|a puppy|a cast iron skillet|a
houseplant|a sleeping bag|a board game|a pair of skis|a microscope|a ukulele|a wooden canoe|a
winter coat|a garden shed|a snowboard|a coffee grinder|a sketchbook|a beehive|a motorbike
helmet|an air fryer|a solar panel|a massage chair|a used car|a mountain bike|a noise-cancelling
headset|a wall clock|a quilt|a karaoke machine|a tool kit|a hammock|a photo album|a bread
machine|a dollhouse|a globe|a paddle board|a vacuum robot|a desk lamp|a porcelain teapot|a pair
of binoculars|a yoga mat|a wine fridge|a guitar amplifier|a baby stroller|a trampoline|a stamp
collection|a laser printer|a fountain pen|a portable heater|a climbing rope|a rug|a bookshelf|an
aquarium|a saxophone|a dining table|a lawn mower|a camera lens|a watercolour set|a gaming
console|a vintage watch|a wetsuit|a backpack|a pressure cooker|a mirror|a chandelier"""
TAGS = ("work", "family", "travel", "health", "hobby", "friends")
# Each checked against hindsight_tools.query.time_window at NOW; all fall inside the three years.
TIME_EXPRESSIONS = (
    "last spring",
    "last summer",
    "last winter",
    "last month",
    "last year",
    "two months ago",
    "in 2023",
    "in March 2024",
    "in June 2023",
    "in early 2024",
    "in the autumn of 2022",
    "in the fall of 2023",
)
# (fact type, weight, template); weights give about 50% world, 30% experience, 20% observation
MEMORY_FRAMES: tuple[tuple[FactType, int, str], ...] = (
    ("world", 3, "{a} met {b} at {venue} in {city} to {activity}."),
    ("world", 2, "{a} bought {object} at {venue} in {city}."),
    ("world", 2, "{a} lent {object} to {b} in {city}."),
    ("world", 1, "{a} moved to {city} and started going to {venue}."),
    ("experience", 2, "I went to {venue} in {city} with {a} to {activity}."),
    ("experience", 2, "I helped {a} {activity} in {city}."),
    ("experience", 1, "{a} gave me {object} at {venue}."),
    ("observation", 1, "{a} seems happiest when they {activity}."),
    ("observation", 1, "{a} and {b} often meet at {venue} in {city}."),
    ("observation", 1, "{a} cares a lot about {object}."),
)
QUESTION_FRAMES = (
    "Who did {a} meet in {city}?",
    "What did {a} do at {venue}?",
    "Where did {a} go to {activity}?",
    "Who bought {object}?",
    "What does {a} care about?",
    "Who helped {a} {activity}?",
)
TIMED_QUESTION_FRAMES = (
    "What did {a} do {time}?",
    "Who did {a} meet {time}?",
    "Where did I go with {a} {time}?",
)
# A frame's own vector is the template with neutral words in its slots: it carries the verb
# and sentence shape ("met ... at ... to ...") that the fillers don't.
GENERIC_FILLERS = {
    "a": "someone",
    "b": "someone else",
    "venue": "a place",
    "city": "a city",
    "activity": "do something",
    "object": "something",
    "time": "at some point",
}


@dataclass(frozen=True)
class Vocabulary:
    """Every component a memory or question is built from."""

    persons: tuple[str, ...]
    cities: tuple[str, ...]
    venues: tuple[str, ...]
    activities: tuple[str, ...]
    objects: tuple[str, ...]

    def choices(self, slot: str) -> tuple[str, ...]:
        return {
            "a": self.persons,
            "b": self.persons,
            "city": self.cities,
            "venue": self.venues,
            "activity": self.activities,
            "object": self.objects,
            "time": TIME_EXPRESSIONS,
        }[slot]


def make_vocabulary(rng: random.Random, persons: int = 300) -> Vocabulary:
    """300 invented people, 150 places (50 cities, 100 venues), 200 activities and objects."""
    names = [f"{first} {last}" for first in FIRST_NAMES for last in LAST_NAMES]
    venues = [f"the {mood} {kind}" for kind in _split(VENUE_KINDS) for mood in VENUE_MOODS]
    return Vocabulary(
        persons=tuple(rng.sample(names, persons)),
        cities=_split(CITIES),
        venues=tuple(venues),
        activities=_split(ACTIVITIES),
        objects=_split(OBJECTS),
    )


def slots_of(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


def _pick(rng: random.Random, options: Sequence[str]) -> str:
    # Mildly skewed (weight 1/sqrt(rank)): some people and places come up far more often,
    # as in a real life, without one name swallowing the bank.
    weights = _skew(len(options))
    return options[rng.choices(range(len(options)), cum_weights=weights)[0]]


@functools.cache
def _skew(n: int) -> list[float]:
    return [float(w) for w in np.cumsum(1.0 / np.sqrt(np.arange(1, n + 1)))]


def fill(template: str, slots: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    """The text and its components: the generic frame, then each slot's filler."""
    names = slots_of(template)
    generic = template.format(**{n: GENERIC_FILLERS[n] for n in names})
    return template.format(**slots), (generic, *(slots[n] for n in names))


@dataclass(frozen=True)
class Memory:
    id: str
    text: str
    fact_type: FactType
    occurred_start: datetime
    tags: tuple[str, ...]
    slots: Mapping[str, str]
    parts: tuple[str, ...]

    def item(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "fact_type": self.fact_type,
            "occurred_start": self.occurred_start.isoformat(),
            "tags": list(self.tags),
        }


@dataclass(frozen=True)
class Question:
    text: str
    parts: tuple[str, ...]
    timed: bool


def make_memories(bank: str, count: int, vocab: Vocabulary, seed: int) -> list[Memory]:
    """``count`` memories of ``bank``, the same for the same (bank, count, seed)."""
    rng = random.Random(f"{seed}:{bank}")
    weights = [w for _, w, _ in MEMORY_FRAMES]
    memories = []
    for i in range(count):
        fact_type, _, template = rng.choices(MEMORY_FRAMES, weights=weights)[0]
        slots = {n: _pick(rng, vocab.choices(n)) for n in slots_of(template)}
        if "b" in slots:
            while slots["b"] == slots["a"]:
                slots["b"] = _pick(rng, vocab.persons)
        text, parts = fill(template, slots)
        when = DATES_FROM + timedelta(seconds=rng.randrange(DATES_SPAN_SECONDS))
        tags = tuple(rng.sample(TAGS, rng.choices((0, 1, 2), weights=(3, 5, 2))[0]))
        memories.append(Memory(f"{bank}-{i:06d}", text, fact_type, when, tags, slots, parts))
    return memories


def make_questions(
    memories: Sequence[Memory], count: int, vocab: Vocabulary, seed: int
) -> list[Question]:
    """Short questions about things the bank holds; a quarter of them name a time."""
    rng = random.Random(f"{seed}:questions:{memories[0].id if memories else ''}:{count}")
    timed_count = round(count * TIME_SHARE)
    # exactly that share, in random places: a coin per question strays too far at n = 40
    flags = [True] * timed_count + [False] * (count - timed_count)
    rng.shuffle(flags)
    questions = []
    for timed in flags:
        template = rng.choice(TIMED_QUESTION_FRAMES if timed else QUESTION_FRAMES)
        source = rng.choice(memories).slots  # fillers from one memory, so some answer it
        slots = {
            n: source[n] if n in source else rng.choice(vocab.choices(n))
            for n in slots_of(template)
        }
        text, parts = fill(template, slots)
        questions.append(Question(text, parts, timed))
    return questions


# --- the workload of one run --------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    sizes: tuple[int, ...]
    questions: int
    other_size: int


@dataclass
class Workload:
    banks: dict[str, list[Memory]]
    questions: dict[str, list[Question]]  # per big bank, and for the small overlap bank
    overlap_banks: dict[str, list[Question]]


def make_workload(scale: Scale, seed: int, embedder: CompositeEmbedder) -> Workload:
    vocab = make_vocabulary(random.Random(seed))
    others = {f"other-{i}": scale.other_size for i in (1, 2, 3)}
    sizes = {**others, **{f"big-{n}": n for n in scale.sizes}}
    banks = {bank: make_memories(bank, n, vocab, seed) for bank, n in sizes.items()}
    wanted = {f"big-{n}": scale.questions for n in scale.sizes} | {"other-1": OVERLAP_QUERIES}
    questions = {b: make_questions(banks[b], n, vocab, seed) for b, n in wanted.items()}
    for memories in banks.values():
        for m in memories:
            embedder.register(m.text, m.parts)
    for qs in questions.values():
        for q in qs:
            embedder.register(q.text, q.parts, question=True)
    largest = f"big-{max(scale.sizes)}"
    overlap_banks = {"other-1": questions["other-1"], largest: questions[largest][:OVERLAP_QUERIES]}
    return Workload(banks, questions, overlap_banks)
