"""The LangChain adapter: LangChain's own standard suites, plus what they can't know about us."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_hindsight_tools import HindsightRecallTool, HindsightRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests, ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests
from pydantic import BaseModel

from hindsight_tools import InvalidRequestError, MemoryEngine, RecallToolArgs, run_recall_tool

PETS = [
    {"id": f"pet-{i}", "text": text, "occurred_start": f"2024-0{i + 1}-10", "tags": ["pets"]}
    for i, text in enumerate(
        [
            "Bruno adopted a grey cat named Miso",
            "Miso the cat likes to sleep on Bruno's keyboard",
            "Bruno bought a scratching post for his cat",
            "Bruno took Miso the cat to the vet for a vaccination",
            "Bruno's cat Miso learned to open the kitchen door",
        ]
    )
]


@pytest.fixture(scope="module")
def pets_bank(engine: MemoryEngine) -> Iterator[str]:
    bank_id = f"lc-{uuid.uuid4().hex[:10]}"
    engine.retain(bank_id, PETS)
    engine.retain(
        bank_id,
        [
            {
                "id": "job",
                "text": "Bruno works as a translator in Ghent",
                "fact_type": "experience",
                "metadata": {"source": "chat", "id": "user-id-not-ours"},
                "document_id": "chat-7",
                "chunk": "Bruno: I translate contracts for a firm in Ghent.",
                "entities": ["Bruno", "Ghent"],
            }
        ],
    )
    yield bank_id
    engine.delete_bank(bank_id)


class TestRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _bank(self, engine: MemoryEngine, pets_bank: str) -> None:
        self.params = {"engine": engine, "bank_id": pets_bank}

    @property
    def retriever_constructor(self) -> type[HindsightRetriever]:
        return HindsightRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return self.params

    @property
    def retriever_query_example(self) -> str:
        return "What does Bruno's cat do?"


class _RecallToolOnPets:
    """What LangChain's two standard tool suites need to build our tool."""

    @pytest.fixture(autouse=True)
    def _bank(self, engine: MemoryEngine, pets_bank: str) -> None:
        self.params = {"engine": engine, "bank_id": pets_bank}

    @property
    def tool_constructor(self) -> type[HindsightRecallTool]:
        return HindsightRecallTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return self.params


class TestRecallToolUnitStandard(_RecallToolOnPets, ToolsUnitTests):
    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "What is the name of Bruno's cat?", "budget": "low"}


class TestRecallToolIntegrationStandard(_RecallToolOnPets, ToolsIntegrationTests):
    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "What is the name of Bruno's cat?", "include_chunks": True}


def test_documents_carry_text_ids_scores_and_user_metadata(
    engine: MemoryEngine, pets_bank: str
) -> None:
    retriever = HindsightRetriever(engine=engine, bank_id=pets_bank, include_chunks=True)
    docs = retriever.invoke("Where does Bruno work as a translator?")
    expected = engine.recall(pets_bank, "Where does Bruno work as a translator?")
    assert [d.id for d in docs] == [m.id for m in expected.memories]  # same order, best first
    job = docs[0]
    assert job.page_content == "Bruno works as a translator in Ghent"
    meta = job.metadata
    assert meta["id"] == "job" and meta["fact_type"] == "experience"
    assert meta["metadata"] == {"source": "chat", "id": "user-id-not-ours"}  # kept apart, intact
    assert meta["document_id"] == "chat-7" and meta["entities"] == ["Bruno", "Ghent"]
    assert meta["chunk"] == "Bruno: I translate contracts for a firm in Ghent."
    assert meta["scores"]["final"] == expected.memories[0].scores.final
    assert meta["source_ranks"] == expected.memories[0].source_ranks and meta["source_ranks"]
    cat = next(d for d in docs if d.id == "pet-0")
    assert cat.metadata["occurred_start"] == "2024-01-10T00:00:00+00:00"
    assert cat.metadata["tags"] == ["pets"] and "chunk" not in cat.metadata


def test_recall_fields_at_construction_and_per_call(engine: MemoryEngine, pets_bank: str) -> None:
    only_experience = HindsightRetriever(engine=engine, bank_id=pets_bank, types=["experience"])
    assert [d.id for d in only_experience.invoke("Bruno")] == ["job"]
    retriever = HindsightRetriever(engine=engine, bank_id=pets_bank)
    assert [d.id for d in retriever.invoke("Bruno", types=["experience"])] == ["job"]
    assert len(retriever.invoke("Bruno's cat", k=2)) == 2
    with pytest.raises(InvalidRequestError, match="budget: Input should be 'low', 'mid'"):
        retriever.invoke("Bruno", budget="max")
    with pytest.raises(InvalidRequestError, match="top_k: unknown option; allowed: k, budget"):
        retriever.invoke("Bruno", top_k=2)
    with pytest.raises(InvalidRequestError, match="k: 0 is not an integer >= 1"):
        retriever.invoke("Bruno", k=0)


async def test_async_retrieval_runs_on_the_async_engine(
    engine: MemoryEngine, pets_bank: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    retriever = HindsightRetriever(engine=engine, bank_id=pets_bank, k=3)
    expected = [d.id for d in retriever.invoke("Bruno's cat")]

    def no_sync_recall(*args: object, **kwargs: object) -> None:
        raise AssertionError("the async path called the sync engine")

    # LangChain's default async path would run the sync method in a thread
    monkeypatch.setattr(engine, "recall", no_sync_recall)
    docs = await retriever.ainvoke("Bruno's cat")
    assert [d.id for d in docs] == expected


def test_bank_per_call_from_the_run_config(engine: MemoryEngine, pets_bank: str, bank: str) -> None:
    engine.retain(bank, [{"id": "other", "text": "Bruno's cat is called Pixel here"}])
    unbound = HindsightRetriever(engine=engine)
    config: Any = {"configurable": {"bank_id": bank}}
    assert [d.id for d in unbound.invoke("Bruno's cat", config=config)] == ["other"]

    # through a chain, and with with_config: the configurable reaches the retriever
    def ask(question: str) -> str:
        return f"{question}?"

    chain = RunnableLambda(ask) | unbound
    assert [d.id for d in chain.invoke("Bruno's cat", config=config)] == ["other"]
    assert [d.id for d in unbound.with_config(config).invoke("Bruno's cat")] == ["other"]
    bound = HindsightRetriever(engine=engine, bank_id=pets_bank)
    same: Any = {"configurable": {"bank_id": pets_bank}}
    assert "other" not in [d.id for d in bound.invoke("Bruno's cat", config=same)]
    with pytest.raises(InvalidRequestError, match=f"bound to bank '{pets_bank}'.*'{bank}'"):
        bound.invoke("Bruno's cat", config=config)
    with pytest.raises(InvalidRequestError, match="no bank given"):
        unbound.invoke("Bruno's cat")
    with pytest.raises(InvalidRequestError, match="bank_id: is not an invoke option"):
        unbound.invoke("Bruno's cat", bank_id=bank)


async def test_async_bank_per_call(engine: MemoryEngine, pets_bank: str) -> None:
    unbound = HindsightRetriever(engine=engine)
    config: Any = {"configurable": {"bank_id": pets_bank}}
    assert (await unbound.ainvoke("Ghent translator", config=config))[0].id == "job"
    with pytest.raises(InvalidRequestError, match="no bank given"):
        await unbound.ainvoke("Ghent translator")


def test_tool_answers_with_the_shared_text(engine: MemoryEngine, pets_bank: str) -> None:
    tool = HindsightRecallTool(engine=engine, bank_id=pets_bank)
    args = {"query": "Where does Bruno work?", "include_chunks": True}
    assert tool.invoke(args) == run_recall_tool(engine, pets_bank, args)
    assert set(tool.tool_call_schema.model_json_schema()["properties"]) == set(  # type: ignore[union-attr]
        RecallToolArgs.model_fields
    )
    assert tool.name == "recall"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"query": "x", "budget": "max"}, "budget: Input should be 'low', 'mid' or 'high'"),
        ({"query": "x", "colour": "red"}, "colour: unknown field; allowed fields are budget"),
        ({"query": "x", "max_tokens": -5}, "max_tokens: Input should be greater than or equal"),
        ({"query": "x", "types": ["rumour"]}, "types[0]: Input should be 'world'"),
        ({"query": "   "}, "query: must be a non-empty string"),
    ],
)
async def test_tool_call_with_bad_arguments_is_an_error_message_not_an_exception(
    engine: MemoryEngine, pets_bank: str, args: dict[str, Any], fragment: str
) -> None:
    tool = HindsightRecallTool(engine=engine, bank_id=pets_bank)
    call = {"name": "recall", "args": args, "id": "call-1", "type": "tool_call"}
    for message in (tool.invoke(call), await tool.ainvoke(call)):
        assert isinstance(message, ToolMessage) and message.status == "error"
        assert fragment in str(message.content), message.content
        assert "call recall again" in str(message.content)


async def test_tool_bank_per_call(engine: MemoryEngine, pets_bank: str, bank: str) -> None:
    unbound = HindsightRecallTool(engine=engine)
    config: Any = {"configurable": {"bank_id": pets_bank}}
    text = unbound.invoke({"query": "Ghent"}, config=config)
    assert "Bruno works as a translator in Ghent" in text
    assert await unbound.ainvoke({"query": "Ghent"}, config=config) == text
    bound = HindsightRecallTool(engine=engine, bank_id=bank)
    with pytest.raises(InvalidRequestError, match="bound to bank"):
        bound.invoke({"query": "Ghent"}, config=config)
    with pytest.raises(InvalidRequestError, match="no bank given"):
        await unbound.ainvoke({"query": "Ghent"})


def test_retriever_and_tool_filter_by_metadata_and_date(
    engine: MemoryEngine, pets_bank: str
) -> None:
    # only the translator memory carries metadata {"source": "chat"}
    scoped = HindsightRetriever(
        engine=engine, bank_id=pets_bank, metadata_filter={"source": "chat"}
    )
    assert [d.id for d in scoped.invoke("Bruno")] == ["job"]
    spring = HindsightRetriever(
        engine=engine,
        bank_id=pets_bank,
        occurred_after=datetime(2024, 3, 1, tzinfo=UTC),
        occurred_before=datetime(2024, 5, 1, tzinfo=UTC),
    )
    assert sorted(str(d.id) for d in spring.invoke("Bruno's cat Miso")) == ["pet-2", "pet-3"]
    assert [d.id for d in scoped.invoke("Bruno", metadata_filter={"source": "mail"})] == []
    tool = HindsightRecallTool(engine=engine, bank_id=pets_bank, metadata_filter={"source": "chat"})
    answer = tool.invoke({"query": "What does Bruno do?"})
    assert "translator" in answer and "Miso" not in answer
    schema = tool.tool_call_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)
    assert "metadata_filter" not in schema.model_json_schema()["properties"]
