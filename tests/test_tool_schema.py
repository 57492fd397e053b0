"""The tool schemas are what OpenAI (strict mode) and Anthropic take, checked with their SDKs.

No network: each SDK sends its request to an httpx2 mock transport that records the body.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import jsonschema
import openai
import pytest
from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.shared_params import FunctionDefinition
from pydantic import TypeAdapter

from hindsight_tools import RecallToolArgs, recall_tool_schema, retain_tool_schema
from hindsight_tools.tools import input_schema, parse_tool_arguments, tool_schema

# keywords OpenAI's strict mode supports (structured outputs' JSON Schema subset)
STRICT_KEYWORDS = {
    "type", "description", "properties", "required", "additionalProperties", "items",
    "enum", "anyOf", "minimum", "maximum", "format", "pattern", "$defs", "$ref",
}  # fmt: skip


def subschemas(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield schema
    for prop in schema.get("properties", {}).values():
        yield from subschemas(prop)
    if isinstance(schema.get("items"), dict):
        yield from subschemas(schema["items"])


@pytest.mark.parametrize("name", ["recall", "retain"])
def test_openai_schema_is_valid_in_strict_mode(name: str) -> None:
    tool = tool_schema(name, "openai")
    assert tool["type"] == "function" and tool["function"]["strict"] is True
    parameters = tool["function"]["parameters"]
    jsonschema.Draft202012Validator.check_schema(parameters)
    assert parameters["type"] == "object"
    for sub in subschemas(parameters):
        assert set(sub) <= STRICT_KEYWORDS, set(sub) - STRICT_KEYWORDS
        if sub.get("type") == "object":
            assert sub["additionalProperties"] is False
            assert sorted(sub["required"]) == sorted(sub["properties"])
    for field, prop in parameters["properties"].items():
        assert len(prop["description"]) > 20, field  # described for a model
    TypeAdapter(ChatCompletionFunctionToolParam).validate_python(tool, strict=True)
    # TypedDicts let unknown keys through: check those against the SDK's field names
    assert set(tool) <= set(ChatCompletionFunctionToolParam.__annotations__)
    assert set(tool["function"]) <= set(FunctionDefinition.__annotations__)


def test_optional_fields_are_nullable_and_only_query_is_needed() -> None:
    parameters = recall_tool_schema("openai")["function"]["parameters"]
    assert parameters["properties"]["query"]["type"] == "string"
    for field in set(RecallToolArgs.model_fields) - {"query"}:
        assert "null" in parameters["properties"][field]["type"], field
    assert parameters["properties"]["budget"]["enum"] == ["low", "mid", "high", None]
    validator = jsonschema.Draft202012Validator(parameters)
    every_field_null = {name: None for name in parameters["properties"]} | {"query": "x"}
    validator.validate(every_field_null)  # what a strict-mode model sends
    assert not validator.is_valid({"query": "x"})  # strict: every property present
    assert not validator.is_valid(every_field_null | {"budget": "max"})
    assert not validator.is_valid(every_field_null | {"max_tokens": -1})
    assert not validator.is_valid(every_field_null | {"colour": "red"})
    # and what the schema accepts, the runner accepts
    assert parse_tool_arguments(RecallToolArgs, json.dumps(every_field_null)).query == "x"


def test_anthropic_schema() -> None:
    tool = recall_tool_schema("anthropic")
    assert set(tool) == {"name", "description", "input_schema"}
    assert tool["input_schema"] == input_schema(RecallToolArgs)
    assert tool["input_schema"]["required"] == ["query"]
    jsonschema.Draft202012Validator.check_schema(tool["input_schema"])
    TypeAdapter(ToolParam).validate_python(tool, strict=True)
    assert set(tool) <= set(ToolParam.__annotations__)
    assert retain_tool_schema("anthropic")["input_schema"]["required"] == ["text"]


def test_unknown_provider_and_tool_are_rejected() -> None:
    with pytest.raises(ValueError, match="provider: 'gemini' is not supported; use 'openai'"):
        recall_tool_schema("gemini")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'forget' is not a tool; use one of recall, retain"):
        tool_schema("forget", "openai")


class Recorder:
    """An httpx2 (the SDKs' HTTP client) transport: keeps request bodies, answers canned."""

    def __init__(self, response: dict[str, Any]) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.response = response

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=self.response)


def test_the_openai_sdk_sends_the_schema_and_hands_back_arguments_we_run() -> None:
    recorder = Recorder(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-test",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {
                                    "name": "recall",
                                    "arguments": '{"query": "Alice\'s job", "budget": null}',
                                },
                            }
                        ],
                    },
                }
            ],
        }
    )
    client = openai.OpenAI(
        api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(recorder))
    )
    with client:
        completion = client.chat.completions.create(
            model="gpt-test",
            messages=[{"role": "user", "content": "Where does Alice work?"}],
            tools=[recall_tool_schema("openai")],  # type: ignore[list-item]
        )
    assert recorder.bodies[0]["tools"] == [recall_tool_schema("openai")]
    call = completion.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert isinstance(call, openai.types.chat.ChatCompletionMessageFunctionToolCall)
    args = parse_tool_arguments(RecallToolArgs, call.function.arguments)
    assert args.query == "Alice's job" and args.budget is None


def test_the_anthropic_sdk_sends_the_schema_and_hands_back_input_we_run() -> None:
    recorder = Recorder(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "recall",
                    "input": {"query": "Alice's job", "types": ["world"]},
                }
            ],
        }
    )
    client = anthropic.Anthropic(
        api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(recorder))
    )
    with client:
        message = client.messages.create(
            model="claude-test",
            max_tokens=256,
            messages=[{"role": "user", "content": "Where does Alice work?"}],
            tools=[recall_tool_schema("anthropic")],  # type: ignore[list-item]
        )
    assert recorder.bodies[0]["tools"] == [recall_tool_schema("anthropic")]
    block = message.content[0]
    assert block.type == "tool_use"
    args = parse_tool_arguments(RecallToolArgs, block.input)
    assert args.types == ["world"]
