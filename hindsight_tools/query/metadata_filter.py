"""The metadata filter grammar: a MongoDB-style filter checked and parsed into a small tree.

    {"team.name": "core", "priority": {"$gte": 2}, "$or": [{"archived": {"$ne": true}}, ...]}

Keys of a filter object are AND-ed. A key is a field path (dots step into nested objects)
or a logical operator: ``$and`` and ``$or`` take a non-empty list of filters, ``$not`` one
filter. A field's value is either an operator object (every key starting with ``$``) or a
plain value, which means ``$eq``. The field operators:

=============  ===================================================================
``$eq``        equal (JSON equality: ``1`` equals ``1.0``; objects by content)
``$ne``        not equal; a missing field matches
``$gt`` …      ``$gt $gte $lt $lte``: a number against numbers, a string against
               strings (by code point); a field of another type, or missing, never
               matches
``$in``        equal to one of a list; ``$nin``: to none of it (a missing field
               matches)
``$exists``    ``true``: the field is there (``null`` counts); ``false``: it isn't
``$contains``  the field is an array that holds the value
=============  ===================================================================

These are MongoDB's semantics, with one simplification: ``$eq`` compares the whole value,
so an array field equals only an array (use ``$contains`` for membership). As in MongoDB,
``{"f": null}`` matches a field that is ``null`` or missing.

Everything here is pure; :mod:`hindsight_tools.recall.arms.filters` turns the tree into SQL.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hindsight_tools.errors import FieldProblem, InvalidRequestError

FieldOperator = Literal[
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$contains"
]
FIELD_OPERATORS: tuple[FieldOperator, ...] = (
    "$eq",
    "$ne",
    "$gt",
    "$gte",
    "$lt",
    "$lte",
    "$in",
    "$nin",
    "$exists",
    "$contains",
)
LOGICAL_OPERATORS = ("$and", "$or", "$not")
COMPARISONS = ("$gt", "$gte", "$lt", "$lte")

# A filter is written by an application or a model, not generated: these bounds are far
# above any real one and keep a hostile filter from costing more than a refusal.
MAX_CONDITIONS = 100
MAX_DEPTH = 10
MAX_LIST = 1000
MAX_STRING_CHARS = 10_000


@dataclass(frozen=True)
class Condition:
    """One field operator applied to the field at ``path``."""

    path: tuple[str, ...]
    op: FieldOperator
    value: Any


@dataclass(frozen=True)
class AllOf:
    parts: tuple[FilterNode, ...]


@dataclass(frozen=True)
class AnyOf:
    parts: tuple[FilterNode, ...]


@dataclass(frozen=True)
class Not:
    part: FilterNode


FilterNode = Condition | AllOf | AnyOf | Not

_OPERATOR_LIST = ", ".join((*FIELD_OPERATORS, *LOGICAL_OPERATORS))


def parse_filter(raw: object, field: str = "metadata_filter") -> FilterNode:
    """The tree of ``raw``; an :class:`InvalidRequestError` naming the path at fault (as
    ``metadata_filter.team.name.$gt``) and what is allowed there."""
    parser = _Parser(field)
    node = parser.filter(raw, field, 1)
    return node


class _Parser:
    def __init__(self, field: str) -> None:
        self.field = field
        self.conditions = 0

    def fail(self, where: str, message: str) -> InvalidRequestError:
        return InvalidRequestError([FieldProblem(where, message)])

    def filter(self, raw: object, where: str, depth: int) -> FilterNode:
        if depth > MAX_DEPTH:
            raise self.fail(where, f"nests deeper than {MAX_DEPTH} levels")
        if not isinstance(raw, Mapping):
            raise self.fail(where, f"must be an object of field conditions, got {_kind(raw)}")
        parts: list[FilterNode] = []
        for key, value in raw.items():
            if not isinstance(key, str):
                raise self.fail(where, f"keys must be strings, got {_kind(key)}")
            here = f"{where}.{key}"
            if key in ("$and", "$or"):
                parts.append(self.logical(key, value, here, depth))
            elif key == "$not":
                parts.append(Not(self.filter(value, here, depth + 1)))
            elif key.startswith("$"):
                raise self.fail(
                    here,
                    f"unknown operator {key!r}; at this level use a field path or one of "
                    + ", ".join(LOGICAL_OPERATORS),
                )
            else:
                parts.append(self.field_conditions(_path(key, here, self), value, here, depth))
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def logical(self, op: str, value: object, where: str, depth: int) -> FilterNode:
        if not isinstance(value, list) or not value:
            raise self.fail(where, f"{op} takes a non-empty list of filters, got {_kind(value)}")
        if len(value) > MAX_LIST:
            raise self.fail(where, f"{op} takes at most {MAX_LIST} filters")
        parts = tuple(self.filter(part, f"{where}[{i}]", depth + 1) for i, part in enumerate(value))
        return AllOf(parts) if op == "$and" else AnyOf(parts)

    def field_conditions(
        self, path: tuple[str, ...], value: object, where: str, depth: int
    ) -> FilterNode:
        if isinstance(value, Mapping) and any(
            isinstance(k, str) and k.startswith("$") for k in value
        ):
            if not all(isinstance(k, str) and k.startswith("$") for k in value):
                raise self.fail(
                    where,
                    "mixes operators and plain keys; write either operators "
                    f"({', '.join(FIELD_OPERATORS)}) or a value to compare with",
                )
            parts: list[FilterNode] = []
            for op, operand in value.items():
                here = f"{where}.{op}"
                if op == "$not":
                    inner = self.field_conditions(path, operand, here, depth + 1)
                    parts.append(Not(inner))
                elif op in FIELD_OPERATORS:
                    parts.append(self.condition(path, op, operand, here))
                else:
                    raise self.fail(
                        here,
                        f"unknown operator {op!r}; a field takes "
                        + ", ".join((*FIELD_OPERATORS, "$not")),
                    )
            return parts[0] if len(parts) == 1 else AllOf(tuple(parts))
        return self.condition(path, "$eq", value, where)

    def condition(self, path: tuple[str, ...], op: str, operand: object, where: str) -> Condition:
        self.conditions += 1
        if self.conditions > MAX_CONDITIONS:
            raise self.fail(self.field, f"has more than {MAX_CONDITIONS} conditions")
        _json_value(operand, where, self)
        if op in COMPARISONS:
            if isinstance(operand, bool) or not isinstance(operand, (int, float, str)):
                raise self.fail(where, f"{op} takes a number or a string, got {_kind(operand)}")
        elif op in ("$in", "$nin"):
            if not isinstance(operand, list):
                raise self.fail(where, f"{op} takes a list of values, got {_kind(operand)}")
            if len(operand) > MAX_LIST:
                raise self.fail(where, f"{op} takes at most {MAX_LIST} values")
        elif op == "$exists" and not isinstance(operand, bool):
            raise self.fail(where, f"$exists takes true or false, got {_kind(operand)}")
        return Condition(path, op, operand)  # type: ignore[arg-type]


def _path(key: str, where: str, parser: _Parser) -> tuple[str, ...]:
    if "\x00" in key:
        raise parser.fail(where, "a field path must not contain NUL characters")
    if len(key) > MAX_STRING_CHARS:
        raise parser.fail(where, f"a field path has at most {MAX_STRING_CHARS} characters")
    parts = tuple(key.split("."))
    if any(not part for part in parts):
        raise parser.fail(where, "a field path is names joined by dots (team.name); no empty names")
    return parts


def _json_value(value: object, where: str, parser: _Parser) -> None:
    """Refuse what JSON (as PostgreSQL stores it) can't hold, walking without recursion."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise parser.fail(where, f"a value nests deeper than {MAX_DEPTH} levels")
        if node is None or isinstance(node, bool | int):
            continue
        if isinstance(node, float):
            if not math.isfinite(node):
                raise parser.fail(where, "numbers must be finite (no NaN or infinity)")
        elif isinstance(node, str):
            if "\x00" in node:
                raise parser.fail(where, "strings must not contain NUL characters")
            if len(node) > MAX_STRING_CHARS:
                raise parser.fail(where, f"strings have at most {MAX_STRING_CHARS} characters")
        elif isinstance(node, list):
            stack.extend((item, depth + 1) for item in node)
        elif isinstance(node, Mapping):
            for key, item in node.items():
                if not isinstance(key, str) or "\x00" in key:
                    raise parser.fail(where, "object keys must be strings without NUL")
                stack.append((item, depth + 1))
        else:
            raise parser.fail(
                where,
                f"values are JSON: string, number, boolean, null, list or object, "
                f"got {_kind(node)}",
            )


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


__all__ = [
    "FIELD_OPERATORS",
    "LOGICAL_OPERATORS",
    "AllOf",
    "AnyOf",
    "Condition",
    "FilterNode",
    "Not",
    "parse_filter",
]
