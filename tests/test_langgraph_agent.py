"""HindsightStore as an agent's long-term memory, end to end and offline: LangChain's
``create_agent`` with a scripted tool-calling model, its tools on ``runtime.store``, and
LangMem's memory tools creating, finding, updating and deleting by the id they hand out."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.store.hindsight_tools import HindsightStore

# langmem ships no type information
from langmem import create_manage_memory_tool, create_search_memory_tool  # type: ignore[import-untyped]

from hindsight_tools import MemoryEngine

Script = Callable[[Sequence[BaseMessage]], AIMessage]


class ScriptedChatModel(BaseChatModel):
    """A chat model whose every answer is ``script(messages)``: it calls tools and then
    answers from what the tools returned, so the test sees what the agent really read."""

    script: Script

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.script(messages))])


def _call(name: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": uuid.uuid4().hex}])


def _last(messages: Sequence[BaseMessage]) -> BaseMessage:
    return messages[-1]


@tool
def save_note(text: str, runtime: ToolRuntime) -> str:
    """Save a note about the user for later conversations."""
    assert runtime.store is not None
    key = uuid.uuid4().hex
    runtime.store.put(("notes", "alice"), key, {"text": text})
    return f"saved note {key}"


@tool
def find_notes(query: str, runtime: ToolRuntime) -> str:
    """Find the notes that answer a question."""
    assert runtime.store is not None
    found = runtime.store.search(("notes", "alice"), query=query, limit=3)
    return "\n".join(item.value["text"] for item in found)


def _notes_script(messages: Sequence[BaseMessage]) -> AIMessage:
    last = _last(messages)
    if isinstance(last, HumanMessage):
        text = str(last.content)
        if text.startswith("Remember: "):
            return _call("save_note", text=text.removeprefix("Remember: "))
        return _call("find_notes", query=text)
    assert isinstance(last, ToolMessage)
    if str(last.content).startswith("saved note"):
        return AIMessage(content="Noted.")
    # the answer is the first note the tool returned
    return AIMessage(content=str(last.content).splitlines()[0])


FACTS = [
    "Alice's dog is a border collie named Rex",
    "Alice works as a nurse at the city hospital",
    "Alice is allergic to peanuts",
    "Alice moved to Lisbon in 2022",
]


def test_an_agent_writes_and_reads_its_memory_through_runtime_store(
    engine: MemoryEngine, bank: str
) -> None:
    store = HindsightStore(engine=engine, bank_id=bank)
    agent = create_agent(
        ScriptedChatModel(script=_notes_script), [save_note, find_notes], store=store
    )
    for fact in FACTS:  # one conversation per fact: nothing carries over but the store
        answer = agent.invoke({"messages": [HumanMessage(f"Remember: {fact}")]})
        assert answer["messages"][-1].content == "Noted."
    assert sorted(i.value["text"] for i in store.search(("notes", "alice"), limit=10)) == sorted(
        FACTS
    )
    questions = {
        "What is the name of my dog?": FACTS[0],
        "What am I allergic to?": FACTS[2],
        "Where did I move to?": FACTS[3],
    }
    for question, expected in questions.items():
        answer = agent.invoke({"messages": [HumanMessage(question)]})
        assert answer["messages"][-1].content == expected, question

    async def asked() -> Any:
        return await agent.ainvoke({"messages": [HumanMessage("Where do I work?")]})

    assert asyncio.run(asked())["messages"][-1].content == FACTS[1]


class MemoryKeeper:
    """A scripted model for LangMem's tools that, like a real one, reads the id it is
    given in a tool's reply and uses it to update or delete that memory."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def __call__(self, messages: Sequence[BaseMessage]) -> AIMessage:
        last = _last(messages)
        if isinstance(last, HumanMessage):
            text = str(last.content)
            if text.startswith("Remember: "):
                return _call("manage_memory", content=text.removeprefix("Remember: "))
            if text.startswith("Correct: "):
                content = text.removeprefix("Correct: ")
                return _call("manage_memory", action="update", id=self.ids[-1], content=content)
            if text == "Forget that.":
                return _call("manage_memory", action="delete", id=self.ids[-1])
            return _call("search_memory", query=text)
        assert isinstance(last, ToolMessage)
        reply = str(last.content)
        made = re.fullmatch(r"created memory (\S+)", reply)
        if made:
            self.ids.append(made.group(1))
        if reply.startswith("["):
            found = json.loads(reply)
            return AIMessage(content=found[0]["value"]["content"] if found else "nothing")
        return AIMessage(content=reply)


def test_langmem_tools_create_search_update_and_delete_by_the_id_they_give(
    engine: MemoryEngine, bank: str
) -> None:
    store = HindsightStore(engine=engine, bank_id=bank)
    keeper = MemoryKeeper()
    tools = [
        create_manage_memory_tool(namespace=("memories", "{user_id}")),
        create_search_memory_tool(namespace=("memories", "{user_id}")),
    ]
    agent = create_agent(ScriptedChatModel(script=keeper), tools, store=store)
    alice: RunnableConfig = {"configurable": {"user_id": "alice"}}
    bob: RunnableConfig = {"configurable": {"user_id": "bob"}}

    def say(text: str, config: RunnableConfig) -> str:
        reply = agent.invoke({"messages": [HumanMessage(text)]}, config=config)
        return str(reply["messages"][-1].content)

    assert say("Remember: Bob's sister is called Jane", bob).startswith("created memory")
    for fact in ["Alice plays the cello", "Alice prefers dark mode in every editor"]:
        assert say(f"Remember: {fact}", alice).startswith("created memory")
    theme = keeper.ids[-1]
    item = store.get(("memories", "alice"), theme)
    assert item is not None and item.value == {"content": "Alice prefers dark mode in every editor"}
    assert say("Which colour theme does Alice like?", alice) == item.value["content"]
    # another user's memories are never found
    assert say("Who is Jane?", alice) != "Bob's sister is called Jane"
    assert say("Who is Jane?", bob) == "Bob's sister is called Jane"

    assert say("Correct: Alice now prefers a light theme", alice) == f"updated memory {theme}"
    assert say("Which colour theme does Alice like?", alice) == "Alice now prefers a light theme"
    assert len(store.search(("memories", "alice"), limit=10)) == 2

    assert say("Forget that.", alice) == f"Deleted memory {theme}"
    assert store.get(("memories", "alice"), theme) is None
    assert [i.value["content"] for i in store.search(("memories", "alice"))] == [
        "Alice plays the cello"
    ]
    assert store.list_namespaces(prefix=("memories",)) == [
        ("memories", "alice"),
        ("memories", "bob"),
    ]
