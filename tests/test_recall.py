"""First recall: semantic arm, filters inside the SQL, token budget, chunks, request checks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hindsight_tools import InvalidRequestError, MemoryEngine, Settings
from hindsight_tools.encoders.tokens import count_tokens

LIFE: list[dict[str, Any]] = [
    {
        "id": "job",
        "text": "Alice works as a data engineer at Google in Zurich.",
        "tags": ["work"],
        "occurred_start": "2023-03-01",
        "fact_type": "world",
    },
    {
        "id": "food",
        "text": "Alice's favourite dish is spicy ramen.",
        "tags": ["food"],
        "fact_type": "experience",
    },
    {"id": "pet", "text": "Alice has a grey cat called Miso.", "fact_type": "world"},
    {
        "id": "trip",
        "text": "Alice hiked in the Dolomites in July 2023.",
        "tags": ["travel", "work"],
        "fact_type": "experience",
        "document_id": "diary",
        "chunk": "Diary: July 2023, Dolomites, hiking.",
    },
    {"id": "weather", "text": "It rained all week.", "fact_type": "observation"},
]


@pytest.fixture(scope="module")
def open_engine(engine: MemoryEngine, settings: Settings) -> Iterator[MemoryEngine]:
    """No similarity floor: every memory is a candidate, so only filters limit results."""
    relaxed = settings.model_copy(update={"semantic_min_similarity": -1.0})
    with MemoryEngine(engine.database_url, settings=relaxed) as other:
        yield other


@pytest.fixture
def life(engine: MemoryEngine, bank: str) -> str:
    engine.retain(bank, LIFE)
    return bank


def ids(result: Any) -> list[str]:
    return [m.id for m in result.memories]


def test_paraphrase_finds_the_memory_first(engine: MemoryEngine, life: str) -> None:
    result = engine.recall(life, "What food does Alice like to eat?")
    assert ids(result)[0] == "food"
    finals = [m.scores.final for m in result.memories]
    assert finals == sorted(finals, reverse=True)
    top = result.memories[0]
    assert top.source_ranks["semantic"] == 1 and top.scores.semantic is not None
    assert top.scores.semantic >= 0.3


def test_results_carry_the_stored_fields(engine: MemoryEngine, life: str) -> None:
    trip = next(
        m for m in engine.recall(life, "hiking trip in the mountains").memories if m.id == "trip"
    )
    assert trip.fact_type == "experience" and trip.tags == ["travel", "work"]
    assert trip.document_id == "diary" and trip.chunk_id is not None
    assert "Dolomites" in trip.entities
    assert trip.tokens == count_tokens(trip.text)


def test_types_filter(engine: MemoryEngine, life: str) -> None:
    result = engine.recall(life, "Alice", types=["experience"])
    assert set(ids(result)) <= {"food", "trip"} and ids(result)


@pytest.mark.parametrize(
    ("tags", "mode", "allowed"),
    [
        (["work"], "any", {"job", "trip", "pet", "weather"}),
        (["work"], "any_strict", {"job", "trip"}),
        (["work", "travel"], "all", {"trip", "pet", "weather"}),
        (["work", "travel"], "all_strict", {"trip"}),
        (["work"], "exact", {"job"}),
        ([], "exact", {"pet", "weather"}),
    ],
)
def test_tag_filters(
    open_engine: MemoryEngine, life: str, tags: list[str], mode: Any, allowed: set[str]
) -> None:
    found = ids(open_engine.recall(life, "Alice", tags=tags, tags_match=mode))
    assert set(found) == allowed


def test_max_tokens_keeps_a_prefix_of_the_ranking(engine: MemoryEngine, life: str) -> None:
    full = engine.recall(life, "Alice")
    assert len(full.memories) >= 3
    budget = full.memories[0].tokens + full.memories[1].tokens
    cut = engine.recall(life, "Alice", max_tokens=budget)
    assert ids(cut) == ids(full)[:2]
    assert sum(m.tokens for m in cut.memories) <= budget
    assert engine.recall(life, "Alice", max_tokens=0).memories == []


def test_chunks_come_back_even_with_zero_max_tokens(engine: MemoryEngine, life: str) -> None:
    result = engine.recall(life, "hiking in the Dolomites", max_tokens=0, include_chunks=True)
    assert result.memories == []
    assert [c.text for c in result.chunks] == ["Diary: July 2023, Dolomites, hiking."]
    cut = engine.recall(life, "hiking in the Dolomites", include_chunks=True, max_chunk_tokens=3)
    assert cut.chunks[0].truncated and cut.chunks[0].tokens <= 3
    assert engine.recall(life, "hiking in the Dolomites").chunks == []


def test_trace_reports_arms_budget_and_reranker(engine: MemoryEngine, life: str) -> None:
    trace_result = engine.recall(life, "cat", trace=True, budget="low")
    trace = trace_result.trace
    assert trace is not None
    # auto picks the packaged ONNX cross-encoder (no local sentence-transformers one here)
    assert trace.recall_budget == 100 and trace.reranker == "onnx"
    # a bank of five memories: every candidate is among the eight late interaction keeps
    assert (trace.kept, trace.reranked) == (len(trace_result.memories), 0)
    assert trace.kept >= 2 and all(m.kept for m in trace_result.memories)
    assert not trace.reranker_timed_out
    assert trace.arms["semantic"].candidates >= 1
    assert {"embed", "arms", "rerank", "total"} <= set(trace.stages)
    assert engine.recall(life, "cat").trace is None


def test_empty_bank_returns_nothing(engine: MemoryEngine, bank: str) -> None:
    assert engine.recall(bank, "anything at all").memories == []


@pytest.mark.parametrize(
    ("options", "field", "hint"),
    [
        ({"query": "  "}, "query", "non-empty"),
        ({"budget": "huge"}, "budget", "'low', 'mid' or 'high'"),
        ({"max_tokens": -1}, "max_tokens", "greater than or equal to 0"),
        ({"query_timestamp": "yesterday-ish"}, "query_timestamp", "datetime"),
        ({"types": ["opinion"]}, "types[0]", "'world', 'experience' or 'observation'"),
        (
            {"tags_match": "some"},
            "tags_match",
            "'any', 'all', 'any_strict', 'all_strict' or 'exact'",
        ),
        ({"tags": "work"}, "tags", "valid list"),
        ({"max_chunk_tokens": -5}, "max_chunk_tokens", "greater than or equal to 0"),
        ({"query": "caf\udce9"}, "query", "unpaired surrogate"),
        ({"tags": ["ok", "nul\x00"]}, "tags[1]", "NUL"),
        ({"query_timestamp": "0001-01-01T00:00:00+01:00"}, "query_timestamp", "0001-01-01"),
    ],
)
def test_bad_recall_requests_name_the_field(
    engine: MemoryEngine, bank: str, options: dict[str, Any], field: str, hint: str
) -> None:
    query = options.pop("query", "fine question")
    with pytest.raises(InvalidRequestError) as caught:
        engine.recall(bank, query, **options)
    message = str(caught.value)
    assert message.startswith(f"{field}:") and hint in message, message
