"""No result ever crosses banks.

Two banks hold near-identical memories: the same entity names, dates, tags, document ids and
causal structure, each memory's text differing by one word. Each bank also has a memory that
matches the probe queries better than anything in the other bank, so a missing bank filter
anywhere (an arm, the keyword statistics, graph expansion, temporal spreading, hydration,
chunks) would pull it across. Ids differ per bank so that a crossing is visible.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from hindsight_tools import AsyncMemoryEngine, MemoryEngine, RecallRequest
from hindsight_tools.models import Budget
from hindsight_tools.query.time_window import TimeWindow
from hindsight_tools.recall.arms.base import ArmName
from hindsight_tools.recall.arms.bm25 import NativeBackend
from hindsight_tools.recall.pipeline import RecallServices, arm_plans
from tests.faults import Conn

BANKS = {"iso-twin-a": ("a", "Oslo"), "iso-twin-b": ("b", "Lima")}
QUERIES = (
    "Where did Alice sign the Zanzibar contract with Bob?",
    "What happened in June 2023?",
    "Zanzibar Bob Alice",
    "Who adopted the greyhound Pixel?",
    "Alice signed the Zanzibar contract with Bob in Lima on June 5, 2023",
    "Alice signed the Zanzibar contract with Bob in Oslo on June 5, 2023",
)
ALL_OF_2023 = TimeWindow(datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC))


def twin(prefix: str, city: str) -> list[dict[str, Any]]:
    shared = {"entities": ["Alice", "Bob", "Zanzibar"], "tags": ["work"]}
    return [
        {
            "id": f"{prefix}-contract",
            "text": f"Alice signed the Zanzibar contract with Bob in {city} on June 5, 2023",
            "occurred_start": "2023-06-05",
            "document_id": "doc-1",
            "chunk": f"[{prefix}] Alice: let's sign in {city}. Bob: agreed.",
            "metadata": {"bank": prefix},
            **shared,
        },
        {
            "id": f"{prefix}-dinner",
            "text": f"Alice and Bob celebrated the Zanzibar deal at dinner in {city}",
            "occurred_start": "2023-06-05T20:00:00Z",
            "document_id": "doc-1",
            "chunk": f"[{prefix}] Bob: dinner in {city} tonight?",
            "causal_links": [{"target_id": f"{prefix}-contract", "link_type": "caused_by"}],
            "metadata": {"bank": prefix},
            **shared,
        },
        {
            "id": f"{prefix}-pixel",
            "text": f"Nadia adopted a rescue greyhound named Pixel in {city}",
            "occurred_start": "2023-06-06",
            "entities": ["Nadia", "Pixel"],
            "metadata": {"bank": prefix},
        },
        {
            "id": f"{prefix}-undated",
            "text": f"Bob prefers tea to coffee when he is in {city}",
            "entities": ["Bob"],
            "metadata": {"bank": prefix},
        },
    ]


@pytest.fixture(scope="module")
def twins(engine: MemoryEngine) -> Iterator[dict[str, set[str]]]:
    """bank id -> the ids of its memories."""
    ids = {}
    for bank, (prefix, city) in BANKS.items():
        ids[bank] = set(engine.retain(bank, twin(prefix, city)).ids)
    yield ids
    for bank in BANKS:
        engine.delete_bank(bank)


@pytest.mark.parametrize("keyword", ["bm25", "native"])
def test_every_arm_stays_in_its_bank(
    engine: MemoryEngine, twins: dict[str, set[str]], keyword: str
) -> None:
    services: RecallServices = engine._core.recall_services
    if keyword == "native":
        services = dataclasses.replace(services, keyword=NativeBackend())
    found: dict[ArmName, set[str]] = {}
    for bank, own in twins.items():
        for query in QUERIES:
            request = RecallRequest(query=query, budget="high")
            vector = engine._core.embedder.embed([query])[0]
            # A window over all of 2023, so the temporal arm runs for every query.
            plans = arm_plans(services, bank, request, query, vector, ALL_OF_2023, 1000)
            assert set(plans) == {"semantic", "bm25", "graph", "temporal"}
            for arm, plan in plans.items():
                ids = {memory_id for memory_id, _ in engine._run(plan)}
                assert ids <= own, (arm, bank, query, ids - own)
                found.setdefault(arm, set()).update(ids)
    # Not vacuous: every arm found memories, in both banks.
    for name, ids in found.items():
        assert ids & twins["iso-twin-a"] and ids & twins["iso-twin-b"], name


@pytest.mark.parametrize("budget", ["low", "mid", "high"])
def test_recall_and_chunks_stay_in_their_bank(
    engine: MemoryEngine, twins: dict[str, set[str]], db: Conn, budget: Budget
) -> None:
    for bank, own in twins.items():
        prefix = BANKS[bank][0]
        own_chunks = {
            row[0] for row in db.execute("SELECT chunk_id FROM chunks WHERE bank_id = %s", (bank,))
        }
        for query in QUERIES:
            result = engine.recall(
                bank, query, budget=budget, include_chunks=True, max_tokens=100_000, trace=True
            )
            assert result.memories, (bank, query)
            assert {m.id for m in result.memories} <= own
            assert all(m.metadata == {"bank": prefix} for m in result.memories)
            assert all(m.id.startswith(f"{prefix}-") for m in result.memories)
            assert {c.chunk_id for c in result.chunks} <= own_chunks
            assert all(c.text.startswith(f"[{prefix}]") for c in result.chunks)
        # The other bank's best match for a query naming its city is still not returned.
        other_city = next(city for b, (_, city) in BANKS.items() if b != bank)
        result = engine.recall(bank, f"Zanzibar contract in {other_city}", budget=budget)
        assert {m.id for m in result.memories} <= own


def test_the_async_engine_stays_in_its_bank(
    engine: MemoryEngine, twins: dict[str, set[str]]
) -> None:
    async def recall_all() -> dict[str, set[str]]:
        async with AsyncMemoryEngine(engine.database_url, settings=engine.settings) as aio:
            results = await asyncio.gather(
                *(aio.recall(bank, QUERIES[0], include_chunks=True) for bank in BANKS)
            )
        return {
            bank: {m.id for m in result.memories}
            for bank, result in zip(BANKS, results, strict=True)
        }

    for bank, ids in asyncio.run(recall_all()).items():
        assert ids and ids <= twins[bank]


def test_the_tool_and_the_adapters_stay_in_their_bank(
    engine: MemoryEngine, twins: dict[str, set[str]]
) -> None:
    from langchain_hindsight_tools import HindsightRetriever as LangChainRetriever
    from llama_index.retrievers.hindsight_tools import HindsightRetriever as LlamaRetriever

    from hindsight_tools import run_recall_tool

    for bank, own in twins.items():
        prefix, city = BANKS[bank]
        other_city = next(c for b, (_, c) in BANKS.items() if b != bank)
        query = f"Zanzibar contract in {other_city}"
        text = run_recall_tool(engine, bank, {"query": query, "include_chunks": True})
        assert city in text and other_city not in text, text
        documents = LangChainRetriever(engine=engine, bank_id=bank).invoke(query)
        assert documents and {d.metadata["id"] for d in documents} <= own
        nodes = LlamaRetriever(engine=engine, bank_id=bank).retrieve(query)
        assert nodes and {n.node.metadata["id"] for n in nodes} <= own
        assert all(n.node.metadata["metadata"] == {"bank": prefix} for n in nodes)
