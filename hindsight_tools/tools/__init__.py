"""The memory tools an LLM calls: arguments, JSON schemas for OpenAI and Anthropic, runners.

``run_recall_tool(engine, bank_id, arguments)`` takes what a model produced (a dict or the
raw JSON string) and always answers with text: the memories, or an error naming each bad
field and what is allowed, so the model can correct itself. The framework adapters (and the
MCP server) build on the same pieces: the argument models, :func:`parse_tool_arguments`,
:func:`recall_text` and :func:`tool_error_text`.
"""

from hindsight_tools.tools.runners import (
    arecall_text,
    arun_recall_tool,
    arun_retain_tool,
    check_bound_filter,
    recall_options,
    recall_text,
    resolve_bank_id,
    retain_item,
    run_recall_tool,
    run_retain_tool,
    tool_error_text,
)
from hindsight_tools.tools.schemas import (
    RECALL_TOOL_DESCRIPTION,
    RECALL_TOOL_NAME,
    RETAIN_TOOL_DESCRIPTION,
    RETAIN_TOOL_NAME,
    ListMemoriesArgs,
    MemoryIdsArgs,
    Provider,
    RecallToolArgs,
    RetainToolArgs,
    arguments_error,
    input_schema,
    parse_tool_arguments,
    recall_tool_schema,
    retain_tool_schema,
    tool_schema,
)
from hindsight_tools.tools.text import (
    chunk_texts,
    format_recall,
    memory_line,
    memory_metadata,
    stored_lines,
)

__all__ = [
    "RECALL_TOOL_DESCRIPTION",
    "RECALL_TOOL_NAME",
    "RETAIN_TOOL_DESCRIPTION",
    "RETAIN_TOOL_NAME",
    "ListMemoriesArgs",
    "MemoryIdsArgs",
    "Provider",
    "RecallToolArgs",
    "RetainToolArgs",
    "arecall_text",
    "arguments_error",
    "arun_recall_tool",
    "arun_retain_tool",
    "check_bound_filter",
    "chunk_texts",
    "format_recall",
    "input_schema",
    "memory_line",
    "memory_metadata",
    "parse_tool_arguments",
    "recall_options",
    "recall_text",
    "recall_tool_schema",
    "resolve_bank_id",
    "retain_item",
    "retain_tool_schema",
    "run_recall_tool",
    "run_retain_tool",
    "stored_lines",
    "tool_error_text",
    "tool_schema",
]
