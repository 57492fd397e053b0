"""``hindsight-tools mcp --bank B``: recall and retain as MCP tools over stdio.

Built on the official ``mcp`` SDK's low-level server so that the tools advertise exactly the
JSON Schemas of :mod:`hindsight_tools.tools` and answer through the same runners: a bad
argument is a tool result with ``isError`` and a message naming the field, which the model
can act on; an unknown tool is a protocol error.
"""

from __future__ import annotations

import os
import signal
import sys
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
    RecallToolArgs,
    RetainToolArgs,
    arecall_text,
    input_schema,
    parse_tool_arguments,
    retain_item,
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


def build_server(engine: AsyncMemoryEngine, bank_id: str) -> Server[Any]:
    """An MCP server whose ``recall`` and ``retain`` tools work on ``bank_id`` of ``engine``."""
    validate_bank_id(bank_id)

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        try:
            if params.name == RECALL_TOOL_NAME:
                args = parse_tool_arguments(RecallToolArgs, arguments)
                text = await arecall_text(engine, bank_id, args)
            elif params.name == RETAIN_TOOL_NAME:
                item = retain_item(parse_tool_arguments(RetainToolArgs, arguments))
                stored = await engine.retain(bank_id, [item])
                text = f"Stored memory {stored.ids[0]}."
            else:
                names = ", ".join(tool.name for tool in TOOLS)
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


def _text(text: str, *, is_error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)


async def serve_stdio(bank_id: str) -> None:
    """Serve ``bank_id`` over stdin/stdout until the client closes the connection or the
    process gets SIGTERM."""
    async with AsyncMemoryEngine() as engine, anyio.create_task_group() as group:
        group.start_soon(_close_and_exit_on_sigterm, engine)
        async with stdio_server() as (read, write):
            server = build_server(engine, bank_id)
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


def run(bank_id: str) -> None:
    validate_bank_id(bank_id)
    anyio.run(serve_stdio, bank_id)
