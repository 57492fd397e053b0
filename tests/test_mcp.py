"""``hindsight-tools mcp``: a real subprocess on stdio, driven by the MCP SDK's own client."""

from __future__ import annotations

import os
import subprocess
import sys

import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters

from hindsight_tools import MemoryEngine, RecallToolArgs, RetainToolArgs, Settings
from hindsight_tools.tools import input_schema


def text_of(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


async def test_mcp_server_round_trip(engine: MemoryEngine, settings: Settings, bank: str) -> None:
    engine.retain(bank, [{"id": "tea", "text": "Ines drinks green tea every morning"}])
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hindsight_tools.cli.commands", "mcp", "--bank", bank],
        env={**os.environ, "HINDSIGHT_API_DATA_DIR": str(settings.data_dir)},
    )
    async with Client(server, read_timeout_seconds=120) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"recall", "retain"}
        assert tools["recall"].input_schema == input_schema(RecallToolArgs)
        assert tools["retain"].input_schema == input_schema(RetainToolArgs)

        recalled = await client.call_tool("recall", {"query": "What does Ines drink?"})
        assert not recalled.is_error
        assert "- [undated] (world) Ines drinks green tea every morning" in text_of(recalled)

        stored = await client.call_tool(
            "retain", {"text": "Ines started learning the violin", "occurred_start": "2024-03-02"}
        )
        assert not stored.is_error and text_of(stored).startswith("Stored memory ")
        violin = engine.recall(bank, "Ines violin").memories[0]  # written to the same store
        assert violin.text == "Ines started learning the violin"
        assert violin.occurred_start is not None and violin.occurred_start.day == 2

        bad = await client.call_tool("recall", {"query": "tea", "budget": "max"})
        assert bad.is_error
        assert "budget: Input should be 'low', 'mid' or 'high'" in text_of(bad)
        unknown = await client.call_tool("retain", {"text": "x", "colour": "red"})
        assert unknown.is_error and "colour: unknown field" in text_of(unknown)

        with pytest.raises(MCPError, match="unknown tool 'forget'; tools: recall, retain"):
            await client.call_tool("forget", {})


def test_mcp_command_refuses_a_bad_bank(settings: Settings) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hindsight_tools.cli.commands", "mcp", "--bank", "no spaces"],
        capture_output=True,
        text=True,
        env={**os.environ, "HINDSIGHT_API_DATA_DIR": str(settings.data_dir)},
        timeout=120,
    )
    assert done.returncode == 2 and "bank_id" in done.stderr
