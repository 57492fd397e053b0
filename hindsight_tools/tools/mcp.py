"""``hindsight-tools mcp --bank B``: recall and retain as MCP tools over stdio.

With no scope bound, the server also offers ``get_memories``, ``list_memories`` and
``delete_memories``, so an agent can read back, page through and forget what it stored.
``--metadata-filter`` binds a scope (a user's, a project's) to every recall; such a server
offers recall and retain only, since the management tools could reach past the scope.

Built on the official ``mcp`` SDK's low-level server so that the tools advertise exactly the
JSON Schemas of :mod:`hindsight_tools.tools` and answer through the same runners: a bad
argument is a tool result with ``isError`` and a message naming the field, which the model
can act on; an unknown tool is a protocol error.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping
from typing import Any

try:  # the optional 'mcp' extra
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError
except ImportError as exc:
    raise ImportError(
        "the MCP server needs the 'mcp' extra: pip install 'hindsight-tools[mcp]'",
        name=exc.name,
    ) from exc

from hindsight_tools import __version__
from hindsight_tools.engine import AsyncMemoryEngine
from hindsight_tools.errors import HindsightError
from hindsight_tools.tools import (
    RECALL_TOOL_DESCRIPTION,
    RECALL_TOOL_NAME,
    RETAIN_TOOL_DESCRIPTION,
    RETAIN_TOOL_NAME,
    ListMemoriesArgs,
    MemoryIdsArgs,
    RecallToolArgs,
    RetainToolArgs,
    arecall_text,
    check_bound_filter,
    input_schema,
    parse_tool_arguments,
    retain_item,
    stored_lines,
    tool_error_text,
)
from hindsight_tools.validation import validate_bank_id

TOOLS = [
    types.Tool(
        name=RECALL_TOOL_NAME,
        description=RECALL_TOOL_DESCRIPTION,
        input_schema=input_schema(RecallToolArgs),
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name=RETAIN_TOOL_NAME,
        description=RETAIN_TOOL_DESCRIPTION,
        input_schema=input_schema(RetainToolArgs),
    ),
]
MANAGEMENT_TOOLS = [
    types.Tool(
        name="get_memories",
        description="Read stored memories by id, with their dates and text.",
        input_schema=input_schema(MemoryIdsArgs),
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="list_memories",
        description="Page through the stored memories (in id order), optionally filtered by "
        "kind, tags or date; each line starts with the memory's id.",
        input_schema=input_schema(ListMemoriesArgs),
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="delete_memories",
        description="Forget memories by id (for one that is wrong or outdated: retain the "
        "correct one, then delete the old). Returns how many were deleted.",
        input_schema=input_schema(MemoryIdsArgs),
        annotations=types.ToolAnnotations(destructive_hint=True),
    ),
]


def build_server(
    engine: AsyncMemoryEngine, bank_id: str, metadata_filter: Mapping[str, Any] | None = None
) -> Server[Any]:
    """An MCP server whose tools work on ``bank_id`` of ``engine``; ``metadata_filter``
    (the application's) scopes every recall."""
    validate_bank_id(bank_id)
    check_bound_filter(metadata_filter)
    offered = TOOLS if metadata_filter is not None else [*TOOLS, *MANAGEMENT_TOOLS]

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=offered)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        try:
            if params.name == RECALL_TOOL_NAME:
                args = parse_tool_arguments(RecallToolArgs, arguments)
                text = await arecall_text(engine, bank_id, args, metadata_filter=metadata_filter)
            elif params.name == RETAIN_TOOL_NAME:
                item = retain_item(parse_tool_arguments(RetainToolArgs, arguments))
                stored = await engine.retain(bank_id, [item])
                text = f"Stored memory {stored.ids[0]}."
            elif offered is not TOOLS and params.name in _MANAGEMENT:
                text = await _manage(engine, bank_id, params.name, arguments)
            else:
                names = ", ".join(tool.name for tool in offered)
                raise MCPError(
                    types.INVALID_PARAMS, f"unknown tool {params.name!r}; tools: {names}"
                )
        except HindsightError as exc:
            return _text(tool_error_text(params.name, exc), is_error=True)
        return _text(text, is_error=False)

    return Server(
        "hindsight-tools",
        version=__version__,
        instructions=f"Long-term memory of bank {bank_id!r}: recall before answering from "
        "memory, retain what is worth remembering.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


_MANAGEMENT = {tool.name for tool in MANAGEMENT_TOOLS}


async def _manage(
    engine: AsyncMemoryEngine, bank_id: str, name: str, arguments: Mapping[str, Any]
) -> str:
    if name == "list_memories":
        page = parse_tool_arguments(ListMemoriesArgs, arguments).model_dump(exclude_none=True)
        return stored_lines(await engine.list_memories(bank_id, **page))
    ids = parse_tool_arguments(MemoryIdsArgs, arguments).ids
    if name == "get_memories":
        return stored_lines(await engine.get_memories(bank_id, ids))
    return f"Deleted {await engine.delete_memories(bank_id, ids)} of {len(ids)} memories."


def _text(text: str, *, is_error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)


async def serve_stdio(bank_id: str, metadata_filter: Mapping[str, Any] | None = None) -> None:
    """Serve ``bank_id`` over stdin/stdout until the client closes the connection or the
    process gets SIGTERM."""
    async with AsyncMemoryEngine() as engine, anyio.create_task_group() as group:
        group.start_soon(_close_and_exit_on_sigterm, engine)
        async with stdio_server() as (read, write):
            server = build_server(engine, bank_id, metadata_filter)
            await server.run(read, write, server.create_initialization_options())
        group.cancel_scope.cancel()


async def _close_and_exit_on_sigterm(engine: AsyncMemoryEngine) -> None:
    # Unwinding on SIGTERM can't work here: the thread reading stdin is stuck in read()
    # while the client holds the pipe, and leaving stdio_server waits for it. So the engine
    # is closed first (the embedded server loses its user, and stops if it was the last)
    # and the process leaves without that thread.
    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for signum in signals:
            await engine.close()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(128 + signum)


def run(bank_id: str, metadata_filter: Mapping[str, Any] | None = None) -> None:
    validate_bank_id(bank_id)
    check_bound_filter(metadata_filter)
    anyio.run(serve_stdio, bank_id, metadata_filter)
