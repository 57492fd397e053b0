"""Reading a LoCoMo-shaped directory: ``memories.jsonl``, ``documents.jsonl`` (optional)
and ``queries.jsonl``, into one :class:`BankData` per conversation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hindsight_tools.errors import FieldProblem, InvalidRequestError
from hindsight_tools.evaluation.report import CATEGORY_NAMES
from hindsight_tools.jsonl import item_from_record, read_documents, read_records
from hindsight_tools.validation import MAX_CHUNK_CHARS


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
