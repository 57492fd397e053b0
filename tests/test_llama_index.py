"""The LlamaIndex adapters: retriever (alone and in a query engine) and the tool spec."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.tools import FunctionTool
from llama_index.retrievers.hindsight_tools import HindsightRetriever
from llama_index.tools.hindsight_tools import HindsightToolSpec

from hindsight_tools import MemoryEngine, RecallToolArgs, RetainToolArgs, run_recall_tool

MEMORIES: list[dict[str, Any]] = [
    {
        "id": "lisbon",
        "text": "Dana moved to Lisbon to work on tidal energy",
        "occurred_start": "2022-09-01T00:00:00Z",
        "metadata": {"source": "email"},
        "tags": ["dana"],
    },
    {"id": "surf", "text": "Dana surfs at Carcavelos beach on weekends", "fact_type": "experience"},
    {"id": "cello", "text": "Dana played cello in a youth orchestra"},
]


@pytest.fixture
def dana(engine: MemoryEngine, bank: str) -> str:
    engine.retain(bank, MEMORIES)
    return bank


def test_nodes_carry_text_final_score_and_metadata(engine: MemoryEngine, dana: str) -> None:
    retriever = HindsightRetriever(engine=engine, bank_id=dana)
    nodes = retriever.retrieve("Why did Dana move to Lisbon?")
    expected = engine.recall(dana, "Why did Dana move to Lisbon?").memories
    assert [n.node.node_id for n in nodes] == [m.id for m in expected]
    assert [n.score for n in nodes] == [m.scores.final for m in expected]
    top = nodes[0].node
    assert isinstance(top, TextNode) and top.text == "Dana moved to Lisbon to work on tidal energy"
    assert top.metadata["metadata"] == {"source": "email"} and top.metadata["tags"] == ["dana"]
    assert top.metadata["scores"]["final"] == nodes[0].score
    assert top.metadata["source_ranks"] == expected[0].source_ranks
    # the LLM reads the text with its fact type and date, not ids and scores
    shown = top.get_content(metadata_mode=MetadataMode.LLM)
    assert "occurred_start: 2022-09-01T00:00:00+00:00" in shown and "fact_type: world" in shown
    assert "scores" not in shown and "lisbon" not in shown.split("\n")[0]
    assert top.get_content(metadata_mode=MetadataMode.EMBED) == top.text


def test_recall_fields_and_top_k(engine: MemoryEngine, dana: str) -> None:
    experience = HindsightRetriever(engine=engine, bank_id=dana, types=["experience"])
    assert [n.node.node_id for n in experience.retrieve("Dana")] == ["surf"]
    assert len(HindsightRetriever(engine=engine, bank_id=dana, similarity_top_k=2).retrieve(
        "Dana"
    )) == 2  # fmt: skip


async def test_async_retrieval_runs_on_the_async_engine(
    engine: MemoryEngine, dana: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    retriever = HindsightRetriever(engine=engine, bank_id=dana)
    expected = [n.node.node_id for n in retriever.retrieve("Dana's hobbies")]

    def no_sync_recall(*args: object, **kwargs: object) -> None:
        raise AssertionError("the async path called the sync engine")

    monkeypatch.setattr(engine, "recall", no_sync_recall)
    assert [n.node.node_id for n in await retriever.aretrieve("Dana's hobbies")] == expected


async def test_query_engine_answers_from_recalled_memories(engine: MemoryEngine, dana: str) -> None:
    retriever = HindsightRetriever(engine=engine, bank_id=dana, similarity_top_k=2)
    # MockLLM answers with its prompt, so the answer shows what the engine gave the LLM
    query_engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = query_engine.query("Why did Dana move to Lisbon?")
    assert "Dana moved to Lisbon to work on tidal energy" in str(response)
    assert [n.node.node_id for n in response.source_nodes] == [
        m.id for m in engine.recall(dana, "Why did Dana move to Lisbon?").memories[:2]
    ]
    aresponse = await query_engine.aquery("Why did Dana move to Lisbon?")
    assert "Dana moved to Lisbon to work on tidal energy" in str(aresponse)


def test_tool_spec_gives_recall_and_retain_with_the_shared_schemas(
    engine: MemoryEngine, dana: str
) -> None:
    tools = HindsightToolSpec(engine=engine, bank_id=dana).to_tool_list()
    assert [t.metadata.name for t in tools] == ["recall", "retain"]
    recall, retain = tools
    assert isinstance(recall, FunctionTool)
    assert recall.metadata.fn_schema is RecallToolArgs
    assert retain.metadata.fn_schema is RetainToolArgs
    openai_tool = recall.metadata.to_openai_tool()
    assert set(openai_tool["function"]["parameters"]["properties"]) == set(
        RecallToolArgs.model_fields
    )
    args = {"query": "Where does Dana surf?"}
    assert recall.call(**args).content == run_recall_tool(engine, dana, args)
    stored = retain.call(text="Dana adopted a dog named Sardinha", tags=["dana"])
    assert stored.content.startswith("Stored memory ")
    assert "Sardinha" in recall.call(query="Dana's dog").content


async def test_tool_spec_async_and_bad_arguments(engine: MemoryEngine, dana: str) -> None:
    recall, retain = HindsightToolSpec(engine=engine, bank_id=dana).to_tool_list()
    answer = await recall.acall(query="Where does Dana surf?", types=["experience"])
    assert "(experience) Dana surfs at Carcavelos beach on weekends" in answer.content
    stored = await retain.acall(text="Dana learned Portuguese in 2023")
    assert stored.content.startswith("Stored memory ")
    for output in (recall.call(query="x", budget="max"), await recall.acall(query="x", k=3)):
        assert output.content.startswith("Error: the recall call was rejected.")
    assert "'low', 'mid' or 'high'" in recall.call(query="x", budget="max").content
    assert "fact_type:" in (await retain.acall(text="x", fact_type="gossip")).content


def test_retriever_and_tool_spec_filter_by_metadata_and_date(
    engine: MemoryEngine, dana: str
) -> None:
    by_source = HindsightRetriever(engine, dana, metadata_filter={"source": "email"})
    assert [n.node.node_id for n in by_source.retrieve("Dana")] == ["lisbon"]
    dated = HindsightRetriever(engine, dana, occurred_after="2022-01-01")
    assert [n.node.node_id for n in dated.retrieve("Dana")] == ["lisbon"]
    spec = HindsightToolSpec(engine, dana, metadata_filter={"source": "email"})
    text = spec.recall(query="What does Dana do?")
    assert "Lisbon" in text and "cello" not in text
