"""The recall and retain tools: text a model reads, errors it can act on, bank binding."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest

import hindsight_tools
from hindsight_tools import (
    InvalidRequestError,
    MemoryEngine,
    arun_recall_tool,
    arun_retain_tool,
    run_recall_tool,
    run_retain_tool,
)
from hindsight_tools.encoders.tokens import count_tokens
from hindsight_tools.tools import resolve_bank_id

MEMORIES: list[dict[str, Any]] = [
    {
        "id": "job",
        "text": "Alice joined Google as a site reliability engineer",
        "occurred_start": "2023-03-01T09:00:00Z",
        "tags": ["work"],
        "document_id": "chat-1",
        "chunk": "Alice: Big news, I just joined Google as an SRE! Bob: Congrats!",
    },
    {
        "id": "lang",
        "text": "Alice prefers Python over JavaScript",
        "fact_type": "experience",
    },
    {
        "id": "move",
        "text": "Alice moved to Lisbon with her partner",
        "occurred_start": "2024-05-01T00:00:00Z",
        "occurred_end": "2024-05-31T00:00:00Z",
    },
]


@pytest.fixture
def alice(engine: MemoryEngine, bank: str) -> str:
    engine.retain(bank, MEMORIES)
    return bank


def test_the_public_names_are_exported() -> None:
    for name in hindsight_tools.__all__:
        assert hasattr(hindsight_tools, name), name
    assert {"RecallToolArgs", "recall_tool_schema", "run_recall_tool"} <= set(
        hindsight_tools.__all__
    )


def test_recall_text_has_date_fact_type_and_text_best_first(
    engine: MemoryEngine, alice: str
) -> None:
    text = run_recall_tool(engine, alice, {"query": "Google site reliability engineer"})
    lines = text.splitlines()
    assert lines[0] == "Memories (best first):"
    assert lines[1] == "- [2023-03-01] (world) Alice joined Google as a site reliability engineer"
    assert "- [undated] (experience) Alice prefers Python over JavaScript" in lines
    assert "- [2024-05-01 to 2024-05-31] (world) Alice moved to Lisbon with her partner" in lines
    assert "Source chunks:" not in text


def test_raw_json_arguments_and_nulls_mean_defaults(engine: MemoryEngine, alice: str) -> None:
    # OpenAI's strict mode sends every field, the unset ones as null
    call: dict[str, Any] = {name: None for name in hindsight_tools.RecallToolArgs.model_fields}
    call |= {"query": "Where does Alice work?", "types": ["experience"]}
    text = run_recall_tool(engine, alice, json.dumps(call))
    assert text.splitlines()[1:] == [
        "- [undated] (experience) Alice prefers Python over JavaScript"
    ]


def test_chunks_come_when_asked_within_their_own_budget(engine: MemoryEngine, alice: str) -> None:
    args = {"query": "Alice joined Google", "include_chunks": True, "types": ["world"]}
    text = run_recall_tool(engine, alice, args)
    _memories, chunks = text.split("\n\n")
    assert chunks.splitlines() == [
        "Source chunks:",
        "[chat-1 #0] Alice: Big news, I just joined Google as an SRE! Bob: Congrats!",
    ]
    only_chunks = run_recall_tool(engine, alice, {**args, "max_tokens": 0})
    assert only_chunks.startswith("Source chunks:") and "Memories" not in only_chunks
    cut = run_recall_tool(engine, alice, {**args, "max_tokens": 0, "max_chunk_tokens": 20})
    assert cut.startswith("Source chunks:\n[chat-1 #0] Alice: Big")
    assert cut.endswith("(truncated)") and count_tokens(cut) <= 20


def test_recall_text_stays_within_max_tokens(engine: MemoryEngine, bank: str) -> None:
    engine.retain(
        bank,
        [{"text": f"Alice visited museum number {i} in Porto", "id": f"m{i}"} for i in range(30)],
    )
    full = run_recall_tool(engine, bank, {"query": "museums Alice visited"})
    short = run_recall_tool(engine, bank, {"query": "museums Alice visited", "max_tokens": 60})
    assert count_tokens(short) <= 60 < count_tokens(full)
    assert 2 <= len(short.splitlines()) < len(full.splitlines())
    assert short.splitlines() == full.splitlines()[: len(short.splitlines())]  # best first kept
    none_fit = run_recall_tool(engine, bank, {"query": "museums Alice visited", "max_tokens": 5})
    assert none_fit == "No memories found within max_tokens=5."


def test_no_match_says_so(engine: MemoryEngine, bank: str) -> None:
    answer = run_recall_tool(engine, bank, {"query": "anything at all"})
    assert answer == "No memories found within max_tokens=4096."


BAD_ARGUMENTS: list[tuple[object, list[str]]] = [
    ({"query": "x", "colour": "red"}, ["colour: unknown field", "budget, include_chunks"]),
    ({"query": "x", "max_tokens": "lots"}, ["max_tokens:", "valid integer", "integer >= 0"]),
    ({"query": "x", "max_tokens": -1}, ["max_tokens:", "greater than or equal to 0"]),
    ({"query": "x", "max_chunk_tokens": 1.5}, ["max_chunk_tokens:", "integer >= 0"]),
    ({"query": "x", "budget": "max"}, ["budget:", "'low', 'mid' or 'high'"]),
    ({"query": "x", "types": ["rumour"]}, ["types[0]:", "'world', 'experience' or 'observation'"]),
    ({"query": "x", "types": "world"}, ["types:", "a list of 'world', 'experience'"]),
    (
        {"query": "x", "tags_match": "some"},
        ["tags_match:", "'any_strict', 'all_strict' or 'exact'"],
    ),
    ({"query": "x", "include_chunks": "yes"}, ["include_chunks:", "true or false"]),
    ({"query": "x", "query_timestamp": "last week"}, ["query_timestamp:", "ISO 8601"]),
    ({"budget": "low"}, ["query: is required"]),
    ({"query": "   "}, ["query: must be a non-empty string"]),
    ('{"query": "x",', ["arguments: not valid JSON", "line 1 column 15"]),
    ("[1, 2]", ["arguments: must be a JSON object with the fields query, budget"]),
    (42, ["arguments: must be a JSON object"]),
]


@pytest.mark.parametrize(("arguments", "expected"), BAD_ARGUMENTS)
def test_bad_arguments_answer_with_text_naming_field_and_allowed_values(
    engine: MemoryEngine, alice: str, arguments: Any, expected: list[str]
) -> None:
    text = run_recall_tool(engine, alice, arguments)
    assert text.startswith("Error: the recall call was rejected.")
    assert text.endswith("Fix the arguments and call recall again.")
    for fragment in expected:
        assert fragment in text


def test_every_problem_of_a_call_is_listed(engine: MemoryEngine, alice: str) -> None:
    text = run_recall_tool(engine, alice, {"query": "x", "budget": "max", "max_tokens": -3})
    assert "- budget:" in text and "- max_tokens:" in text


def test_bad_bank_is_an_error_text_too(engine: MemoryEngine) -> None:
    text = run_recall_tool(engine, "no spaces allowed", {"query": "x"})
    assert text.startswith("Error:") and "bank_id" in text


async def test_async_runner_gives_the_same_text(engine: MemoryEngine, alice: str) -> None:
    args = {"query": "Where does Alice live?", "include_chunks": True}
    assert await arun_recall_tool(engine, alice, args) == run_recall_tool(engine, alice, args)
    assert await arun_recall_tool(engine.aio, alice, json.dumps(args)) == run_recall_tool(
        engine, alice, args
    )
    bad = await arun_recall_tool(engine, alice, {"query": "x", "budget": "max"})
    assert bad.startswith("Error:") and "'low', 'mid' or 'high'" in bad


def test_retain_tool_stores_a_memory_recall_then_finds(engine: MemoryEngine, bank: str) -> None:
    answer = run_retain_tool(
        engine,
        bank,
        '{"text": "Bruno adopted a grey cat named Miso", "occurred_start": "2024-02-03", '
        '"tags": ["pets"], "fact_type": null}',
    )
    assert answer.startswith("Stored memory ")
    stored_id = answer.removeprefix("Stored memory ").removesuffix(".")
    result = engine.recall(bank, "Bruno's cat")
    assert result.memories[0].id == stored_id and result.memories[0].tags == ["pets"]
    bad = run_retain_tool(engine, bank, {"text": "x", "fact_type": "rumour", "id": "forced"})
    assert bad.startswith("Error: the retain call was rejected.")
    assert "fact_type:" in bad and "id: unknown field" in bad and "occurred_start" in bad


async def test_async_retain_tool(engine: MemoryEngine, bank: str) -> None:
    answer = await arun_retain_tool(engine, bank, {"text": "Carla runs a bakery in Ghent"})
    assert answer.startswith("Stored memory ")
    assert engine.recall(bank, "bakery").memories[0].text == "Carla runs a bakery in Ghent"
    assert (await arun_retain_tool(engine, bank, "{}")).startswith("Error:")


def test_bank_binding_rules() -> None:
    assert resolve_bank_id("alice", None) == "alice"
    assert resolve_bank_id(None, "bob") == "bob"
    assert resolve_bank_id("alice", "alice") == "alice"
    with pytest.raises(InvalidRequestError, match="bound to bank 'alice'.*asks for 'bob'"):
        resolve_bank_id("alice", "bob")
    with pytest.raises(InvalidRequestError, match="no bank given"):
        resolve_bank_id(None, None)
    with pytest.raises(InvalidRequestError, match="must be a string"):
        resolve_bank_id(None, 7)


def test_the_application_binds_a_scope_the_model_can_not_widen(
    engine: MemoryEngine, bank: str
) -> None:
    engine.retain(
        bank,
        [
            {
                "id": "mine",
                "text": "Ines flew to Lisbon",
                "metadata": {"user": "ines"},
                "occurred_start": "2024-03-02",
            },
            {
                "id": "old",
                "text": "Ines flew to Porto",
                "metadata": {"user": "ines"},
                "occurred_start": "2023-03-02",
            },
            {
                "id": "theirs",
                "text": "Omar flew to Lisbon",
                "metadata": {"user": "omar"},
                "occurred_start": "2024-03-05",
            },
        ],
    )
    scoped = functools.partial(run_recall_tool, metadata_filter={"user": "ines"})
    text = scoped(engine, bank, {"query": "Who flew where?"})
    assert "Ines flew to Lisbon" in text and "Ines flew to Porto" in text and "Omar" not in text
    # the model's own date range narrows within the scope
    dated = scoped(engine, bank, {"query": "Who flew where?", "occurred_after": "2024-01-01"})
    assert "Lisbon" in dated and "Porto" not in dated and "Omar" not in dated
    # a model can't pass a filter of its own: the tool has no such argument
    sneaky = run_recall_tool(engine, bank, {"query": "flew", "metadata_filter": {}})
    assert "metadata_filter: unknown field" in sneaky
    # a malformed scope is the application's bug: raised, not shown to the model
    with pytest.raises(InvalidRequestError, match=r"metadata_filter\.user\.\$like"):
        run_recall_tool(engine, bank, {"query": "x"}, metadata_filter={"user": {"$like": "i"}})
    inverted = run_recall_tool(
        engine,
        bank,
        {"query": "x", "occurred_after": "2024-02-01", "occurred_before": "2024-01-01"},
    )
    assert "occurred_after" in inverted and "must be before" in inverted
