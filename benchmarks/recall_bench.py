"""Recall latency on synthetic banks of 10k-100k memories, against the bare pgvector floor.

    .venv/bin/python benchmarks/recall_bench.py [--sizes 10000 100000] [--queries 200]
        [--quick] [--data-dir DIR] [--keep] [--out FILE] [--seed 7]

Data. Memories come from templates over invented people (first x last names), cities,
venues, activities and objects, with dates over three years, mixed fact types and a few
tags ("Priya Nair met Tomasz Kowalski at the riverside bakery in Lisbon to plan the
hackathon."). Everything is drawn from seeded ``random.Random``: the same seed gives the
same banks and questions. The big bank shares the table with three smaller banks, so the
bank filter of every arm has something to filter.

Embeddings. The real model embeds about 100 texts/s on a 2-core CPU: 100k memories would
take close to 20 minutes before the first recall. :class:`CompositeEmbedder` embeds each template
*component* once with the real model (a few hundred texts) and represents a memory as the
L2-normalised sum of its components' vectors plus a little Gaussian noise seeded by the
text (near-duplicates are close but not identical). The vectors are therefore clustered
the way real ones are: memories sharing a person, place or activity are near each other,
which is what HNSW search, the similarity threshold and semantic links react to. Random
vectors would be uniformly far apart and make every search look alike. Questions are made
from the same components and go through the same embedder; to keep recall's embed stage
honest, embedding a question also runs the real model on it once (the result is dropped).

Measured, on one table with every bank in it (queries interleaved so background load
hits every variant alike):

* recall at budgets low/mid/high: wall p50/p95 and the p50 of each traced stage and arm;
* the floor: one pooled ``ORDER BY embedding <=> q LIMIT 20`` kNN query filtered by bank,
  with and without embedding the question with the real model;
* for a bank of at least 50,000 memories, ``EXPLAIN (ANALYZE, BUFFERS)`` of the semantic
  arm's SQL, built by the recall pipeline itself so it can't drift;
* filtered recall: the semantic arm filtered by bank and fact type, on a small bank and on
  the largest one, vs exact search (index scans off), as mean overlap@k; both as planned
  (small banks usually get an exact scan) and with the HNSW index forced.

The report is Markdown on stdout (and ``--out``); progress bars go to stderr. Without
``--data-dir`` the store lives in a fresh temporary folder, removed at the end unless
``--keep``; a folder given with ``--data-dir`` is never removed (its banks are refilled).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import platform
import random
import re
import shlex
import shutil
import string
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import torch
from psycopg import sql
from tqdm import tqdm

from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.encoders.embedding import Embedder, Vectors, default_embedder
from hindsight_tools.models import FACT_TYPES, Budget, FactType, RecallRequest
from hindsight_tools.recall.arms.base import ARM_ORDER
from hindsight_tools.recall.arms.semantic import _SCAN
from hindsight_tools.recall.budget import recall_budget
from hindsight_tools.recall.pipeline import arm_plans
from hindsight_tools.runtime.plan import Plan, Rows, Statement, run_plan

NOW = datetime(2025, 1, 15, 12, tzinfo=UTC)  # every question is asked "today" = this moment
DATES_FROM = datetime(2022, 1, 1, tzinfo=UTC)
DATES_SPAN_SECONDS = 3 * 365 * 86400
BUDGETS: tuple[Budget, ...] = ("low", "mid", "high")
STAGES = (
    "embed",
    "late_interaction_query",
    "time_parse",
    "arms",
    "fusion",
    "hydrate",
    "late_interaction",
    "rerank",
    "scoring",
    "token_filter",
)
RETAIN_BATCH = 1000
WARM_UP = 10
TIME_SHARE = 0.25
EXPLAIN_MIN_SIZE = 50_000
OVERLAP_QUERIES = 50
# The global HNSW index and the per-fact-type ones (memory_units_embedding_world, ...).
HNSW_INDEX = re.compile(r"memory_units_embedding_(hnsw|world|experience|observation)")

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


# --- embeddings ------------------------------------------------------------------------


class CompositeEmbedder:
    """An :class:`Embedder` for the synthetic texts: sum of component vectors plus noise.

    Texts must be registered (by the generator) with their components before they are
    embedded; an unregistered text falls back to the real model. Deterministic: the noise
    is seeded by the text itself.
    """

    def __init__(self, real: Embedder, seed: int, noise: float = 0.15) -> None:
        self._real = real
        self._seed = seed
        self._noise = noise  # noise norm relative to the component sum's norm
        self._parts: dict[str, tuple[str, ...]] = {}
        self._questions: set[str] = set()
        self._units: dict[str, Vectors] = {}

    @property
    def name(self) -> str:
        return f"composite({self._real.name})"

    @property
    def dimension(self) -> int:
        return self._real.dimension

    def register(self, text: str, parts: tuple[str, ...], *, question: bool = False) -> None:
        self._parts[text] = parts
        if question:
            self._questions.add(text)

    def embed_components(self) -> int:
        """Embed every component not yet embedded with the real model; how many there were."""
        missing = sorted({p for ps in self._parts.values() for p in ps} - self._units.keys())
        for part, vector in zip(missing, self._real.embed(missing), strict=True):
            self._units[part] = vector
        return len(missing)

    def embed(self, texts: Sequence[str]) -> Vectors:
        charged = [t for t in texts if t in self._questions]
        if charged:
            self._real.embed(charged)  # recall pays what embedding a real question costs
        return self.vectors(texts)

    def vectors(self, texts: Sequence[str]) -> Vectors:
        """The composite vectors, without charging the real model's time for questions."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def _vector(self, text: str) -> Vectors:
        parts = self._parts.get(text)
        if parts is None:
            return np.asarray(self._real.embed([text])[0], dtype=np.float32)
        if any(p not in self._units for p in parts):
            self.embed_components()
        total = np.sum([self._units[p] for p in parts], axis=0, dtype=np.float64)
        digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
        rng = np.random.default_rng([self._seed, int.from_bytes(digest, "big")])
        scale = self._noise * float(np.linalg.norm(total)) / np.sqrt(self.dimension)
        noisy = total + rng.normal(0.0, scale, self.dimension)
        return (noisy / np.linalg.norm(noisy)).astype(np.float32)


# --- statistics --------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def ms(seconds: float) -> str:
    return "–" if seconds != seconds else f"{seconds * 1000:.1f}"  # NaN: nothing measured


def overlap(
    found: Sequence[tuple[str, float]], exact: Sequence[tuple[str, float]], k: int
) -> float:
    """Share of the exact top-k (by similarity) that is also in the approximate top-k."""
    best = sorted(exact, key=lambda r: (-r[1], r[0]))[:k]
    if not best:
        return 1.0
    got = {i for i, _ in sorted(found, key=lambda r: (-r[1], r[0]))[:k]}
    return sum(1 for i, _ in best if i in got) / len(best)


@dataclass
class RecallSample:
    wall: float
    stages: dict[str, float]
    arms: dict[str, tuple[float, int]]  # arm -> (seconds, candidates)


@dataclass
class BankLatency:
    bank: str
    size: int
    questions: int
    timed_questions: int
    recall: dict[Budget, list[RecallSample]] = field(default_factory=dict)
    floor: list[float] = field(default_factory=list)
    floor_embedded: list[float] = field(default_factory=list)
    hnsw_plans: dict[Budget, bool] = field(default_factory=dict)  # semantic arm per budget


@dataclass
class Overlap:
    bank: str
    queries: int
    limit: int
    plans: dict[str, bool]  # variant (and "exact") -> uses the HNSW index
    means: dict[str, dict[int, float]]  # variant -> k -> mean overlap
    rows: dict[str, float]  # variant (and "exact") -> mean rows returned


# --- database helpers ----------------------------------------------------------------------


def _run(engine: MemoryEngine, plan: Plan[Any]) -> Any:
    with engine._pool.connection() as conn:
        return run_plan(conn, plan)


def _prefixed(settings: Sequence[str], plan: Plan[Any]) -> Plan[Any]:
    """``plan`` after some ``SET LOCAL``s in the same transaction."""
    for statement in settings:
        yield Statement(statement, None, "none")
    return (yield from plan)


def _explained(plan: Plan[Any], options: str) -> Plan[list[str]]:
    """``plan`` with its first row-returning statement replaced by its EXPLAIN."""
    rows: Rows | None = None
    stmt = next(plan)
    while stmt.mode != "rows":
        rows = yield stmt
        stmt = plan.send(rows)
    plan.close()
    query = stmt.query if isinstance(stmt.query, sql.Composable) else sql.SQL(stmt.query)
    explain = sql.SQL("EXPLAIN ({}) ").format(sql.SQL(options))
    lines = yield Statement(explain + query, stmt.params)
    return [str(line[0]) for line in lines]


def semantic_arm(
    engine: MemoryEngine,
    bank: str,
    question: str,
    vector: Any,
    types: list[FactType] | None,
    budget: Budget = "mid",
) -> Plan[list[tuple[str, float]]]:
    """The semantic arm's plan exactly as a recall at ``budget`` builds it."""
    services = engine._core.recall_services
    request = RecallRequest(query=question, budget=budget, types=types)
    limit = recall_budget(request.budget, request.max_tokens, services.settings)
    plans = arm_plans(services, bank, request, question, vector, None, limit)
    for name, plan in plans.items():
        if name != "semantic":
            plan.close()
    if "semantic" not in plans:
        raise SystemExit("the semantic arm is switched off (HINDSIGHT_API_RECALL_ARMS)")
    return plans["semantic"]


def machine_facts(engine: MemoryEngine) -> dict[str, str]:
    with engine._pool.connection() as conn:
        pg = conn.execute("SHOW server_version").fetchone()
        vector = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        buffers = conn.execute("SHOW shared_buffers").fetchone()
    cpu = next(
        (line.split(":", 1)[1].strip() for line in _cpuinfo() if line.startswith("model name")),
        platform.processor() or "unknown",
    )
    return {
        "CPU": f"{cpu}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start",
        "PostgreSQL": f"{pg[0] if pg else '?'} (shared_buffers {buffers[0] if buffers else '?'})",
        "pgvector": str(vector[0]) if vector else "?",
        "Python": platform.python_version(),
        # fewer free cores than torch threads makes the real model's latency jump
        "torch threads": str(torch.get_num_threads()),
    }


def _cpuinfo() -> list[str]:
    try:
        return Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return []


# --- the measurements --------------------------------------------------------------------


def retain_bank(
    engine: MemoryEngine, bank: str, memories: Sequence[Memory], reuse: bool = False
) -> float:
    """Retain ``memories`` into an empty ``bank`` in batches; the seconds it took.

    With ``reuse``, a bank that already holds that many memories (kept from an earlier run
    with ``--data-dir``) is left as is and 0.0 returned."""
    if reuse:
        with engine._pool.connection() as conn:
            row = conn.execute(
                "SELECT count(*) FROM memory_units WHERE bank_id = %s", (bank,)
            ).fetchone()
        if row is not None and row[0] == len(memories):
            return 0.0
    engine.delete_bank(bank)
    started = time.perf_counter()
    with tqdm(total=len(memories), unit="memory", desc=f"retain {bank}", leave=False) as bar:
        for start in range(0, len(memories), RETAIN_BATCH):
            batch = memories[start : start + RETAIN_BATCH]
            engine.retain(bank, [m.item() for m in batch])
            bar.update(len(batch))
    return time.perf_counter() - started


_FLOOR = (
    "SELECT id FROM memory_units WHERE bank_id = %(bank)s ORDER BY embedding <=> %(v)s LIMIT 20"
)


def time_floor(engine: MemoryEngine, bank: str, vector: Any) -> float:
    """One bank-filtered kNN query on a pooled connection, set up like the semantic arm."""
    started = time.perf_counter()
    with engine._pool.connection() as conn, conn.transaction():
        conn.execute(_SCAN)
        conn.execute(_FLOOR, {"bank": bank, "v": vector}).fetchall()
    return time.perf_counter() - started


def time_floor_embedded(engine: MemoryEngine, real: Embedder, bank: str, question: str) -> float:
    """The floor plus embedding the question with the real model, as any recall must."""
    started = time.perf_counter()
    vector = real.embed([question])[0]
    time_floor(engine, bank, vector)
    return time.perf_counter() - started


def time_recall(engine: MemoryEngine, bank: str, question: str, budget: Budget) -> RecallSample:
    started = time.perf_counter()
    result = engine.recall(
        bank, question, budget=budget, max_tokens=4096, trace=True, query_timestamp=NOW
    )
    wall = time.perf_counter() - started
    assert result.trace is not None
    arms = {name: (a.seconds, a.candidates) for name, a in result.trace.arms.items()}
    return RecallSample(wall, dict(result.trace.stages), arms)


def measure_bank(
    engine: MemoryEngine,
    real: Embedder,
    embedder: CompositeEmbedder,
    bank: str,
    size: int,
    questions: Sequence[Question],
) -> BankLatency:
    texts = [q.text for q in questions]
    vectors = embedder.vectors(texts)
    for text, vector in zip(texts[:WARM_UP], vectors, strict=False):
        time_floor(engine, bank, vector)
        time_floor_embedded(engine, real, bank, text)
        time_recall(engine, bank, text, "mid")
    result = BankLatency(bank, size, len(questions), sum(q.timed for q in questions))
    result.recall = {b: [] for b in BUDGETS}
    pairs = list(zip(texts, vectors, strict=True))
    for turn, (text, vector) in enumerate(tqdm(pairs, desc=f"recall {bank}", leave=False)):
        _measure_question(engine, real, bank, text, vector, turn, result)
    # The planner picks HNSW or an exact scan per budget (the LIMIT changes the costs).
    for budget in BUDGETS:
        plan = semantic_arm(engine, bank, texts[0], vectors[0], None, budget)
        lines: list[str] = _run(engine, _explained(plan, "COSTS OFF"))
        result.hnsw_plans[budget] = any(HNSW_INDEX.search(line) for line in lines)
    return result


def _measure_question(
    engine: MemoryEngine,
    real: Embedder,
    bank: str,
    text: str,
    vector: Any,
    turn: int,
    result: BankLatency,
) -> None:
    """Every variant once for one question, starting at a different one each turn.

    Interleaving lets a burst of background load touch every variant alike; rotating the
    order keeps one variant from always running right after the real model (whose threads
    keep the CPU busy for a moment after it returns).
    """
    steps: dict[str, Callable[[], None]] = {
        "floor": lambda: result.floor.append(time_floor(engine, bank, vector)),
        "floor+embedding": lambda: result.floor_embedded.append(
            time_floor_embedded(engine, real, bank, text)
        ),
    }
    for budget in BUDGETS:
        steps[budget] = functools.partial(_recall_into, engine, bank, text, budget, result)
    names = list(steps)
    start = turn % len(names)
    for name in names[start:] + names[:start]:
        steps[name]()


def _recall_into(
    engine: MemoryEngine, bank: str, text: str, budget: Budget, result: BankLatency
) -> None:
    result.recall[budget].append(time_recall(engine, bank, text, budget))


def explain_semantic(
    engine: MemoryEngine, embedder: CompositeEmbedder, bank: str, question: Question
) -> list[str]:
    vector = embedder.vectors([question.text])[0]
    plan = semantic_arm(engine, bank, question.text, vector, None)
    lines: list[str] = _run(engine, _explained(plan, "ANALYZE, BUFFERS"))
    return lines


_EXACT = ("SET LOCAL enable_indexscan = off", "SET LOCAL enable_bitmapscan = on")
# With sequential scans, bitmaps and sorts off, the only ordered path left is the HNSW index:
# this checks the iterative scan itself even where the planner would rather scan exactly.
_FORCED_HNSW = (
    "SET LOCAL enable_seqscan = off",
    "SET LOCAL enable_bitmapscan = off",
    "SET LOCAL enable_sort = off",
)
OVERLAP_VARIANTS: dict[str, tuple[str, ...]] = {"as planned": (), "HNSW forced": _FORCED_HNSW}


def _filtered_arm(
    engine: MemoryEngine,
    bank: str,
    question: str,
    vector: Any,
    types: list[FactType],
    settings: Sequence[str],
) -> Plan[Any]:
    return _prefixed(settings, semantic_arm(engine, bank, question, vector, types))


def filtered_recall(
    engine: MemoryEngine, embedder: CompositeEmbedder, bank: str, questions: Sequence[Question]
) -> Overlap:
    """Semantic arm per fact type vs the exact answer; mean overlap@k per variant."""
    limit = max(recall_budget("mid", 4096, engine.settings), 20)
    ks = (10, 20, limit)
    totals = {v: dict.fromkeys(ks, 0.0) for v in OVERLAP_VARIANTS}
    rows = dict.fromkeys([*OVERLAP_VARIANTS, "exact"], 0.0)
    plans: dict[str, bool] = {}
    vectors = embedder.vectors([q.text for q in questions])
    for n, (question, vector) in enumerate(zip(questions, vectors, strict=True)):
        types: list[FactType] = [FACT_TYPES[n % len(FACT_TYPES)]]
        arm = functools.partial(_filtered_arm, engine, bank, question.text, vector, types)
        exact = _run(engine, arm(_EXACT))
        rows["exact"] += len(exact)
        for variant, settings in OVERLAP_VARIANTS.items():
            found = _run(engine, arm(settings))
            rows[variant] += len(found)
            for k in ks:
                totals[variant][k] += overlap(found, exact, k)
        if n == 0:
            plans = {
                name: bool(
                    HNSW_INDEX.search("\n".join(_run(engine, _explained(arm(s), "COSTS OFF"))))
                )
                for name, s in {**OVERLAP_VARIANTS, "exact": _EXACT}.items()
            }
    n = len(questions)
    means = {v: {k: t / n for k, t in by_k.items()} for v, by_k in totals.items()}
    return Overlap(bank, n, limit, plans, means, {v: r / n for v, r in rows.items()})


# --- the report --------------------------------------------------------------------------


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


# stages that run at the same time: together they take as long as the slowest of them
SIDE_BY_SIDE = ("embed", "late_interaction_query")


def _named(stages: Mapping[str, float]) -> float:
    """Wall time of the named stages, side-by-side stages counted as their slowest."""
    apart = sum(stages.get(n, 0.0) for n in STAGES if n not in SIDE_BY_SIDE)
    return apart + max(stages.get(n, 0.0) for n in SIDE_BY_SIDE)


def latency_section(result: BankLatency) -> list[str]:
    header = ["", "p50 ms", "p95 ms", *[f"{s} p50" for s in STAGES], "other p50", "total p50"]
    rows = []
    for budget, samples in result.recall.items():
        walls = [s.wall for s in samples]
        staged = [percentile([s.stages.get(n, 0.0) for s in samples], 50) for n in STAGES]
        totals = [s.stages.get("total", float("nan")) for s in samples]
        other = [t - _named(s.stages) for s, t in zip(samples, totals, strict=True)]
        rows.append(
            [
                f"recall {budget}",
                ms(percentile(walls, 50)),
                ms(percentile(walls, 95)),
                *map(ms, staged),
                ms(percentile(other, 50)),
                ms(percentile(totals, 50)),
            ]
        )
    blank = [""] * (len(header) - 3)
    for name, values in (
        ("floor: kNN", result.floor),
        ("floor + embedding", result.floor_embedded),
    ):
        rows.append([name, ms(percentile(values, 50)), ms(percentile(values, 95)), *blank])
    mid = percentile([s.wall for s in result.recall["mid"]], 50)
    return [
        f"### {result.bank}: {result.size:,} memories, {result.questions} questions "
        f"({result.timed_questions} with a time expression)",
        "",
        *_table(header, rows),
        "",
        "Stage columns are p50 ms from `trace.stages`; *other* = total − named stages, the "
        "two question encoders counted once as they run side by side (what runs between "
        "the stages).",
        "",
        *_table(["arm p50 ms (candidates p50, runs)", *ARM_ORDER], _arm_rows(result)),
        "",
        "Semantic arm plan (EXPLAIN of the first question): "
        + ", ".join(
            f"{b} = {'HNSW index scan' if hnsw else 'exact scan'}"
            for b, hnsw in result.hnsw_plans.items()
        )
        + ".",
        "",
        f"**recall mid p50 / floor p50 = {mid / percentile(result.floor, 50):.1f}×**; "
        f"recall mid p50 / (floor + embedding) p50 = "
        f"**{mid / percentile(result.floor_embedded, 50):.1f}×**",
        "",
    ]


def _arm_rows(result: BankLatency) -> list[list[str]]:
    rows = []
    for budget, samples in result.recall.items():
        cells = []
        for arm in ARM_ORDER:
            ran = [s.arms[arm] for s in samples if arm in s.arms]
            seconds = percentile([r[0] for r in ran], 50)
            candidates = percentile([r[1] for r in ran], 50)
            cells.append(f"{ms(seconds)} ({candidates:.0f}, {len(ran)})" if ran else "–")
        rows.append([f"recall {budget}", *cells])
    return rows


_VECTOR_LITERAL = re.compile(r"'\[[^\]]*\]'::vector")


def _short_vectors(line: str) -> str:
    # EXPLAIN inlines the query vector: hundreds of floats that say nothing about the plan
    return _VECTOR_LITERAL.sub("'[query vector]'::vector", line)


def explain_section(bank: str | None, lines: list[str] | None) -> list[str]:
    if bank is None or lines is None:
        return [f"Skipped: no bank of at least {EXPLAIN_MIN_SIZE:,} memories in this run.", ""]
    used = sorted({m.group(0) for line in lines for m in HNSW_INDEX.finditer(line)})
    verdict = f"uses {', '.join(f'`{name}`' for name in used)}" if used else "does NOT use"
    return [
        f"Semantic arm (mid budget, all fact types) on `{bank}`: the plan **{verdict}** "
        "(HNSW indexes).",
        "",
        "```",
        *map(_short_vectors, lines),
        "```",
        "",
    ]


def overlap_section(results: Sequence[Overlap]) -> list[str]:
    ks = list(next(iter(results[0].means.values())))
    rows = [
        [
            f"`{r.bank}`",
            variant,
            "yes" if r.plans.get(variant) else "no",
            f"{r.rows[variant]:.0f} / {r.rows['exact']:.0f}",
            *(f"{by_k[k]:.3f}" for k in ks),
        ]
        for r in results
        for variant, by_k in r.means.items()
    ]
    hnsw = [
        min(by_k.values())
        for r in results
        for variant, by_k in r.means.items()
        if r.plans.get(variant)
    ]
    verdict = (
        f"**{'met' if min(hnsw) >= 0.95 else 'NOT met'}** (worst {min(hnsw):.3f})"
        if hnsw
        else "not tested (no plan used the HNSW index)"
    )
    exact_hnsw = any(r.plans.get("exact") for r in results)
    return [
        f"The semantic arm filtered by bank and one fact type (cycling through the three), "
        f"{results[0].queries} questions per bank, arm limit {results[0].limit} (mid budget). "
        f"Exact = the same SQL with index scans off (its plan uses HNSW: "
        f"{'yes' if exact_hnsw else 'no'}). *As planned* is what recall runs; *HNSW forced* "
        f"turns off sequential, bitmap and sort paths so the iterative index scan itself is "
        f"measured. Rows: mean rows returned by the variant / by the exact search.",
        "",
        *_table(["bank", "variant", "plan uses HNSW", "rows", *(f"overlap@{k}" for k in ks)], rows),
        "",
        f"Target overlap ≥ 0.95 wherever the HNSW index is used: {verdict}.",
        "",
    ]


@dataclass
class Run:
    command: str
    facts: dict[str, str]
    banks: list[tuple[str, int, float]]  # bank, memories, seconds
    components: tuple[int, float]
    table_rows: int
    latency: list[BankLatency]
    explain_bank: str | None
    explain: list[str] | None
    overlap: list[Overlap]
    reranker: str = "passthrough"


def render(run: Run) -> str:
    total = sum(n for _, n, _ in run.banks)
    seconds = sum(s for _, _, s in run.banks)
    lines = [
        "# Recall benchmark",
        "",
        f"`{run.command}`",
        "",
        *(f"- {k}: {v}" for k, v in run.facts.items()),
        f"- embeddings: composite vectors over {run.components[0]} components embedded by the "
        f"real model in {run.components[1]:.1f} s; questions also pay a real-model pass",
        f"- table `memory_units`: {run.table_rows:,} rows in {len(run.banks)} banks; "
        f"questions asked at {NOW.isoformat()}; reranker: {run.reranker}",
        "",
        "## Retain",
        "",
        *_table(
            ["bank", "memories", "seconds", "memories/s"],
            [[b, f"{n:,}", f"{s:.1f}", f"{n / s:.0f}" if s else "reused"] for b, n, s in run.banks]
            + [
                [
                    "all",
                    f"{total:,}",
                    f"{seconds:.1f}",
                    f"{total / seconds:.0f}" if seconds else "reused",
                ]
            ],
        ),
        "",
        f"Batches of {RETAIN_BATCH}; entities extracted and semantic/temporal links built as "
        "in normal use. `ANALYZE` ran after retaining.",
        "",
        "## Recall latency",
        "",
    ]
    for result in run.latency:
        lines += latency_section(result)
    lines += ["## EXPLAIN of the semantic arm", "", *explain_section(run.explain_bank, run.explain)]
    lines += ["## Filtered recall", "", *overlap_section(run.overlap)]
    return "\n".join(lines)


# --- main ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    sizes: tuple[int, ...]
    questions: int
    other_size: int


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="2,000 memories, 40 questions")
    parser.add_argument("--data-dir", type=Path, help="use (and keep) this data directory")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    parser.add_argument("--out", type=Path, help="also write the report here")
    parser.add_argument(
        "--reranker", help="reranker provider (default: the engine's, auto → onnx here)"
    )
    parser.add_argument(
        "--reuse", action="store_true", help="keep banks of the right size from --data-dir"
    )
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args(argv)


def scale_of(args: argparse.Namespace) -> Scale:
    if args.quick:
        return Scale(sizes=(2000,), questions=40, other_size=500)
    sizes = tuple(dict.fromkeys(args.sizes))  # one bank per distinct size
    return Scale(sizes=sizes, questions=args.queries, other_size=2000)


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


def run_benchmark(
    engine: MemoryEngine,
    real: Embedder,
    embedder: CompositeEmbedder,
    work: Workload,
    scale: Scale,
    command: str,
    reuse: bool = False,
) -> Run:
    started = time.perf_counter()
    components = embedder.embed_components()
    components_seconds = time.perf_counter() - started
    facts = machine_facts(engine)
    retained = [
        (b, len(mems), retain_bank(engine, b, mems, reuse)) for b, mems in work.banks.items()
    ]
    with engine._pool.connection() as conn:
        conn.execute("ANALYZE")  # the planner's steady state: autovacuum would do it soon
        row = conn.execute("SELECT count(*) FROM memory_units").fetchone()
    latency = [
        measure_bank(engine, real, embedder, f"big-{n}", n, work.questions[f"big-{n}"])
        for n in scale.sizes
    ]
    largest = max(scale.sizes)
    explain_bank = f"big-{largest}" if largest >= EXPLAIN_MIN_SIZE else None
    explain = None
    if explain_bank is not None:
        explain = explain_semantic(engine, embedder, explain_bank, work.questions[explain_bank][0])
    overlap_result = [
        filtered_recall(engine, embedder, bank, questions)
        for bank, questions in work.overlap_banks.items()
    ]
    facts["load average at end"] = f"{os.getloadavg()[0]:.2f} (other processes share the CPU)"
    return Run(
        command=command,
        facts=facts,
        banks=retained,
        components=(components, components_seconds),
        table_rows=int(row[0]) if row else 0,
        latency=latency,
        explain_bank=explain_bank,
        explain=explain,
        overlap=overlap_result,
        reranker=engine.reranker_name,
    )


@dataclass
class DataDir:
    path: Path
    temporary: bool

    def cleanup(self, keep: bool) -> None:
        # A directory the user named is theirs: only a temporary one is removed.
        if self.temporary and not keep:
            shutil.rmtree(self.path, ignore_errors=True)


def data_dir(given: Path | None) -> DataDir:
    if given is not None:
        return DataDir(given, temporary=False)
    return DataDir(Path(tempfile.mkdtemp(prefix="htr-", dir="/tmp")), temporary=True)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    scale = scale_of(args)
    command = shlex.join(sys.orig_argv)
    store = data_dir(args.data_dir)
    try:
        settings = Settings(data_dir=store.path)
        if args.reranker:
            settings = settings.model_copy(update={"reranker_provider": args.reranker})
        real = default_embedder(settings.embeddings_model, settings.embeddings_batch_size)
        real.embed(["warm-up"])  # model load is not part of any measurement
        embedder = CompositeEmbedder(real, args.seed)
        work = make_workload(scale, args.seed, embedder)
        with MemoryEngine(settings=settings, embedder=embedder) as engine:
            run = run_benchmark(engine, real, embedder, work, scale, command, args.reuse)
    finally:
        store.cleanup(args.keep)
    report = render(run)
    print(report)
    if args.out is not None:
        args.out.write_text(report + "\n")
    if args.keep and store.temporary:
        print(f"\n(data kept in {store.path})", file=sys.stderr)


if __name__ == "__main__":
    main()
