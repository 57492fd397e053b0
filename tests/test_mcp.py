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
        assert set(tools) == {
            "recall",
            "retain",
            "get_memories",
            "list_memories",
            "delete_memories",
        }
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

        with pytest.raises(MCPError, match="unknown tool 'forget'; tools: recall, retain, get_"):
            await client.call_tool("forget", {})

        listed = text_of(await client.call_tool("list_memories", {"limit": 10}))
        assert "- tea: [undated] (world) Ines drinks green tea every morning" in listed
        assert "violin" in text_of(await client.call_tool("get_memories", {"ids": [violin.id]}))
        gone = await client.call_tool("delete_memories", {"ids": [violin.id, "nope"]})
        assert text_of(gone) == "Deleted 1 of 2 memories."
        assert engine.get_memories(bank, [violin.id]) == []
        empty = await client.call_tool("get_memories", {"ids": []})
        assert empty.is_error and "ids:" in text_of(empty)


async def test_a_scoped_mcp_server_recalls_within_its_scope_only(
    engine: MemoryEngine, settings: Settings, bank: str
) -> None:
    engine.retain(
        bank,
        [
            {"id": "mine", "text": "Ines drinks green tea", "metadata": {"user": "ines"}},
            {"id": "theirs", "text": "Omar drinks green tea", "metadata": {"user": "omar"}},
        ],
    )
    server = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "hindsight_tools.cli.commands",
            "mcp",
            "--bank",
            bank,
            "--metadata-filter",
            '{"user": "ines"}',
        ],
        env={**os.environ, "HINDSIGHT_API_DATA_DIR": str(settings.data_dir)},
    )
    async with Client(server, read_timeout_seconds=120) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == {"recall", "retain"}  # management could reach past the scope
        recalled = text_of(await client.call_tool("recall", {"query": "Who drinks green tea?"}))
        assert "Ines drinks green tea" in recalled and "Omar" not in recalled
        with pytest.raises(MCPError, match="unknown tool 'list_memories'"):
            await client.call_tool("list_memories", {})


def test_mcp_command_refuses_a_bad_bank(settings: Settings) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hindsight_tools.cli.commands", "mcp", "--bank", "no spaces"],
        capture_output=True,
        text=True,
        env={**os.environ, "HINDSIGHT_API_DATA_DIR": str(settings.data_dir)},
        timeout=120,
    )
    assert done.returncode == 2 and "bank_id" in done.stderr
