"""The recall benchmark's measurements on a filled store: recall at each budget against the
bare pgvector floor, the semantic arm's plan, and filtered recall against exact search."""

from __future__ import annotations

import functools
import gc
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from psycopg import sql
from tqdm import tqdm

from benchmarks.recall_bench_data import NOW, Memory, Question
from benchmarks.recall_bench_vectors import CompositeEmbedder
from hindsight_tools import MemoryEngine
from hindsight_tools.encoders.embedding import Embedder
from hindsight_tools.models import FACT_TYPES, Budget, FactType, RecallRequest
from hindsight_tools.query.time_window import extract_time_window
from hindsight_tools.recall.arms.base import ArmName
from hindsight_tools.recall.budget import recall_budget
from hindsight_tools.recall.pipeline import arm_plans
from hindsight_tools.runtime.plan import Cancelled, Plan, Statement, run_plan
from hindsight_tools.store.hnsw import walk_hnsw

BUDGETS: tuple[Budget, ...] = ("low", "mid", "high")
RETAIN_BATCH = 1000
WARM_UP = 10
EXPLAIN_MIN_SIZE = 50_000
# The global HNSW index and the per-fact-type ones (memory_units_embedding_world, ...).
HNSW_INDEX = re.compile(r"memory_units_embedding_(hnsw|world|experience|observation)")

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


def arm_plan(
    engine: MemoryEngine,
    bank: str,
    question: str,
    vector: Any,
    types: list[FactType] | None,
    budget: Budget = "mid",
    arm: ArmName = "semantic",
) -> Plan[list[tuple[str, float]]]:
    """One arm's plan (the semantic arm's unless ``arm`` says otherwise) exactly as a recall
    at ``budget`` builds it; the temporal arm's window is the question's own, read as of the
    benchmark's "now"."""
    services = engine._core.recall_services
    request = RecallRequest(query=question, budget=budget, types=types)
    limit = recall_budget(request.budget, request.max_tokens, services.settings)
    window = extract_time_window(question, NOW)
    plans = arm_plans(services, bank, request, question, vector, window, limit)
    for name, plan in plans.items():
        if name != arm:
            plan.close()
    if arm not in plans:
        raise SystemExit(f"the {arm} arm is off (HINDSIGHT_API_RECALL_ARMS) or has no window")
    return plans[arm]


def _explained(plan: Plan[Any], options: str) -> Plan[list[str]]:
    """``plan`` run as it is, each row-returning statement preceded by its EXPLAIN."""
    lines: list[str] = []
    explain = sql.SQL("EXPLAIN ({}) ").format(sql.SQL(options))
    try:
        stmt = next(plan)
    except StopIteration:  # an arm with nothing to ask the database
        return lines
    while True:
        if stmt.mode == "rows":
            query = stmt.query if isinstance(stmt.query, sql.Composable) else sql.SQL(stmt.query)
            found = yield Statement(explain + query, stmt.params, cancellable=stmt.cancellable)
            if isinstance(found, Cancelled):
                lines.append("(cancelled: the statement ran past the arm's time limit)")
            lines += [str(line[0]) for line in found]
        rows = yield stmt
        try:
            stmt = plan.send(rows)
        except StopIteration:
            return lines


def explained(engine: MemoryEngine, plan: Plan[Any], options: str) -> list[str]:
    """The EXPLAIN lines of every row-returning statement of ``plan``, one after the other
    (a statement after the first may depend on the rows of those before it)."""
    lines: list[str] = _run(engine, _explained(plan, options))
    return lines


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


FLOOR_K = 20
_FLOOR = (
    "SELECT id FROM memory_units WHERE bank_id = %(bank)s ORDER BY embedding <=> %(v)s"
    f" LIMIT {FLOOR_K}"
)


def _floor(bank: str, vector: Any) -> Plan[Any]:
    yield from walk_hnsw(FLOOR_K)
    return (yield Statement(_FLOOR, {"bank": bank, "v": vector}))


def time_floor(engine: MemoryEngine, bank: str, vector: Any) -> float:
    """One bank-filtered kNN query on a pooled connection, set up like the semantic arm."""
    started = time.perf_counter()
    _run(engine, _floor(bank, vector))
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


@contextmanager
def settled_heap() -> Iterator[None]:
    """Time recalls with what the benchmark already holds out of the garbage collector's
    reach (``gc.freeze``).

    A benchmark process holds its generated bank: up to a million memories and their parts,
    millions of objects the engine never sees. A full collection walks every tracked
    object; over a bank of 300,000 that took about 450 ms, charged to whichever recall set
    it off (the scale benchmark's budget `high` with passthrough: p95 690.8 ms before,
    241.2 ms frozen, on the same store and questions). That is this process's cost, not
    the engine's; what a recall allocates is still collected as usual.
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


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
    result = BankLatency(bank, size, len(questions), sum(q.timed for q in questions))
    result.recall = {b: [] for b in BUDGETS}
    pairs = list(zip(texts, vectors, strict=True))
    with settled_heap():
        for text, vector in zip(texts[:WARM_UP], vectors, strict=False):
            time_floor(engine, bank, vector)
            time_floor_embedded(engine, real, bank, text)
            time_recall(engine, bank, text, "mid")
        for turn, (text, vector) in enumerate(tqdm(pairs, desc=f"recall {bank}", leave=False)):
            _measure_question(engine, real, bank, text, vector, turn, result)
    # The planner picks HNSW or an exact scan per budget (the LIMIT changes the costs).
    for budget in BUDGETS:
        plan = arm_plan(engine, bank, texts[0], vectors[0], None, budget)
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
    plan = arm_plan(engine, bank, question.text, vector, None)
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
    return _prefixed(settings, arm_plan(engine, bank, question, vector, types))


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
