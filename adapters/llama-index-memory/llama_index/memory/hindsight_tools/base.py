"""``HindsightMemory``: an agent's chat memory whose every turn goes into a hindsight bank."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import Field, StrictInt, field_validator
from llama_index.core.memory.types import BaseMemory
from llama_index.core.utils import get_tokenizer
from llama_index.memory.hindsight_tools.bank import BankOptions

# A window of recent turns; what falls out of it is recalled from the bank when it matters.
DEFAULT_TOKEN_LIMIT = 3000
DEFAULT_MEMORY_PROMPT = (
    "Memories recalled from earlier in this conversation and from past ones, with the date "
    "each was said. Use them when they help; the chat history that follows is newer.\n"
    "{memories}"
)


class HindsightMemory(BankOptions, BaseMemory):
    """Chat memory for agents (``FunctionAgent(...).run(..., memory=...)``) backed by a bank.

    Every message put is retained at once, one memory per message (llama-index's ``Memory``
    would hand a block a message only once it leaves the short-term history, some 21k tokens
    later). ``get`` returns the short-term history, the newest messages within
    ``token_limit`` from a user message on, with in front of it a system message carrying
    the memories recalled for the latest user message (those in the history left out),
    within ``max_tokens``. ``get_all`` returns every message put since the last ``reset``;
    ``reset`` clears that history only, the bank keeps what was retained.
    """

    token_limit: StrictInt = Field(
        default=DEFAULT_TOKEN_LIMIT, ge=1, description="Tokens of short-term chat history."
    )
    session_id: str = Field(
        default_factory=lambda: uuid.uuid4().hex,
        description=(
            "Kept in each memory's metadata; part of its id; the memories' document, so a "
            "session's messages are read as one conversation."
        ),
    )
    chat_history: list[ChatMessage] = Field(
        default_factory=list, description="Every message put since the last reset."
    )
    memory_prompt: str = Field(
        default=DEFAULT_MEMORY_PROMPT,
        description="The system message of recalled memories; '{memories}' is where they go.",
    )
    tokenizer_fn: Callable[[str], list[Any]] = Field(
        default_factory=get_tokenizer, exclude=True, description="Counts the history's tokens."
    )

    @classmethod
    def class_name(cls) -> str:
        return "HindsightMemory"

    @field_validator("memory_prompt")
    @classmethod
    def _has_a_place(cls, value: str) -> str:
        if value.count("{memories}") != 1:
            raise ValueError("must contain '{memories}' once: where the recalled memories go")
        return value

    @classmethod
    def from_defaults(
        cls,
        *,
        chat_history: list[ChatMessage] | None = None,
        token_limit: int | None = None,
        session_id: str | None = None,
        **options: Any,
    ) -> HindsightMemory:
        """A memory on ``engine`` and ``bank_id`` (in ``options``, with the other fields);
        ``chat_history`` is put, and so retained, first."""
        if token_limit is not None:
            options["token_limit"] = token_limit
        if session_id is not None:
            options["session_id"] = session_id
        memory = cls(**options)
        if chat_history:
            memory.put_messages(chat_history)
        return memory

    async def aget(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        history = self._window()
        recalled = await self.arecall(self._asked(history, input), self.session_id)
        return self._with_memories(recalled, history)

    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        history = self._window()
        recalled = self.recall(self._asked(history, input), self.session_id)
        return self._with_memories(recalled, history)

    # The history lives in this object, so the async twins need no thread.
    async def aget_all(self) -> list[ChatMessage]:
        return self.get_all()

    def get_all(self) -> list[ChatMessage]:
        return list(self.chat_history)

    # Retained before the history takes the message: a message the bank refuses (a bad
    # timestamp) is in neither.
    async def aput(self, message: ChatMessage) -> None:
        await self.aput_messages([message])

    def put(self, message: ChatMessage) -> None:
        self.put_messages([message])

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        await self.aretain(messages, self.session_id)
        self.chat_history.extend(messages)

    def put_messages(self, messages: list[ChatMessage]) -> None:
        self.retain(messages, self.session_id)
        self.chat_history.extend(messages)

    # Message ids are stable: setting a history already retained adds no copies.
    async def aset(self, messages: list[ChatMessage]) -> None:
        await self.aretain(messages, self.session_id)
        self.chat_history = list(messages)

    def set(self, messages: list[ChatMessage]) -> None:
        self.retain(messages, self.session_id)
        self.chat_history = list(messages)

    async def areset(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.chat_history = []

    def _window(self) -> list[ChatMessage]:
        """The newest messages within ``token_limit``, starting with a user message (a reply
        or tool result without what it answers would mislead the model)."""
        used, start = 0, len(self.chat_history)
        while start > 0:
            cost = len(self.tokenizer_fn(str(self.chat_history[start - 1])))
            if used + cost > self.token_limit:
                break
            used, start = used + cost, start - 1
        # the newest message always: the question an agent is answering may be a long one
        window = self.chat_history[min(start, len(self.chat_history) - 1) :]
        while len(window) > 1 and window[0].role != MessageRole.USER:
            window = window[1:]
        return window

    @staticmethod
    def _asked(history: list[ChatMessage], input: str | None) -> list[ChatMessage]:
        if input:
            return [*history, ChatMessage(role=MessageRole.USER, content=input)]
        return history

    def _with_memories(self, recalled: str, history: list[ChatMessage]) -> list[ChatMessage]:
        if not recalled:
            return history
        prompt = self.memory_prompt.replace("{memories}", recalled)
        return [ChatMessage(role=MessageRole.SYSTEM, content=prompt), *history]
