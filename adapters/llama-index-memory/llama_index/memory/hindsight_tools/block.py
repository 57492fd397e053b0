"""``HindsightMemoryBlock``: a hindsight-tools bank as a block of llama-index's ``Memory``."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field
from llama_index.core.memory import BaseMemoryBlock
from llama_index.core.utils import get_tokenizer
from llama_index.memory.hindsight_tools.bank import BankOptions


class HindsightMemoryBlock(BankOptions, BaseMemoryBlock[str]):
    """Long-term memory for ``Memory(memory_blocks=[...])``.

    ``Memory`` puts here the messages it flushes out of its short-term history: each one
    becomes a memory of ``bank_id`` (dated by ``additional_kwargs["timestamp"]``, else now;
    role and speaker in its context and metadata). On ``get`` the block recalls for the
    latest user message and gives the memories as text within ``max_tokens``, best first.
    Everything runs on the engine's async twin.
    """

    name: str = Field(default="hindsight_memory", description="The block's name.")
    description: str | None = Field(
        default="Memories recalled from a hindsight-tools bank, best first."
    )

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        session_id = block_kwargs.get("session_id")
        return await self.arecall(
            messages or [], session_id if isinstance(session_id, str) else None
        )

    async def _aput(self, messages: list[ChatMessage]) -> None:
        await self.aretain(messages)

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop the worst-ranked memories (the last lines) until enough tokens are saved."""
        # Memory counts a block with the same tokenizer unless given another one
        count = get_tokenizer()
        lines = content.split("\n")
        header, memories = lines[:1], lines[1:]
        saved = 0
        while memories and saved < tokens_to_truncate:
            saved += len(count(memories.pop() + "\n"))
        return "\n".join(header + memories) if memories else None
