"""Running an evaluation: each conversation retained into its own bank, its questions asked,
the answers scored into a :class:`~hindsight_tools.evaluation.report.Report`."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

from hindsight_tools.errors import FieldProblem, InvalidRequestError
from hindsight_tools.evaluation.data import BankData, Dataset, Question
from hindsight_tools.evaluation.report import (
    DEFAULT_KS,
    QuestionResult,
    Report,
    RetainStats,
    aggregate,
)
from hindsight_tools.models import Budget

if TYPE_CHECKING:  # the engine pulls in the database and model stack
    from hindsight_tools.engine import MemoryEngine

RETAIN_BATCH = 256
# Far above what the top max(k) memories can take, so the token budget never cuts the
# ranking short and recall@50 measures retrieval rather than packing.
EVAL_MAX_TOKENS = 100_000
# Banks an eval retains into: this prefix + the conversation name; benchmarks reuse them.
EVAL_BANK_PREFIX = "eval-"


def _select(dataset: Dataset, banks: Sequence[str] | None) -> list[BankData]:
    if banks is None:
        return list(dataset.banks)
    known = {data.bank for data in dataset.banks}
    unknown = [name for name in banks if name not in known]
    if unknown:
        raise InvalidRequestError(
            [FieldProblem("banks", f"unknown bank(s) {unknown}; the data has {sorted(known)}")]
        )
    return [dataset.bank(name) for name in dict.fromkeys(banks)]


def _retain_all(
    engine: MemoryEngine,
    selected: Sequence[BankData],
    prefix: str,
    progress: bool,
    batch_size: int,
) -> RetainStats:
    from tqdm import tqdm

    total = sum(len(data.items) for data in selected)
    limit = engine.settings.retain_max_text_chars
    seconds = 0.0
    cut = 0
    with tqdm(total=total, unit="memory", desc="retain", disable=not progress) as bar:
        for data in selected:
            bank_id = prefix + data.bank
            # Fresh means fresh: leftovers from an earlier run would change the ranking.
            engine.delete_bank(bank_id)
            # A message longer than the store takes (a pasted document in a long assistant
            # chat) is kept as its first `limit` characters, so its id can still be found.
            items = [within_text_limit(item, limit) for item in data.items]
            cut += sum(1 for item, kept in zip(data.items, items, strict=True) if item is not kept)
            batches = iter(items)
            while batch := list(islice(batches, batch_size)):
                started = time.perf_counter()
                engine.retain(bank_id, batch)
                seconds += time.perf_counter() - started
                bar.update(len(batch))
    return RetainStats(memories=total, seconds=seconds, cut=cut)


def within_text_limit(item: dict[str, Any], limit: int) -> dict[str, Any]:
    """``item`` with its text cut to its first ``limit`` characters, or ``item`` itself when
    it fits: how an evaluation keeps a message longer than the store takes."""
    text = item.get("text")
    if isinstance(text, str) and len(text) > limit:
        return {**item, "text": text[:limit]}
    return item


def _ask(
    engine: MemoryEngine,
    bank: str,
    bank_id: str,
    question: Question,
    options: Mapping[str, Any],
    depth: int,
) -> QuestionResult:
    arguments = {"query_timestamp": question.query_time, "trace": True, **options}
    started = time.perf_counter()
    result = engine.recall(bank_id, question.question, **arguments)
    seconds = time.perf_counter() - started
    stages = dict(result.trace.stages) if result.trace is not None else {}
    ranked = tuple(
        dia_id if isinstance(dia_id := memory.metadata.get("dia_id"), str) else None
        for memory in result.memories[:depth]
    )
    return QuestionResult(
        bank=bank,
        qid=question.qid,
        category=question.category,
        category_name=question.category_name,
        evidence=question.evidence,
        ranked=ranked,
        seconds=seconds,
        stages=stages,
    )


def run_eval(
    engine: MemoryEngine,
    dataset: Dataset,
    *,
    ks: Sequence[int] = DEFAULT_KS,
    budget: Budget = "mid",
    banks: Sequence[str] | None = None,
    limit: int | None = None,
    fresh: bool = True,
    progress: bool = True,
    recall_options: Mapping[str, Any] | None = None,
    bank_prefix: str = EVAL_BANK_PREFIX,
    retain_batch: int = RETAIN_BATCH,
) -> Report:
    """Retain (when ``fresh``) each conversation into ``bank_prefix + bank``,
    ``retain_batch`` memories a call, ask its questions (at most ``limit`` per bank), and
    score them.

    ``recall_options`` are passed to ``engine.recall`` and win over this function's own
    (``budget``, ``max_tokens``, ``query_timestamp``), so a caller can switch arms or
    override anything. With ``fresh=False`` the banks from an earlier run are reused, and
    a bank that run didn't retain to the end is retained afresh: scoring an empty or
    half-filled bank would report too little.
    """
    from tqdm import tqdm

    if not ks or min(ks) < 1:
        raise InvalidRequestError([FieldProblem("ks", f"must be positive integers, got {ks}")])
    most = engine.settings.retain_max_items
    if (
        isinstance(retain_batch, bool)
        or not isinstance(retain_batch, int)
        or not 1 <= retain_batch <= most
    ):
        raise InvalidRequestError(
            [
                FieldProblem(
                    "retain_batch",
                    f"must be an integer from 1 to {most} (HINDSIGHT_API_RETAIN_MAX_ITEMS), "
                    f"got {retain_batch!r}",
                )
            ]
        )
    selected = _select(dataset, banks)
    missing = selected if fresh else _not_retained(engine, selected, bank_prefix)
    retain = _retain_all(engine, missing, bank_prefix, progress, retain_batch) if missing else None
    options = {"budget": budget, "max_tokens": EVAL_MAX_TOKENS, **(recall_options or {})}
    asked = [(data, data.questions[:limit]) for data in selected]
    _warm_up(engine, bank_prefix, asked, options)
    rows: list[QuestionResult] = []
    total = sum(len(questions) for _, questions in asked)
    with tqdm(total=total, unit="question", desc="recall", disable=not progress) as bar:
        for data, questions in asked:
            for question in questions:
                rows.append(
                    _ask(engine, data.bank, bank_prefix + data.bank, question, options, max(ks))
                )
                bar.update(1)
    return aggregate(rows, ks, retain=retain)


def _not_retained(
    engine: MemoryEngine, selected: Sequence[BankData], prefix: str
) -> list[BankData]:
    """The banks an earlier run didn't retain to the end: empty, or stopped before the last
    batch (batches go in order, each all or nothing, so the last item's ``dia_id`` tells;
    data without ``dia_id``s can only be told empty)."""
    return [data for data in selected if data.items and not _holds_last(engine, prefix, data)]


def _holds_last(engine: MemoryEngine, prefix: str, data: BankData) -> bool:
    dia_id = (data.items[-1].get("metadata") or {}).get("dia_id")
    found = engine.list_memories(
        prefix + data.bank, metadata_filter=None if dia_id is None else {"dia_id": dia_id}, limit=1
    )
    return bool(found)


def _warm_up(
    engine: MemoryEngine,
    prefix: str,
    asked: Sequence[tuple[BankData, Sequence[Question]]],
    options: Mapping[str, Any],
) -> None:
    # The first recall pays for lazy model loading and cold caches; one untimed call keeps
    # that out of the latency percentiles.
    for data, questions in asked:
        if questions:
            engine.recall(prefix + data.bank, questions[0].question, **options)
            return
