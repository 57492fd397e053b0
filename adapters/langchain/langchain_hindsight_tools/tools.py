"""``HindsightRecallTool``: the ``recall`` tool for LangChain agents."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForToolRun,
    CallbackManagerForToolRun,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import ArgsSchema, BaseTool, ToolException
from pydantic import ValidationError

from hindsight_tools import HindsightError, MemoryEngine, RecallToolArgs
from hindsight_tools.tools import (
    RECALL_TOOL_DESCRIPTION,
    RECALL_TOOL_NAME,
    arecall_text,
    arguments_error,
    parse_tool_arguments,
    recall_text,
    tool_error_text,
)
from langchain_hindsight_tools._bank import bank_for_call


def _invalid_arguments_text(error: ValidationError) -> str:
    return tool_error_text(RECALL_TOOL_NAME, arguments_error(RecallToolArgs, error))


class HindsightRecallTool(BaseTool):
    """The ``recall`` tool: arguments :class:`hindsight_tools.RecallToolArgs`, answer as text.

    The answer lists the memories best first (date, fact type, text; source chunks when
    asked) within ``max_tokens``. Bad arguments come back to the model as an error message
    naming each field and what it allows (the tool message has ``status="error"``), never as
    an exception in the agent loop. The bank is ``bank_id``, or the run config's
    ``configurable["bank_id"]`` when none is bound; both given and different raises.
    ``metadata_filter`` scopes every recall (say, to what this user may see); the model
    can neither see nor widen it.
    """

    name: str = RECALL_TOOL_NAME
    description: str = RECALL_TOOL_DESCRIPTION
    args_schema: ArgsSchema | None = RecallToolArgs
    handle_tool_error: bool = True
    handle_validation_error: Any = _invalid_arguments_text

    engine: MemoryEngine
    bank_id: str | None = None
    # the application's scope, bound to every call: not an argument the model sees
    metadata_filter: dict[str, Any] | None = None

    def _run(
        self,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | None = None,
        **arguments: Any,
    ) -> str:
        bank_id = bank_for_call(self.bank_id, config)
        try:
            args = parse_tool_arguments(RecallToolArgs, arguments)
            return recall_text(self.engine, bank_id, args, metadata_filter=self.metadata_filter)
        except HindsightError as exc:
            raise ToolException(tool_error_text(self.name, exc)) from exc

    async def _arun(
        self,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
        **arguments: Any,
    ) -> str:
        bank_id = bank_for_call(self.bank_id, config)
        try:
            args = parse_tool_arguments(RecallToolArgs, arguments)
            return await arecall_text(
                self.engine, bank_id, args, metadata_filter=self.metadata_filter
            )
        except HindsightError as exc:
            raise ToolException(tool_error_text(self.name, exc)) from exc
