"""The LlamaIndex memory adapter: the memory block, the agent memory, and an agent using it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from llama_index.core.agent.workflow import AgentOutput, FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.memory import BaseMemory, ChatMemoryBuffer, Memory
from llama_index.core.utils import get_tokenizer
from llama_index.memory.hindsight_tools import HindsightMemory, HindsightMemoryBlock
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from hindsight_tools import InvalidRequestError, MemoryEngine, RecallResult, StoredMemory

DISTRACTORS = [
    "My sister Ines keeps bees on her balcony",
    "I switched my phone plan to a cheaper one last month",
    "Our team standup moved to 9:30 on Mondays",
    "I am reading a novel about a lighthouse keeper",
    "The dentist appointment is on the 14th",
]
LISBON = "I moved to Lisbon two years ago and live in the Alfama district"


def user(text: str, **kwargs: Any) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text, additional_kwargs=kwargs)


def assistant(text: str, **kwargs: Any) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text, additional_kwargs=kwargs)


def memory_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ")]


def stored(engine: MemoryEngine, bank: str) -> dict[str, StoredMemory]:
    return {m.text: m for m in engine.list_memories(bank)}


async def test_the_block_recalls_the_right_memory_among_distractors(
    engine: MemoryEngine, bank: str
) -> None:
    block = HindsightMemoryBlock(engine=engine, bank_id=bank)
    await block.aput([user(text) for text in DISTRACTORS[:3]] + [user(LISBON)])
    await block.aput([user(text) for text in DISTRACTORS[3:]])
    text = await block.aget([user("Hello"), assistant("Hi!"), user("Which city do I live in?")])
    lines = memory_lines(text)
    assert text.startswith("Memories (best first):\n")
    assert lines[0].endswith(f"(world) user: {LISBON}")
    assert not any(d in line for line in lines[:1] for d in DISTRACTORS)
    # nothing to recall for when no user has spoken
    assert await block.aget([assistant("How can I help?")]) == ""
    assert await block.aget(None) == ""


async def test_role_speaker_and_date_are_kept_and_textless_messages_skipped(
    engine: MemoryEngine, bank: str
) -> None:
    block = HindsightMemoryBlock(engine=engine, bank_id=bank, speaker_names={"assistant": "Ada"})
    before = datetime.now(UTC)
    await block.aput(
        [
            user("I adopted a dog named Sardinha", name="Dana", timestamp="2024-06-01T10:00+02:00"),
            assistant("Sardinha is a lovely name", timestamp=datetime(2024, 6, 1, 8, 1)),
            user("She is a greyhound", timestamp=1717228920),
            user("She loves the beach"),
            ChatMessage(role=MessageRole.SYSTEM, content="You are a helpful assistant"),
            ChatMessage(role=MessageRole.TOOL, content="Stored memory 42."),
            user("   "),
            ChatMessage(
                role=MessageRole.ASSISTANT,
                blocks=[ToolCallBlock(tool_name="recall", tool_kwargs={"query": "dog"})],
            ),
        ]
    )
    after = datetime.now(UTC)
    memories = stored(engine, bank)
    assert sorted(memories) == [
        "Ada: Sardinha is a lovely name",
        "Dana: I adopted a dog named Sardinha",
        "user: She is a greyhound",
        "user: She loves the beach",
    ]
    dana = memories["Dana: I adopted a dog named Sardinha"]
    assert dana.mentioned_at == datetime(2024, 6, 1, 8, 0, tzinfo=UTC)
    assert dana.fact_type == "world" and dana.context == "chat message from Dana (user)"
    assert dana.metadata == {"source": "llama-index-chat", "role": "user", "speaker": "Dana"}
    ada = memories["Ada: Sardinha is a lovely name"]
    assert ada.mentioned_at == datetime(2024, 6, 1, 8, 1, tzinfo=UTC)  # naive is UTC
    assert ada.fact_type == "experience" and ada.metadata["role"] == "assistant"
    assert ada.metadata["speaker"] == "Ada" and ada.context == "chat message from Ada (assistant)"
    assert memories["user: She is a greyhound"].mentioned_at == datetime(
        2024, 6, 1, 8, 2, tzinfo=UTC
    )
    undated = memories["user: She loves the beach"].mentioned_at
    assert undated is not None and before <= undated <= after
    # the ids come back from the engine as they were derived from the messages
    by_id = engine.get_memories(bank, [m.id for m in memories.values()])
    assert {m.text for m in by_id} == set(memories)


async def test_tool_messages_are_kept_when_their_role_is_asked_for(
    engine: MemoryEngine, bank: str
) -> None:
    block = HindsightMemoryBlock(engine=engine, bank_id=bank, retain_roles=[MessageRole.TOOL])
    await block.aput([user("hi"), ChatMessage(role=MessageRole.TOOL, content="42 degrees")])
    assert list(stored(engine, bank)) == ["tool: 42 degrees"]


async def test_the_same_message_put_again_is_one_memory(engine: MemoryEngine, bank: str) -> None:
    memory = HindsightMemory(engine=engine, bank_id=bank)
    history = [user("I play the oboe"), assistant("Since when?"), user("Since 2010")]
    await memory.aput_messages(history)
    await memory.aset(history)  # as an agent does with a chat_history it is given
    await memory.aput(user("I play the oboe", timestamp="2025-01-01"))  # dated: another one
    assert sorted(m.text for m in engine.list_memories(bank)) == [
        "assistant: Since when?",
        "user: I play the oboe",
        "user: I play the oboe",
        "user: Since 2010",
    ]


async def test_the_token_budget_is_kept(
    engine: MemoryEngine, bank: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = [f"My colleague number {i} drinks {i} cups of green tea a day" for i in range(30)]
    await HindsightMemoryBlock(engine=engine, bank_id=bank).aput([user(f) for f in facts])
    asked: list[object] = []
    recall = engine.aio.recall

    async def recall_and_note(*args: Any, **kwargs: Any) -> RecallResult:
        asked.append(kwargs.get("max_tokens"))
        return await recall(*args, **kwargs)

    # a spy, not a stand-in: the real recall runs
    monkeypatch.setattr(engine.aio, "recall", recall_and_note)
    question = [user("How much green tea do my colleagues drink?")]
    count = get_tokenizer()
    wide = await HindsightMemoryBlock(engine=engine, bank_id=bank, max_tokens=4000).aget(question)
    narrow = await HindsightMemoryBlock(engine=engine, bank_id=bank, max_tokens=80).aget(question)
    assert len(memory_lines(wide)) == 30
    assert 0 < len(memory_lines(narrow)) < 10 and len(count(narrow)) <= 80
    nothing = HindsightMemoryBlock(engine=engine, bank_id=bank, max_tokens=0)
    assert await nothing.aget(question) == ""
    # the engine packs within the budget itself: it is asked for no more than fits
    assert asked == [4000, 80, 0]


async def test_truncation_drops_the_worst_ranked_memories_first() -> None:
    text = "Memories (best first):\n- [2024-01-01] (world) a\n- [2024-01-02] (world) b"
    block = HindsightMemoryBlock.model_construct(name="hindsight_memory")
    assert await block.atruncate(text, 1) == "Memories (best first):\n- [2024-01-01] (world) a"
    assert await block.atruncate(text, 10_000) is None


async def test_the_block_gets_what_llama_index_memory_flushes(
    engine: MemoryEngine, bank: str
) -> None:
    block = HindsightMemoryBlock(engine=engine, bank_id=bank)
    # Memory's own SQLite engine is never closed; this one is, by the test
    store = create_async_engine("sqlite+aiosqlite:///:memory:")
    try:
        await _flushed_turns_are_recalled(engine, bank, block, store)
    finally:
        await store.dispose()


async def _flushed_turns_are_recalled(
    engine: MemoryEngine, bank: str, block: HindsightMemoryBlock, store: AsyncEngine
) -> None:
    memory = Memory.from_defaults(
        token_limit=120, token_flush_size=20, memory_blocks=[block], async_engine=store
    )
    await memory.aput_messages([user(LISBON), assistant("Lovely neighbourhood.")])
    for text in DISTRACTORS:
        await memory.aput_messages([user(text), assistant("Noted.")])
    await memory.aput(user("Which city do I live in?"))
    flushed = {m.metadata["session_id"] for m in stored(engine, bank).values()}
    assert flushed == {memory.session_id}
    assert f"user: {LISBON}" in stored(engine, bank)
    assert "user: Which city do I live in?" not in stored(engine, bank)  # still short-term
    messages = await memory.aget()
    assert messages[0].role == MessageRole.SYSTEM
    assert all(LISBON not in (m.content or "") for m in messages[1:])
    system = messages[0].content or ""
    assert "<hindsight_memory>" in system
    assert memory_lines(system)[0].endswith(f"user: {LISBON}")


async def test_hindsight_memory_retains_every_turn_at_once(engine: MemoryEngine, bank: str) -> None:
    memory = HindsightMemory(engine=engine, bank_id=bank)
    assert isinstance(memory, BaseMemory)
    await memory.aput(user(LISBON))
    await memory.aput(assistant("Lovely neighbourhood."))
    assert sorted(stored(engine, bank)) == ["assistant: Lovely neighbourhood.", f"user: {LISBON}"]
    memory.reset()  # the short-term history only
    await memory.aput(user("Which city do I live in?"))
    messages = await memory.aget()
    assert [m.role for m in messages] == [MessageRole.SYSTEM, MessageRole.USER]
    system = messages[0].content or ""
    assert memory_lines(system)[0].endswith(f"user: {LISBON}")
    # what the history shows already is not recalled again
    assert "Which city" not in system
    assert await memory.aget_all() == messages[1:]
    assert len(stored(engine, bank)) == 3


async def test_a_session_put_a_message_at_a_time_is_read_as_a_conversation(
    engine: MemoryEngine, bank: str, db: psycopg.Connection[tuple[Any, ...]]
) -> None:
    memory = HindsightMemory(engine=engine, bank_id=bank)
    await memory.aput(user("How long have you had your turtles?"))
    await memory.aput(assistant("Three years now, and they love the sunny window."))
    kept = stored(engine, bank)
    question = kept["user: How long have you had your turtles?"]
    answer = kept["assistant: Three years now, and they love the sunny window."]
    assert question.document_id == answer.document_id == memory.session_id
    # the answer, put in a call of its own, was read after the question
    read_after = db.execute(
        "SELECT id, context_of FROM memory_token_vectors WHERE bank_id = %s", (bank,)
    ).fetchall()
    assert dict(read_after) == {question.id: None, answer.id: question.id}
    # and the session can be forgotten as one document
    assert engine.delete_document(bank, memory.session_id) == 2


async def test_a_session_id_that_cannot_be_a_document_stays_in_the_metadata(
    engine: MemoryEngine, bank: str
) -> None:
    session = "s" * 300  # over the 256 characters a document id may have
    memory = HindsightMemory(engine=engine, bank_id=bank, session_id=session)
    await memory.aput(user(LISBON))
    (kept,) = stored(engine, bank).values()
    assert kept.document_id is None and kept.metadata["session_id"] == session


async def test_get_recalls_for_the_given_input(engine: MemoryEngine, bank: str) -> None:
    memory = HindsightMemory(engine=engine, bank_id=bank)
    await memory.aput_messages([user(text) for text in [*DISTRACTORS, LISBON]])
    await memory.areset()
    messages = await memory.aget(input="Which city do I live in?")
    assert len(messages) == 1 and memory_lines(messages[0].content or "")[0].endswith(LISBON)
    assert await memory.aget() == []  # no user message: nothing recalled


def test_the_sync_methods_use_the_bank_too(engine: MemoryEngine, bank: str) -> None:
    memory = HindsightMemory.from_defaults(
        engine=engine, bank_id=bank, chat_history=[user(LISBON), assistant("Nice.")]
    )
    assert len(stored(engine, bank)) == 2 and memory.get_all() == [user(LISBON), assistant("Nice.")]
    memory.set([user("What is new?")])
    memory.put(assistant("Not much."))
    memory.put_messages([user("Which city do I live in?")])
    messages = memory.get()
    assert [m.content for m in messages[1:]] == [
        "What is new?",
        "Not much.",
        "Which city do I live in?",
    ]
    assert memory_lines(messages[0].content or "")[0].endswith(LISBON)
    memory.reset()
    assert memory.get_all() == [] and len(stored(engine, bank)) == 5


async def test_async_calls_run_on_the_async_engine(
    engine: MemoryEngine, bank: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def sync_path(*args: object, **kwargs: object) -> None:
        raise AssertionError("the sync engine was called from async code")

    for name in ("retain", "recall"):
        monkeypatch.setattr(engine, name, sync_path)
    for given in (engine, engine.aio):
        memory = HindsightMemory(engine=given, bank_id=bank)
        await memory.aput(user(LISBON))
        await memory.areset()
        await memory.aput(user("Which city do I live in?"))
        recalled = memory_lines((await memory.aget())[0].content or "")
        assert any(line.endswith(LISBON) for line in recalled)
        block = HindsightMemoryBlock(engine=given, bank_id=bank)
        await block.aput([user("I like figs")])
        assert "figs" in await block.aget([user("Which fruit do I like?")])
    # one memory per message and session (each HindsightMemory has its own), the block's once
    assert len(await engine.aio.list_memories(bank)) == 5


def test_a_memory_on_the_async_engine_works_from_sync_code(engine: MemoryEngine, bank: str) -> None:
    memory = HindsightMemory(engine=engine.aio, bank_id=bank)
    memory.put(user(LISBON))
    memory.reset()
    memory.put(user("Which city do I live in?"))
    assert memory_lines(memory.get()[0].content or "")[0].endswith(LISBON)


class ScriptedLLM(MockFunctionCallingLLM):
    """Answers a question with the recalled memory that shares a word with it; else notes."""

    _seen: list[list[ChatMessage]] = PrivateAttr(default_factory=list)

    def __init__(self) -> None:
        super().__init__(response_generator=self.answer)

    @property
    def seen(self) -> list[list[ChatMessage]]:
        return self._seen

    def answer(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        self._seen.append(list(messages))
        question = next(m for m in reversed(messages) if m.role == MessageRole.USER)
        text = question.content or ""
        if not text.endswith("?"):
            return assistant("Noted.")
        words = {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}
        for message in messages:
            if message.role != MessageRole.SYSTEM:
                continue
            for line in memory_lines(message.content or ""):
                if words & set(re.findall(r"[a-z]+", line.lower())):
                    return assistant(f"From memory: {line.split(' user: ')[-1]}")
        return assistant("I don't know.")


async def ask(agent: FunctionAgent, memory: BaseMemory, text: str) -> str:
    output: object = await agent.run(user_msg=text, memory=memory)
    assert isinstance(output, AgentOutput)
    return str(output.response.content)


# the workflow lists the agent's members with inspect: pydantic's deprecated ones among them
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning:inspect")
async def test_a_function_agent_recalls_a_fact_told_many_turns_earlier(
    engine: MemoryEngine, bank: str
) -> None:
    llm = ScriptedLLM()
    agent = FunctionAgent(tools=[], llm=llm)
    memory = HindsightMemory.from_defaults(engine=engine, bank_id=bank, token_limit=100)
    short_only = ChatMemoryBuffer.from_defaults(token_limit=100)
    for chat in (memory, short_only):
        assert await ask(agent, chat, LISBON) == "Noted."
        for text in DISTRACTORS * 2:
            assert await ask(agent, chat, text) == "Noted."
    # the short-term window let the first turn go long ago
    assert all(LISBON not in (m.content or "") for m in await short_only.aget())
    assert LISBON in (memory.get_all()[0].content or "")
    history = [m for m in await memory.aget() if m.role != MessageRole.SYSTEM]
    assert history and all(LISBON not in (m.content or "") for m in history)
    assert await ask(agent, short_only, "Which city do I live in?") == "I don't know."
    assert await ask(agent, memory, "Which city do I live in?") == f"From memory: {LISBON}"
    # the agent's turns were retained as they came, its answer included
    assert f"assistant: From memory: {LISBON}" in stored(engine, bank)
    last = llm.seen[-1]
    assert last[0].role == MessageRole.SYSTEM and LISBON in (last[0].content or "")
    assert all(LISBON not in (m.content or "") for m in last[1:])


@pytest.mark.parametrize(
    ("options", "field", "message"),
    [
        ({"bank_id": ""}, "bank_id", "non-empty bank id"),
        ({"bank_id": None}, "bank_id", "non-empty bank id"),
        ({"engine": "postgres://"}, "engine", "MemoryEngine or AsyncMemoryEngine, got str"),
        ({"max_tokens": -1}, "max_tokens", "greater than or equal to 0"),
        ({"max_tokens": "10"}, "max_tokens", "valid integer"),
        ({"budget": "max"}, "budget", "'low', 'mid' or 'high'"),
        ({"retain_roles": ["human"]}, "retain_roles.0", "'user'"),
    ],
)
@pytest.mark.parametrize("kind", [HindsightMemoryBlock, HindsightMemory])
def test_bad_options_name_the_field(
    engine: MemoryEngine, kind: type[Any], options: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(InvalidRequestError, match=rf"^{re.escape(field)}: .*{message}") as raised:
        kind(**({"engine": engine, "bank_id": "b"} | options))
    assert [p.location for p in raised.value.problems] == [field]


def test_bad_memory_options_name_the_field(engine: MemoryEngine, bank: str) -> None:
    with pytest.raises(InvalidRequestError, match=r"^memory_prompt: must contain '\{memories\}'"):
        HindsightMemory(engine=engine, bank_id=bank, memory_prompt="Memories:")
    with pytest.raises(InvalidRequestError, match=r"^token_limit: .*greater than or equal to 1"):
        HindsightMemory.from_defaults(engine=engine, bank_id=bank, token_limit=0)


async def test_a_bad_bank_or_timestamp_is_refused_and_nothing_kept(
    engine: MemoryEngine, bank: str
) -> None:
    memory = HindsightMemory(engine=engine, bank_id="not a bank")
    with pytest.raises(InvalidRequestError, match=r"^bank_id: 'not a bank' is not a valid bank"):
        await memory.aput(user("hello"))
    memory = HindsightMemory(engine=engine, bank_id=bank)
    with pytest.raises(
        InvalidRequestError, match=r"^messages\[1\]\.additional_kwargs\['timestamp'\]: must be"
    ):
        await memory.aput_messages([user("hi"), user("later", timestamp="next tuesday")])
    assert await memory.aget_all() == [] and stored(engine, bank) == {}
    # a message the bank refused is never recalled, so a bad date is no reason to fail a get
    block = HindsightMemoryBlock(engine=engine, bank_id=bank)
    assert await block.aget([user("when?", timestamp="soon")]) == ""
