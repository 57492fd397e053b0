"""Turning caller input into checked models, with errors that say where and what is allowed."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import pydantic

from hindsight_tools.errors import FieldProblem, InvalidRequestError
from hindsight_tools.models import MemoryItem
from hindsight_tools.settings import Settings

BANK_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}")
BANK_ID_RULE = "1 to 128 characters: letters, digits and _ . : @ -, starting with a letter or digit"
# Fixed bounds that keep every write within what PostgreSQL can index (a tsvector is at most
# 1 MB) and every recall quick (chunks are counted in tokens on each recall that returns them).
MAX_CHUNK_CHARS = 100_000
MAX_ENTITIES_PER_ITEM = 256


def validate_bank_id(bank_id: object) -> str:
    """Return ``bank_id`` if it is a valid bank id, else raise naming the rule."""
    if not isinstance(bank_id, str) or not BANK_ID_PATTERN.fullmatch(bank_id):
        raise InvalidRequestError(
            [FieldProblem("bank_id", f"{bank_id!r} is not a valid bank id; use {BANK_ID_RULE}")]
        )
    return bank_id


MAX_IDS_PER_CALL = 10_000


def validate_ids(ids: object, field: str = "ids") -> list[str]:
    """A list of memory ids (strings without NUL, at most ``MAX_IDS_PER_CALL``), else raise."""
    if isinstance(ids, str | bytes) or not isinstance(ids, list | tuple):
        raise InvalidRequestError(
            [
                FieldProblem(
                    field, f"must be a list of memory ids (strings), got {type(ids).__name__}"
                )
            ]
        )
    if len(ids) > MAX_IDS_PER_CALL:
        raise InvalidRequestError(
            [FieldProblem(field, f"has {len(ids)} ids; at most {MAX_IDS_PER_CALL} per call")]
        )
    problems = [
        FieldProblem(f"{field}[{i}]", f"must be a string without NUL characters, got {value!r}")
        for i, value in enumerate(ids)
        if not isinstance(value, str) or "\x00" in value
    ]
    if problems:
        raise InvalidRequestError(problems)
    return list(ids)


def problems_from_pydantic(
    error: pydantic.ValidationError, prefix: str, model: type[pydantic.BaseModel]
) -> list[FieldProblem]:
    """Rephrase pydantic's errors: a dotted location and a message that lists what is allowed."""
    problems = []
    for detail in error.errors(include_url=False):
        location = ".".join(
            f"[{part}]" if isinstance(part, int) else str(part) for part in detail["loc"]
        ).replace(".[", "[")
        location = f"{prefix}.{location}" if prefix and location else prefix or location
        message = detail["msg"].removeprefix("Value error, ")
        if detail["type"] == "extra_forbidden":
            message = f"unknown field; allowed fields are {', '.join(sorted(model.model_fields))}"
        elif detail["type"] == "missing":
            message = "is required"
        problems.append(FieldProblem(location, message))
    return problems


def refuse_single_item(items: object) -> None:
    """A lone item (or a string) where a sequence of items belongs is refused by name:
    iterating it would turn its keys or characters into items."""
    if isinstance(items, (str, bytes, Mapping)):
        raise InvalidRequestError(
            [FieldProblem("items", "must be a list of MemoryItem or dicts, not a single item")]
        )


def parse_items(
    items: Iterable[MemoryItem | Mapping[str, Any]],
    settings: Settings,
    first_index: int = 0,
    unique_ids: bool = True,
) -> list[MemoryItem]:
    """Check every item of a retain call (or of one batch of an import, whose first item is
    ``items[first_index]`` and whose repeated ids are the import's to skip); raise once with
    all problems, before any write."""
    refuse_single_item(items)
    parsed: list[MemoryItem] = []
    problems: list[FieldProblem] = []
    seen_ids: dict[str, int] = {}
    for index, raw in enumerate(items, start=first_index):
        where = f"items[{index}]"
        if index - first_index >= settings.retain_max_items:
            problems.append(
                FieldProblem("items", f"at most {settings.retain_max_items} items per retain call")
            )
            break
        try:
            item = raw if isinstance(raw, MemoryItem) else MemoryItem.model_validate(raw)
        except pydantic.ValidationError as exc:
            problems.extend(problems_from_pydantic(exc, where, MemoryItem))
            continue
        problems.extend(_limit_problems(item, where, settings))
        if item.id is not None and unique_ids:
            if item.id in seen_ids:
                problems.append(
                    FieldProblem(
                        f"{where}.id",
                        f"{item.id!r} repeats items[{seen_ids[item.id]}].id; ids must be "
                        "unique within one retain call",
                    )
                )
            seen_ids.setdefault(item.id, index)
        parsed.append(item)
    if problems:
        raise InvalidRequestError(problems)
    if not parsed:
        raise InvalidRequestError([FieldProblem("items", "must hold at least one item")])
    return parsed


def _limit_problems(item: MemoryItem, where: str, settings: Settings) -> list[FieldProblem]:
    text_limit = (settings.retain_max_text_chars, "HINDSIGHT_API_RETAIN_MAX_TEXT_CHARS")
    tags_limit = (settings.retain_max_tags, "HINDSIGHT_API_RETAIN_MAX_TAGS")
    checks: list[tuple[str, int, str, tuple[int, str | None]]] = [
        ("text", len(item.text), "characters", text_limit),
        ("context", len(item.context or ""), "characters", text_limit),
        ("chunk", len(item.chunk or ""), "characters", (MAX_CHUNK_CHARS, None)),
        ("entities", len(item.entities or ()), "names", (MAX_ENTITIES_PER_ITEM, None)),
        ("tags", len(item.tags), "tags", tags_limit),
    ]
    problems = []
    for field, size, unit, (limit, setting) in checks:
        if size > limit:
            verb = "is" if unit == "characters" else "has"
            hint = f" ({setting})" if setting else ""
            problems.append(
                FieldProblem(f"{where}.{field}", f"{verb} {size} {unit}; at most {limit}{hint}")
            )
    return problems
