"""The tools' arguments as pydantic models, their JSON schemas for OpenAI and Anthropic, and
the parsing of what a model sent into them, with errors that name each bad field."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from hindsight_tools.errors import FieldProblem, InvalidRequestError
from hindsight_tools.models import (
    Budget,
    FactType,
    NonBlankText,
    PgText,
    TagsMatch,
    Timestamp,
)
from hindsight_tools.validation import problems_from_pydantic

Provider = Literal["openai", "anthropic"]
ArgsT = TypeVar("ArgsT", bound=BaseModel)

RECALL_TOOL_NAME = "recall"
RECALL_TOOL_DESCRIPTION = (
    "Search long-term memory for facts, events and experiences relevant to a question. "
    "Use it before answering anything that depends on what was said or learned earlier "
    "(people, preferences, plans, past events, dates). Returns the matching memories, best "
    "first, one per line as: date, fact type, text. Only `query` is needed; leave the other "
    "fields null unless you have a reason to change them."
)
RETAIN_TOOL_NAME = "retain"
RETAIN_TOOL_DESCRIPTION = (
    "Store one memory (a fact, an event or an experience) in long-term memory so that a later "
    "recall can find it. Write it as one self-contained sentence that names who and what; "
    "give the date it happened when known."
)

_NonNegative = Annotated[StrictInt, Field(ge=0)]


class RecallToolArgs(BaseModel):
    """The arguments of the ``recall`` tool; ``None`` means the engine's default."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="recall")

    query: NonBlankText = Field(
        description="The question or topic to search memory for, in natural language, e.g. "
        "'Where does Alice work?'. Names, places and time expressions such as 'last spring' "
        "or 'in 2023' help; so does asking as the user did, 'Why did Alice leave?' or "
        "'What did Alice do after she moved?', which ranks by the time before or after the "
        "event."
    )
    budget: Budget | None = Field(
        default=None,
        description="How hard to search: 'low' (fast, fewer candidates), 'mid' (default) or "
        "'high' (slower, finds more). Use 'high' when a first recall missed something.",
    )
    max_tokens: _NonNegative | None = Field(
        default=None,
        description="Most tokens of memories to return (default 4096). Lower it to keep the "
        "answer short; 0 returns no memories (only chunks, if asked).",
    )
    types: list[FactType] | None = Field(
        default=None,
        description="Only these kinds of memory: 'world' (facts about the world and people), "
        "'experience' (what the agent itself did or was told), 'observation' (conclusions "
        "drawn from several memories). Default: all kinds.",
    )
    tags: list[PgText] | None = Field(
        default=None,
        description="Only memories with these tags (for example a user or a project); see "
        "tags_match. Default: no tag filter.",
    )
    tags_match: TagsMatch | None = Field(
        default=None,
        description="How `tags` filter: 'any' (default; shares a tag, untagged memories "
        "included), 'all' (has every tag, untagged included), 'any_strict' / 'all_strict' "
        "(same, untagged excluded), 'exact' (exactly these tags).",
    )
    include_chunks: StrictBool | None = Field(
        default=None,
        description="Also return the source text (conversation or document excerpts) the "
        "memories came from. Use it when the memories lack detail. Default false.",
    )
    max_chunk_tokens: _NonNegative | None = Field(
        default=None,
        description="Most tokens of source text when include_chunks is true (default 8192), "
        "separate from max_tokens.",
    )
    query_timestamp: Timestamp | None = Field(
        default=None,
        description="The moment the question is asked, ISO 8601 (e.g. "
        "'2024-05-01T12:00:00Z'); relative times like 'last week' are resolved against it. "
        "Default: now.",
    )
    occurred_after: Timestamp | None = Field(
        default=None,
        description="Only memories of things that happened at or after this moment, ISO 8601 "
        "(e.g. '2024-03-01'). A hard filter: undated memories are left out. To rank a period "
        "first without excluding the rest, name it in the query instead ('in March 2024').",
    )
    occurred_before: Timestamp | None = Field(
        default=None,
        description="Only memories of things that happened before this moment (exclusive), "
        "ISO 8601. With occurred_after, a range [after, before).",
    )


class MemoryIdsArgs(BaseModel):
    """The arguments of the ``get_memories`` and ``delete_memories`` tools."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="memory_ids")

    ids: list[PgText] = Field(
        min_length=1,
        max_length=1000,
        description="The ids of the memories, as recall and list_memories show them.",
    )


class ListMemoriesArgs(BaseModel):
    """The arguments of the ``list_memories`` tool: a page of a bank, oldest id first."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="list_memories")

    types: list[FactType] | None = Field(default=None, description="Only these kinds of memory.")
    tags: list[PgText] | None = Field(default=None, description="Only memories with these tags.")
    occurred_after: Timestamp | None = Field(
        default=None, description="Only what happened at or after this moment, ISO 8601."
    )
    occurred_before: Timestamp | None = Field(
        default=None, description="Only what happened before this moment, ISO 8601."
    )
    limit: StrictInt | None = Field(
        default=None, ge=1, le=1000, description="Memories per page (default 100)."
    )
    offset: StrictInt | None = Field(
        default=None, ge=0, description="How many to skip: 0, then limit, 2 × limit, …"
    )


class RetainToolArgs(BaseModel):
    """The arguments of the ``retain`` tool: one memory (a subset of ``MemoryItem``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="retain")

    text: NonBlankText = Field(
        description="The memory as one self-contained sentence, e.g. 'Alice moved to Lisbon in "
        "May 2024'."
    )
    fact_type: FactType | None = Field(
        default=None,
        description="'world' (default; facts about the world and people), 'experience' (what "
        "you did or were told), or 'observation' (a conclusion drawn from several memories).",
    )
    context: PgText | None = Field(
        default=None, description="Where the memory comes from, e.g. 'chat with Alice'."
    )
    occurred_start: Timestamp | None = Field(
        default=None, description="When it happened (ISO 8601), if known."
    )
    occurred_end: Timestamp | None = Field(
        default=None, description="When it ended (ISO 8601), for something that lasted."
    )
    tags: list[PgText] | None = Field(
        default=None, description="Labels for filtering recalls later, e.g. a user or project."
    )


_TOOLS: dict[str, tuple[str, type[BaseModel]]] = {
    RECALL_TOOL_NAME: (RECALL_TOOL_DESCRIPTION, RecallToolArgs),
    RETAIN_TOOL_NAME: (RETAIN_TOOL_DESCRIPTION, RetainToolArgs),
}


def recall_tool_schema(provider: Provider) -> dict[str, Any]:
    """The ``recall`` tool as ``provider``'s API takes it in its list of tools.

    OpenAI: ``{"type": "function", "function": {...}}`` valid in strict mode (every property
    required, optional ones nullable, no extra properties). Anthropic: ``{"name",
    "description", "input_schema"}``.
    """
    return tool_schema(RECALL_TOOL_NAME, provider)


def retain_tool_schema(provider: Provider) -> dict[str, Any]:
    """The ``retain`` tool, as :func:`recall_tool_schema`."""
    return tool_schema(RETAIN_TOOL_NAME, provider)


def tool_schema(name: str, provider: Provider) -> dict[str, Any]:
    if name not in _TOOLS:
        raise InvalidRequestError(
            [FieldProblem("name", f"{name!r} is not a tool; use one of {', '.join(_TOOLS)}")]
        )
    description, model = _TOOLS[name]
    parameters = input_schema(model)
    if provider == "openai":
        parameters["required"] = list(parameters["properties"])
        return {
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": parameters,
                "strict": True,
            },
        }
    if provider == "anthropic":
        return {"name": name, "description": description, "input_schema": parameters}
    raise InvalidRequestError(
        [FieldProblem("provider", f"{provider!r} is not supported; use 'openai' or 'anthropic'")]
    )


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema in the plain form tool APIs take.

    Optional fields become nullable types (``["string", "null"]``) rather than ``anyOf``,
    and pydantic's titles and ``null`` defaults go: OpenAI's strict mode rejects some of
    them and they only cost a model tokens.
    """
    raw = model.model_json_schema()
    return {
        "type": "object",
        "properties": {name: _plain(prop) for name, prop in raw["properties"].items()},
        "required": list(raw.get("required", [])),
        "additionalProperties": False,
    }


def _plain(prop: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in prop.items() if k not in ("title", "default", "anyOf")}
    variants = prop.get("anyOf", [])
    if len(variants) == 2 and {"type": "null"} in variants:
        (inner,) = (v for v in variants if v != {"type": "null"})
        out = {**inner, **out, "type": [inner["type"], "null"]}
        if "enum" in inner:
            out["enum"] = [*inner["enum"], None]
    if isinstance(out.get("items"), dict):
        out["items"] = {k: v for k, v in out["items"].items() if k != "title"}
    return out


def parse_tool_arguments(model: type[ArgsT], arguments: Mapping[str, Any] | str) -> ArgsT:
    """Check a model's tool arguments (a dict, or the JSON text it wrote); raise naming fields."""
    if isinstance(arguments, (str, bytes)):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            raise InvalidRequestError(
                [
                    FieldProblem(
                        "arguments",
                        f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                        "send one JSON object of the fields",
                    )
                ]
            ) from None
    if not isinstance(arguments, Mapping):
        fields = ", ".join(model.model_fields)
        raise InvalidRequestError(
            [FieldProblem("arguments", f"must be a JSON object with the fields {fields}")]
        )
    try:
        return model.model_validate(dict(arguments))
    except pydantic.ValidationError as exc:
        raise arguments_error(model, exc) from None


def arguments_error(model: type[BaseModel], error: pydantic.ValidationError) -> InvalidRequestError:
    """``model``'s validation ``error`` as problems a model can act on: field, what is allowed."""
    problems = problems_from_pydantic(error, "", model)
    hints = [_allowed(model, detail) for detail in error.errors(include_url=False)]
    return InvalidRequestError(
        [
            FieldProblem(p.location, f"{p.message}; allowed: {hint}") if hint else p
            for p, hint in zip(problems, hints, strict=True)
        ]
    )


def _allowed(model: type[BaseModel], detail: Any) -> str | None:
    """What a field takes, in words, for errors that don't already list it."""
    if detail["type"] in ("extra_forbidden", "missing", "literal_error") or not detail["loc"]:
        return None
    prop = input_schema(model)["properties"].get(detail["loc"][0])
    if prop is None:
        return None
    types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
    words = [_describe(prop, t) for t in types if t != "null"]
    if "null" in types:
        words.append("null (the default)")
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]


def _describe(prop: dict[str, Any], json_type: str) -> str:
    if "enum" in prop:
        return "one of " + ", ".join(repr(v) for v in prop["enum"] if v is not None)
    if json_type == "array":
        items = prop["items"]
        if "enum" in items:
            return "a list of " + ", ".join(repr(v) for v in items["enum"])
        return f"a list of {items['type']}s"
    if prop.get("format") == "date-time":
        return "an ISO 8601 date-time such as '2024-05-01T12:00:00Z'"
    if json_type == "integer" and "minimum" in prop:
        return f"an integer >= {prop['minimum']}"
    return {"string": "a non-empty string", "boolean": "true or false"}.get(
        json_type, f"a JSON {json_type}"
    )
