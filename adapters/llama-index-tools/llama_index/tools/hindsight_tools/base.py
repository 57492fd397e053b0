"""``HindsightToolSpec``: the recall and retain tools as LlamaIndex ``FunctionTool``s."""

from __future__ import annotations

from typing import Any

from llama_index.core.tools.tool_spec.base import SPEC_FUNCTION_TYPE, BaseToolSpec
from llama_index.core.tools.types import ToolMetadata

from hindsight_tools import (
    MemoryEngine,
    RecallToolArgs,
    RetainToolArgs,
    arun_recall_tool,
    arun_retain_tool,
    run_recall_tool,
    run_retain_tool,
)
from hindsight_tools.tools import (
    RECALL_TOOL_DESCRIPTION,
    RECALL_TOOL_NAME,
    RETAIN_TOOL_DESCRIPTION,
    RETAIN_TOOL_NAME,
    check_bound_filter,
)

_METADATA = {
    "recall": ToolMetadata(
        name=RECALL_TOOL_NAME, description=RECALL_TOOL_DESCRIPTION, fn_schema=RecallToolArgs
    ),
    "retain": ToolMetadata(
        name=RETAIN_TOOL_NAME, description=RETAIN_TOOL_DESCRIPTION, fn_schema=RetainToolArgs
    ),
}


class HindsightToolSpec(BaseToolSpec):
    """``recall`` and ``retain`` on one bank; ``to_tool_list()`` gives the ``FunctionTool``s.

    Their schemas are :class:`hindsight_tools.RecallToolArgs` and ``RetainToolArgs`` (the
    ones of the OpenAI and Anthropic tool schemas), and both answer with text: the memories,
    the stored id, or an error naming each bad argument and what it allows (never an
    exception for the agent to handle). Async calls run on the engine's async twin.
    """

    # BaseToolSpec declares this a plain attribute, so it can't be a ClassVar here
    spec_functions: list[SPEC_FUNCTION_TYPE] = [("recall", "arecall"), ("retain", "aretain")]  # noqa: RUF012

    def __init__(
        self,
        engine: MemoryEngine,
        bank_id: str,
        *,
        metadata_filter: dict[str, Any] | None = None,
    ) -> None:
        # the application's scope for every recall: not an argument the model sees
        check_bound_filter(metadata_filter)
        self._metadata_filter = metadata_filter
        self._engine = engine
        self._bank_id = bank_id

    def recall(self, **arguments: Any) -> str:
        """Search long-term memory (arguments: ``RecallToolArgs``)."""
        return run_recall_tool(
            self._engine, self._bank_id, arguments, metadata_filter=self._metadata_filter
        )

    async def arecall(self, **arguments: Any) -> str:
        return await arun_recall_tool(
            self._engine, self._bank_id, arguments, metadata_filter=self._metadata_filter
        )

    def retain(self, **arguments: Any) -> str:
        """Store one memory (arguments: ``RetainToolArgs``)."""
        return run_retain_tool(self._engine, self._bank_id, arguments)

    async def aretain(self, **arguments: Any) -> str:
        return await arun_retain_tool(self._engine, self._bank_id, arguments)

    def get_metadata_from_fn_name(
        self, fn_name: str, spec_functions: list[SPEC_FUNCTION_TYPE] | None = None
    ) -> ToolMetadata | None:
        # to_tool_list() asks here for each tool's name, description and schema: give the
        # shared ones instead of a schema guessed from the **arguments signature.
        return _METADATA.get(fn_name)
