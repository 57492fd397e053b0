"""SQL for what a recall (or a listing) may see: tags, metadata and dates, inside every query.

Filtering inside each arm's query (not afterwards) is what lets a filtered recall still fill
its budget. :func:`scope_condition` gives one boolean SQL expression over a memory row and
the parameters it binds, all named ``scope_*``; nothing from the caller is ever formatted
into the SQL text, field paths included (each name is bound as a parameter).

Metadata is stored as ``json`` (returned exactly as given); filters read its ``jsonb`` twin
``metadata_doc`` (migration 0007), which has a GIN index for ``@>`` containment. Every
metadata expression is written to be TRUE or FALSE, never NULL, so that ``NOT`` and ``$ne``
complement it exactly: a missing field is NULL in SQL and must not make a condition unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from hindsight_tools.models import MemoryScope, TagsMatch
from hindsight_tools.query.metadata_filter import (
    AllOf,
    AnyOf,
    Condition,
    FilterNode,
    Not,
    parse_filter,
)

_TAG_CONDITIONS: dict[TagsMatch, str] = {
    "any": "(cardinality({col}) = 0 OR {col} && %(scope_tags)s::text[])",
    "all": "(cardinality({col}) = 0 OR {col} @> %(scope_tags)s::text[])",
    "any_strict": "({col} && %(scope_tags)s::text[])",
    "all_strict": "(cardinality({col}) > 0 AND {col} @> %(scope_tags)s::text[])",
    "exact": "({col} @> %(scope_tags)s::text[] AND {col} <@ %(scope_tags)s::text[])",
}


def memory_span(alias: str) -> tuple[str, str]:
    """SQL text of a memory's time span for the row ``alias`` (a constant of the caller's
    query, never input): the test that it is dated, and its range.

    occurred_start..occurred_end when it has either (one alone is an instant), else the
    instant mentioned_at; least/greatest keep a reversed pair from failing. The expression
    and its IS NOT NULL are those of the GiST index of migration 0005, written out so that
    the planner can use it; the IS NOT NULL keeps undated memories out, whose range would
    be unbounded.
    """
    assert alias.isidentifier(), alias
    low = f"coalesce({alias}.occurred_start, {alias}.occurred_end, {alias}.mentioned_at)"
    high = f"coalesce({alias}.occurred_end, {alias}.occurred_start, {alias}.mentioned_at)"
    return f"{low} IS NOT NULL", f"tstzrange(least({low}, {high}), greatest({low}, {high}), '[]')"


def _dates(alias: str) -> str:
    dated, span = memory_span(alias)
    return (
        f"({dated} AND {span}"
        " && tstzrange(%(scope_after)s::timestamptz, %(scope_before)s::timestamptz, '[)'))"
    )


@dataclass(frozen=True)
class Scope:
    """The filters of a recall or a listing besides fact types; the default lets all through.

    ``occurred_after`` is inclusive, ``occurred_before`` exclusive; a memory matches when its
    time span overlaps ``[after, before)``, and an undated memory never matches a date filter.
    """

    tags: list[str] | None = None
    tags_match: TagsMatch = "any"
    metadata: FilterNode | None = None
    occurred_after: datetime | None = None
    occurred_before: datetime | None = None

    @property
    def filters_rows(self) -> bool:
        """Whether some memory could be left out (False: the condition is ``TRUE``)."""
        return (
            self._tag_filter()
            or self.metadata is not None
            or self.occurred_after is not None
            or self.occurred_before is not None
        )

    def _tag_filter(self) -> bool:
        return self.tags is not None and (bool(self.tags) or self.tags_match == "exact")


NO_SCOPE = Scope()


def request_scope(request: MemoryScope) -> Scope:
    """The scope of a recall or listing request; its metadata filter checked and parsed (an
    :class:`~hindsight_tools.errors.InvalidRequestError` naming the path at fault)."""
    return Scope(
        tags=request.tags,
        tags_match=request.tags_match,
        metadata=None if request.metadata_filter is None else parse_filter(request.metadata_filter),
        occurred_after=request.occurred_after,
        occurred_before=request.occurred_before,
    )


@dataclass
class _Params:
    values: dict[str, Any] = field(default_factory=dict)

    def bind(self, value: Any) -> sql.Composable:
        name = f"scope_m{len(self.values)}"
        self.values[name] = value
        return sql.Placeholder(name)


def scope_condition(alias: str, scope: Scope) -> tuple[sql.Composable, dict[str, Any]]:
    """A boolean SQL expression over the row ``alias`` and its parameters; ``TRUE`` and no
    parameters when ``scope`` filters nothing."""
    a = sql.Identifier(alias)
    parts: list[sql.Composable] = []
    params: dict[str, Any] = {}
    if scope._tag_filter():
        column = sql.SQL("{}.tags").format(a)
        parts.append(sql.SQL(_TAG_CONDITIONS[scope.tags_match]).format(col=column))
        params["scope_tags"] = scope.tags
    if scope.occurred_after is not None or scope.occurred_before is not None:
        parts.append(sql.SQL(_dates(alias)))
        params["scope_after"] = scope.occurred_after
        params["scope_before"] = scope.occurred_before
    if scope.metadata is not None:
        bound = _Params()
        parts.append(_node(scope.metadata, sql.SQL("{}.metadata_doc").format(a), bound))
        params.update(bound.values)
    if not parts:
        return sql.SQL("TRUE"), {}
    return sql.SQL("({})").format(sql.SQL(" AND ").join(parts)), params


def _node(node: FilterNode, doc: sql.Composable, params: _Params) -> sql.Composable:
    if isinstance(node, Condition):
        return _condition(node, doc, params)
    if isinstance(node, Not):
        return sql.SQL("(NOT {})").format(_node(node.part, doc, params))
    joiner = " AND " if isinstance(node, AllOf) else " OR "
    assert isinstance(node, AllOf | AnyOf)
    return sql.SQL("({})").format(
        sql.SQL(joiner).join(_node(part, doc, params) for part in node.parts)
    )


def _condition(c: Condition, doc: sql.Composable, params: _Params) -> sql.Composable:
    # One text key at a time: ``->`` with a text key reads an object's field and gives NULL
    # on anything else, so a path never indexes into an array ("a.0" is a field named "0").
    x: sql.Composable = doc
    for name in c.path:
        x = sql.SQL("({} -> {}::text)").format(x, params.bind(name))
    if c.op == "$eq":
        return _equal(x, c.path, c.value, doc, params)
    if c.op == "$ne":
        return sql.SQL("(NOT {})").format(_equal(x, c.path, c.value, doc, params))
    if c.op in ("$in", "$nin"):
        held = _one_of(x, c.value, params)
        return held if c.op == "$in" else sql.SQL("(NOT {})").format(held)
    if c.op == "$exists":
        return sql.SQL("({} IS {} NULL)").format(x, sql.SQL("NOT" if c.value else ""))
    if c.op == "$contains":
        return sql.SQL(
            "(CASE WHEN jsonb_typeof({x}) = 'array' THEN EXISTS ("
            "SELECT 1 FROM jsonb_array_elements({x}) AS e(v) WHERE e.v = {v}::jsonb)"
            " ELSE false END)"
        ).format(x=x, v=params.bind(Jsonb(c.value)))
    operator = sql.SQL({"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[c.op])
    if isinstance(c.value, str):
        # by code point, as Python compares strings, whatever the database's collation
        return sql.SQL(
            "coalesce(jsonb_typeof({x}) = 'string'"
            ' AND ({x} #>> \'{{}}\') COLLATE "C" {op} {v}::text COLLATE "C", false)'
        ).format(x=x, op=operator, v=params.bind(c.value))
    return sql.SQL("coalesce(jsonb_typeof({x}) = 'number' AND {x} {op} {v}::jsonb, false)").format(
        x=x, op=operator, v=params.bind(Jsonb(c.value))
    )


def _equal(
    x: sql.Composable, path: tuple[str, ...], value: Any, doc: sql.Composable, params: _Params
) -> sql.Composable:
    if value is None:  # as in MongoDB: null or missing
        return sql.SQL("({x} IS NULL OR {x} = 'null'::jsonb)").format(x=x)
    exact = sql.SQL("coalesce({x} = {v}::jsonb, false)").format(x=x, v=params.bind(Jsonb(value)))
    if isinstance(value, dict | list):
        return exact
    # The containment test is what the GIN index answers; equality keeps the match exact
    # (containment would also accept an array holding the value at the path).
    nested: Any = value
    for name in reversed(path):
        nested = {name: nested}
    return sql.SQL("({doc} @> {c}::jsonb AND {exact})").format(
        doc=doc, c=params.bind(Jsonb(nested)), exact=exact
    )


def _one_of(x: sql.Composable, values: list[Any], params: _Params) -> sql.Composable:
    present = [v for v in values if v is not None]
    parts = []
    if present:
        parts.append(
            sql.SQL("coalesce({x} = ANY({v}::jsonb[]), false)").format(
                x=x, v=params.bind([Jsonb(v) for v in present])
            )
        )
    if len(present) < len(values):  # null in the list: null or missing, as $eq null
        parts.append(sql.SQL("({x} IS NULL OR {x} = 'null'::jsonb)").format(x=x))
    if not parts:
        return sql.SQL("false")
    return sql.SQL("({})").format(sql.SQL(" OR ").join(parts))
