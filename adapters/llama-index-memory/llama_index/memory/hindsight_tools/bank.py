"""What the memory block and the memory share: the bank, its options, retain and recall."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.async_utils import asyncio_run
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    field_validator,
)
from llama_index.memory.hindsight_tools.messages import (
    given_timestamp,
    latest_user_message,
    memory_items,
    message_text,
    visible_ids,
)

from hindsight_tools import (
    AsyncMemoryEngine,
    FieldProblem,
    InvalidRequestError,
    MemoryEngine,
    MemoryItem,
    RecallResult,
)
from hindsight_tools.models import Budget
from hindsight_tools.tools import format_recall, memory_line

# Recalled memories go into every LLM call; the engine's own default (4096) is a lot of that.
DEFAULT_MAX_TOKENS = 1024


def _invalid_request(error: ValidationError) -> InvalidRequestError:
    return InvalidRequestError(
        [
            FieldProblem(
                ".".join(str(part) for part in problem["loc"]),
                problem["msg"].removeprefix("Value error, "),
            )
            for problem in error.errors()
        ]
    )


class BankOptions(BaseModel):
    """The bank memories go to and come from, and how.

    Bad arguments raise :class:`hindsight_tools.InvalidRequestError` naming each field, as
    the engine does. ``bank_id`` is checked in full (allowed characters, length) by the
    engine on the first call.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    engine: MemoryEngine | AsyncMemoryEngine = Field(
        exclude=True, description="The engine; async calls run on its async twin."
    )
    bank_id: str = Field(description="The memory bank.")
    max_tokens: StrictInt = Field(
        default=DEFAULT_MAX_TOKENS, ge=0, description="Tokens of recalled memories, at most."
    )
    budget: Budget | None = Field(
        default=None, description="Recall effort: 'low', 'mid' or 'high' (the engine's default)."
    )
    retain_roles: list[MessageRole] = Field(
        default_factory=lambda: [MessageRole.USER, MessageRole.ASSISTANT],
        description="Roles whose messages are retained (those with text).",
    )
    speaker_names: dict[str, str] = Field(
        default_factory=dict,
        description="Speaker per role, for messages with no 'name' in additional_kwargs.",
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _invalid_request(exc) from None

    @field_validator("engine", mode="before")
    @classmethod
    def _an_engine(cls, value: object) -> object:
        if not isinstance(value, MemoryEngine | AsyncMemoryEngine):
            raise ValueError(
                f"must be a hindsight_tools MemoryEngine or AsyncMemoryEngine, "
                f"got {type(value).__name__}"
            )
        return value

    @field_validator("bank_id", mode="before")
    @classmethod
    def _a_bank(cls, value: object) -> object:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"must be a non-empty bank id (a string), got {value!r}")
        return value

    @property
    def aengine(self) -> AsyncMemoryEngine:
        engine = self.engine
        return engine.aio if isinstance(engine, MemoryEngine) else engine

    async def aretain(self, messages: Sequence[ChatMessage], session_id: str | None = None) -> None:
        """Retain each message worth keeping as one memory, in one call."""
        items = self._items(messages, session_id)
        if items:
            await self.aengine.retain(self.bank_id, items)

    def retain(self, messages: Sequence[ChatMessage], session_id: str | None = None) -> None:
        if not isinstance(self.engine, MemoryEngine):
            asyncio_run(self.aretain(messages, session_id))
            return
        items = self._items(messages, session_id)
        if items:
            self.engine.retain(self.bank_id, items)

    async def arecall(self, messages: Sequence[ChatMessage], session_id: str | None = None) -> str:
        """The memories recalled for the latest user message in ``messages``, as text within
        ``max_tokens``, leaving out those of ``messages`` themselves; "" when none."""
        question = latest_user_message(messages)
        if question is None:
            return ""
        result = await self.aengine.recall(
            self.bank_id, message_text(question), **self._recall_options(question)
        )
        return self._text(result, messages, session_id)

    def recall(self, messages: Sequence[ChatMessage], session_id: str | None = None) -> str:
        if not isinstance(self.engine, MemoryEngine):
            text: str = asyncio_run(self.arecall(messages, session_id))
            return text
        question = latest_user_message(messages)
        if question is None:
            return ""
        result = self.engine.recall(
            self.bank_id, message_text(question), **self._recall_options(question)
        )
        return self._text(result, messages, session_id)

    def _items(self, messages: Sequence[ChatMessage], session_id: str | None) -> list[MemoryItem]:
        return memory_items(
            messages, roles=self.retain_roles, names=self.speaker_names, session_id=session_id
        )

    def _recall_options(self, question: ChatMessage) -> dict[str, Any]:
        try:
            # "what did I say yesterday?" is about the question's day, not today
            now = given_timestamp(question, "message")
        except InvalidRequestError:
            now = None
        return {"max_tokens": self.max_tokens, "budget": self.budget, "query_timestamp": now}

    def _text(
        self, result: RecallResult, messages: Sequence[ChatMessage], session_id: str | None
    ) -> str:
        seen = visible_ids(
            messages, roles=self.retain_roles, names=self.speaker_names, session_id=session_id
        )
        kept = [memory for memory in result.memories if memory.id not in seen]
        if not kept:
            return ""
        text = format_recall(
            result.model_copy(update={"memories": kept, "chunks": []}),
            max_tokens=self.max_tokens,
            max_chunk_tokens=0,
        )
        # format_recall says "nothing found" in words when no line fits: no memory to give
        return text if memory_line(kept[0]) in text else ""
