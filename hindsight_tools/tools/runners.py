"""Running a tool call against an engine; every outcome, errors included, is text for the model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hindsight_tools.engine import AsyncMemoryEngine, MemoryEngine
from hindsight_tools.errors import FieldProblem, HindsightError, InvalidRequestError
from hindsight_tools.models import RecallRequest, RecallResult
from hindsight_tools.query.metadata_filter import parse_filter
from hindsight_tools.tools.schemas import (
    RECALL_TOOL_NAME,
    RETAIN_TOOL_NAME,
    RecallToolArgs,
    RetainToolArgs,
    parse_tool_arguments,
)
from hindsight_tools.tools.text import format_recall


def recall_options(
    args: RecallToolArgs, metadata_filter: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The keyword arguments of ``engine.recall`` that ``args`` sets, with the
    application's ``metadata_filter`` (never the model's to choose)."""
    options = args.model_dump(exclude={"query"}, exclude_none=True)
    if metadata_filter is not None:
        options["metadata_filter"] = metadata_filter
    return options


def check_bound_filter(metadata_filter: Mapping[str, Any] | None) -> None:
    """Raise (an :class:`InvalidRequestError` for the application, not text for the model)
    when the filter bound to a tool is malformed."""
    if metadata_filter is not None:
        parse_filter(metadata_filter)


def recall_text(
    engine: MemoryEngine,
    bank_id: str,
    args: RecallToolArgs,
    *,
    metadata_filter: Mapping[str, Any] | None = None,
) -> str:
    """Run the recall ``args`` describe and format it for a model (raises on failure)."""
    options = recall_options(args, metadata_filter)
    return _format(args, engine.recall(bank_id, args.query, **options))


async def arecall_text(
    engine: MemoryEngine | AsyncMemoryEngine,
    bank_id: str,
    args: RecallToolArgs,
    *,
    metadata_filter: Mapping[str, Any] | None = None,
) -> str:
    """:func:`recall_text` on the async engine (a sync engine's ``aio`` twin)."""
    aengine = engine.aio if isinstance(engine, MemoryEngine) else engine
    options = recall_options(args, metadata_filter)
    return _format(args, await aengine.recall(bank_id, args.query, **options))


def _format(args: RecallToolArgs, result: RecallResult) -> str:
    defaults = RecallRequest.model_fields
    return format_recall(
        result,
        max_tokens=_or(args.max_tokens, defaults["max_tokens"].default),
        max_chunk_tokens=_or(args.max_chunk_tokens, defaults["max_chunk_tokens"].default),
    )


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def retain_item(args: RetainToolArgs) -> dict[str, Any]:
    """The ``MemoryItem`` fields ``args`` sets."""
    return args.model_dump(exclude_none=True)


def tool_error_text(tool: str, error: HindsightError) -> str:
    """What a model reads when its call failed: each problem, and how to go on."""
    if isinstance(error, InvalidRequestError):
        lines = [f"Error: the {tool} call was rejected."]
        lines += [f"- {problem}" for problem in error.problems]
        lines.append(f"Fix the arguments and call {tool} again.")
        return "\n".join(lines)
    return f"Error: {tool} failed: {error}"


def run_recall_tool(
    engine: MemoryEngine,
    bank_id: str,
    arguments: Mapping[str, Any] | str,
    *,
    metadata_filter: Mapping[str, Any] | None = None,
) -> str:
    """Answer a model's ``recall`` call with text; problems come back as text, not raised.

    ``metadata_filter`` is the application's: bound to every call (say, what this user may
    see), it is not part of the tool's arguments, so the model can neither see nor widen it.
    A malformed one raises, since it is the application's mistake, not the model's.
    """
    check_bound_filter(metadata_filter)
    try:
        args = parse_tool_arguments(RecallToolArgs, arguments)
        return recall_text(engine, bank_id, args, metadata_filter=metadata_filter)
    except HindsightError as exc:
        return tool_error_text(RECALL_TOOL_NAME, exc)


async def arun_recall_tool(
    engine: MemoryEngine | AsyncMemoryEngine,
    bank_id: str,
    arguments: Mapping[str, Any] | str,
    *,
    metadata_filter: Mapping[str, Any] | None = None,
) -> str:
    """:func:`run_recall_tool` on the async engine."""
    check_bound_filter(metadata_filter)
    try:
        args = parse_tool_arguments(RecallToolArgs, arguments)
        return await arecall_text(engine, bank_id, args, metadata_filter=metadata_filter)
    except HindsightError as exc:
        return tool_error_text(RECALL_TOOL_NAME, exc)


def run_retain_tool(engine: MemoryEngine, bank_id: str, arguments: Mapping[str, Any] | str) -> str:
    """Answer a model's ``retain`` call with text: the stored id, or what was wrong."""
    try:
        item = retain_item(parse_tool_arguments(RetainToolArgs, arguments))
        return _stored(engine.retain(bank_id, [item]).ids)
    except HindsightError as exc:
        return tool_error_text(RETAIN_TOOL_NAME, exc)


async def arun_retain_tool(
    engine: MemoryEngine | AsyncMemoryEngine, bank_id: str, arguments: Mapping[str, Any] | str
) -> str:
    """:func:`run_retain_tool` on the async engine."""
    aengine = engine.aio if isinstance(engine, MemoryEngine) else engine
    try:
        item = retain_item(parse_tool_arguments(RetainToolArgs, arguments))
        return _stored((await aengine.retain(bank_id, [item])).ids)
    except HindsightError as exc:
        return tool_error_text(RETAIN_TOOL_NAME, exc)


def _stored(ids: list[str]) -> str:
    return f"Stored memory {ids[0]}."


def resolve_bank_id(bound: str | None, per_call: object) -> str:
    """The bank of one call: bound when the tool was made, or given by the run's config.

    Both given and different, or neither given, is an error: a memory tool must never
    fall back on, or silently switch to, another bank.
    """
    if per_call is not None and bound is not None and per_call != bound:
        raise InvalidRequestError(
            [
                FieldProblem(
                    "bank_id",
                    f"this tool is bound to bank {bound!r} but the call's config asks for "
                    f"{per_call!r}; bind no bank_id to choose it per call",
                )
            ]
        )
    bank_id = bound if bound is not None else per_call
    if bank_id is None:
        raise InvalidRequestError(
            [
                FieldProblem(
                    "bank_id",
                    "no bank given: pass bank_id= when constructing, or "
                    "config={'configurable': {'bank_id': ...}} per call",
                )
            ]
        )
    if not isinstance(bank_id, str):
        raise InvalidRequestError(
            [FieldProblem("bank_id", f"must be a string, not {type(bank_id).__name__}")]
        )
    return bank_id
