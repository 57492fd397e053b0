"""Turn-level recall@k on a LoCoMo-shaped directory (``tests/data/mini-locomo`` has the shape).

Three layers, so each can be tested on its own:

- metrics (pure): :func:`recall_at_k`, :func:`latency_percentiles`, :func:`aggregate`;
- loading: :func:`load_dataset` reads ``memories.jsonl``, ``documents.jsonl`` (optional) and
  ``queries.jsonl`` into one :class:`BankData` per conversation;
- running: :func:`run_eval` retains each conversation into its own bank, asks its questions
  and returns a :class:`Report`; :func:`format_report` renders it as Markdown.

The metric (see the data's README): for a question with evidence ``E`` (``dia_id``s) and the
``dia_id``s of the top ``k`` recalled memories ``R``, recall@k = |E ∩ R| / |E|. Questions
without evidence cannot be scored and are counted apart.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from hindsight_tools.errors import FieldProblem, InvalidRequestError
from hindsight_tools.jsonl import item_from_record, read_documents, read_records
from hindsight_tools.models import Budget
from hindsight_tools.validation import MAX_CHUNK_CHARS

if TYPE_CHECKING:  # the engine pulls in the database and model stack; metrics need neither
    from hindsight_tools.engine import MemoryEngine

DEFAULT_KS: tuple[int, ...] = (5, 10, 20, 50)
ADVERSARIAL = 5
# LoCoMo's categories; the data's own ``category_name`` wins when present.
CATEGORY_NAMES: Mapping[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
RETAIN_BATCH = 256
# Far above what the top max(k) memories can take, so the token budget never cuts the
# ranking short and recall@50 measures retrieval rather than packing.
EVAL_MAX_TOKENS = 100_000
# Banks an eval retains into: this prefix + the conversation name; benchmarks reuse them.
EVAL_BANK_PREFIX = "eval-"


# --------------------------------------------------------------------------- metrics


def recall_at_k(evidence: Sequence[str], ranked_dia_ids: Sequence[str | None], k: int) -> float:
    """|set(evidence) ∩ set(ranked_dia_ids[:k])| / |set(evidence)|.

    ``None`` in the ranking is a memory without a ``dia_id`` (it takes a slot, matches nothing).
    Sets on both sides: a turn named twice in the evidence, or recalled twice, counts once.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    wanted = set(evidence)
    if not wanted:
        raise ValueError("recall@k is undefined without evidence")
    return len(wanted.intersection(ranked_dia_ids[:k])) / len(wanted)


def latency_percentiles(seconds: Sequence[float]) -> tuple[float, float] | None:
    """(p50, p95) of ``seconds``, or ``None`` when empty.

    ``statistics.quantiles(method="inclusive")`` interpolates linearly between order statistics,
    the same as ``numpy.percentile``'s default, so numbers compare with numpy-based tools.
    """
    if not seconds:
        return None
    if len(seconds) == 1:  # quantiles() needs two points; one point is every percentile
        return seconds[0], seconds[0]
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return cuts[49], cuts[94]


class QuestionResult(BaseModel):
    """One question as asked: its evidence, the ranked ``dia_id``s (top max k) and wall time."""

    model_config = ConfigDict(frozen=True)

    bank: str
    qid: str
    category: int
    category_name: str
    evidence: tuple[str, ...]
    ranked: tuple[str | None, ...]
    seconds: float
    stages: dict[str, float] = Field(default_factory=dict)


class Score(BaseModel):
    """Mean recall@k over ``questions`` (those with evidence); ``skipped`` had none.

    ``recall`` is ``k -> mean``; ``None`` when no question here had evidence.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    category: int | None = None
    questions: int
    skipped: int
    recall: dict[int, float | None]


class Latency(BaseModel):
    model_config = ConfigDict(frozen=True)

    recalls: int
    p50_ms: float | None
    p95_ms: float | None
    # per pipeline stage (embed, arms, fusion, rerank, scoring, token_filter): p50 in ms
    stages_p50_ms: dict[str, float] = Field(default_factory=dict)


class RetainStats(BaseModel):
    model_config = ConfigDict(frozen=True)

    memories: int
    seconds: float
    # memories whose text was longer than the store takes (HINDSIGHT_API_RETAIN_MAX_TEXT_CHARS)
    cut: int = 0

    @property
    def per_second(self) -> float:
        return self.memories / self.seconds if self.seconds > 0 else 0.0


class Report(BaseModel):
    """Everything one evaluation run measured; :meth:`to_json` for machines."""

    model_config = ConfigDict(frozen=True)

    ks: tuple[int, ...]
    categories: list[Score]
    overall: Score
    overall_no_adversarial: Score
    latency: Latency
    retain: RetainStats | None = None
    questions: list[QuestionResult]

    def to_json(self, *, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Report:
        return cls.model_validate_json(text)


def _score(
    name: str, rows: Sequence[QuestionResult], ks: Sequence[int], category: int | None = None
) -> Score:
    scored = [row for row in rows if row.evidence]
    recall: dict[int, float | None] = {
        k: (
            statistics.fmean(recall_at_k(row.evidence, row.ranked, k) for row in scored)
            if scored
            else None
        )
        for k in ks
    }
    return Score(
        name=name,
        category=category,
        questions=len(scored),
        skipped=len(rows) - len(scored),
        recall=recall,
    )


def aggregate(
    rows: Iterable[QuestionResult],
    ks: Sequence[int] = DEFAULT_KS,
    *,
    retain: RetainStats | None = None,
) -> Report:
    """Mean recall@k per category (in category order), overall, and overall without
    adversarial questions; latency percentiles over every recall (scored or not)."""
    rows = list(rows)
    by_category: dict[int, list[QuestionResult]] = {}
    for row in rows:
        by_category.setdefault(row.category, []).append(row)
    categories = [
        _score(members[0].category_name, members, ks, category)
        for category, members in sorted(by_category.items())
    ]
    ordinary = [row for row in rows if row.category != ADVERSARIAL]
    percentiles = latency_percentiles([row.seconds for row in rows])
    p50, p95 = percentiles if percentiles is not None else (None, None)
    return Report(
        ks=tuple(ks),
        categories=categories,
        overall=_score("overall", rows, ks),
        overall_no_adversarial=_score("overall (no adversarial)", ordinary, ks),
        latency=Latency(
            recalls=len(rows),
            p50_ms=None if p50 is None else p50 * 1000,
            p95_ms=None if p95 is None else p95 * 1000,
            stages_p50_ms=_stage_medians(rows),
        ),
        retain=retain,
        questions=rows,
    )


def _stage_medians(rows: Sequence[QuestionResult]) -> dict[str, float]:
    names = dict.fromkeys(name for row in rows for name in row.stages if name != "total")
    return {
        name: statistics.median(row.stages[name] for row in rows if name in row.stages) * 1000
        for name in names
    }


# --------------------------------------------------------------------------- formatting


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _row(score: Score, ks: Sequence[int]) -> str:
    label = score.name if score.category is None else f"{score.name} ({score.category})"
    cells = " | ".join(_cell(score.recall.get(k)) for k in ks)
    return f"| {label} | {score.questions} | {cells} |"


def format_report(report: Report) -> str:
    """A Markdown table of mean recall@k, then latency, retain throughput and skipped counts."""
    ks = report.ks
    lines = [
        "| category | questions | " + " | ".join(f"R@{k}" for k in ks) + " |",
        "|---|---:|" + "---:|" * len(ks),
    ]
    lines += [_row(score, ks) for score in report.categories]
    lines.append(_row(report.overall, ks))
    lines.append(_row(report.overall_no_adversarial, ks))
    lines.append("")
    latency = report.latency
    if latency.p50_ms is None or latency.p95_ms is None:
        lines.append("latency: no recalls")
    else:
        lines.append(
            f"latency: p50 {latency.p50_ms:.1f} ms, p95 {latency.p95_ms:.1f} ms "
            f"over {latency.recalls} recalls"
        )
        if latency.stages_p50_ms:
            lines.append(
                "stage p50: "
                + ", ".join(f"{k} {v:.1f} ms" for k, v in latency.stages_p50_ms.items())
            )
    if report.retain is None:
        lines.append("retain: skipped (banks reused)")
    else:
        lines.append(
            f"retain: {report.retain.memories} memories in {report.retain.seconds:.1f} s "
            f"({report.retain.per_second:.1f} memories/s)"
            + (f", {report.retain.cut} cut to the store's text limit" if report.retain.cut else "")
        )
    if report.overall.skipped:
        lines.append(f"{report.overall.skipped} question(s) without evidence not scored")
    return "\n".join(lines)


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class Question:
    qid: str
    question: str
    category: int
    category_name: str
    evidence: tuple[str, ...]
    query_time: str | None = None
    answer: str | None = None


@dataclass(frozen=True)
class BankData:
    """One conversation: the memory items to retain (``MemoryItem`` dicts) and its questions."""

    bank: str
    items: tuple[dict[str, Any], ...]
    questions: tuple[Question, ...]


@dataclass(frozen=True)
class Dataset:
    banks: tuple[BankData, ...]

    def bank(self, name: str) -> BankData:
        for data in self.banks:
            if data.bank == name:
                return data
        raise KeyError(name)


def _bank_of(record: dict[str, Any], where: str) -> str:
    bank = record.get("bank")
    if not isinstance(bank, str) or not bank:
        raise InvalidRequestError([FieldProblem(where, "each line needs a 'bank' string")])
    return bank


def _question(record: dict[str, Any], where: str) -> Question:
    problems = []
    if not isinstance(record.get("question"), str):
        problems.append(FieldProblem(f"{where}.question", "must be a string"))
    evidence = record.get("evidence", [])
    if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
        problems.append(FieldProblem(f"{where}.evidence", "must be a list of dia_id strings"))
    category = record.get("category")
    if not isinstance(category, int) or isinstance(category, bool):
        problems.append(FieldProblem(f"{where}.category", "must be an integer (1-5)"))
    if problems:
        raise InvalidRequestError(problems)
    assert isinstance(category, int)
    answer = record.get("answer")
    query_time = record.get("query_time")
    return Question(
        qid=str(record.get("qid", where)),
        question=record["question"],
        category=category,
        category_name=str(record.get("category_name") or CATEGORY_NAMES.get(category, category)),
        evidence=tuple(evidence),
        query_time=None if query_time is None else str(query_time),
        # LoCoMo answers are sometimes numbers (a year); kept as text for reports.
        answer=None if answer is None else str(answer),
    )


def _load_items(path: Path, documents: Mapping[str, str]) -> dict[str, list[dict[str, Any]]]:
    by_bank: dict[str, list[dict[str, Any]]] = {}
    for number, record in read_records(path):
        bank = _bank_of(record, f"{path}:{number}")
        item = item_from_record(record)
        # The session transcript is the memory's chunk, as `hindsight-tools retain` does it;
        # a transcript longer than a chunk may be (long assistant chats) is left out rather
        # than failing the run, since recall never reads chunks.
        transcript = documents.get(str(item.get("document_id")))
        if transcript is not None and "chunk" not in item and len(transcript) <= MAX_CHUNK_CHARS:
            item["chunk"] = transcript
        by_bank.setdefault(bank, []).append(item)
    return by_bank


def _load_questions(path: Path) -> dict[str, list[Question]]:
    by_bank: dict[str, list[Question]] = {}
    for number, record in read_records(path):
        where = f"{path}:{number}"
        by_bank.setdefault(_bank_of(record, where), []).append(_question(record, where))
    return by_bank


def load_dataset(directory: Path) -> Dataset:
    """``memories.jsonl`` + ``queries.jsonl`` (+ ``documents.jsonl`` when present), by bank,
    in the order banks first appear (memories first)."""
    documents_path = directory / "documents.jsonl"
    documents = read_documents(documents_path) if documents_path.exists() else {}
    items = _load_items(directory / "memories.jsonl", documents)
    questions = _load_questions(directory / "queries.jsonl")
    names = list(dict.fromkeys([*items, *questions]))
    return Dataset(
        banks=tuple(
            BankData(
                bank=name,
                items=tuple(items.get(name, ())),
                questions=tuple(questions.get(name, ())),
            )
            for name in names
        )
    )


# --------------------------------------------------------------------------- running


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
    engine: MemoryEngine, selected: Sequence[BankData], prefix: str, progress: bool
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
            items = [_within(item, limit) for item in data.items]
            cut += sum(1 for item, kept in zip(data.items, items, strict=True) if item is not kept)
            batches = iter(items)
            while batch := list(islice(batches, RETAIN_BATCH)):
                started = time.perf_counter()
                engine.retain(bank_id, batch)
                seconds += time.perf_counter() - started
                bar.update(len(batch))
    return RetainStats(memories=total, seconds=seconds, cut=cut)


def _within(item: dict[str, Any], limit: int) -> dict[str, Any]:
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
) -> Report:
    """Retain (when ``fresh``) each conversation into ``bank_prefix + bank``, ask its
    questions (at most ``limit`` per bank), and score them.

    ``recall_options`` are passed to ``engine.recall`` and win over this function's own
    (``budget``, ``max_tokens``, ``query_timestamp``), so a caller can switch arms or
    override anything. With ``fresh=False`` the banks from an earlier run are reused, and
    a bank that run didn't retain to the end is retained afresh: scoring an empty or
    half-filled bank would report too little.
    """
    from tqdm import tqdm

    if not ks or min(ks) < 1:
        raise InvalidRequestError([FieldProblem("ks", f"must be positive integers, got {ks}")])
    selected = _select(dataset, banks)
    missing = selected if fresh else _not_retained(engine, selected, bank_prefix)
    retain = _retain_all(engine, missing, bank_prefix, progress) if missing else None
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
    batch (batches go in order, each all or nothing, so the last item tells)."""
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
