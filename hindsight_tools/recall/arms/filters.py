"""SQL for the ``types`` / ``tags`` / ``tags_match`` filters, applied inside every arm's query.

Filtering inside the arm (not afterwards) is what lets a tag-scoped recall still fill its
budget. Each fragment refers to ``<alias>.tags`` and the ``%(tags)s`` parameter only.
"""

from __future__ import annotations

from psycopg import sql

from hindsight_tools.models import TagsMatch

_TAG_CONDITIONS: dict[TagsMatch, str] = {
    "any": "(cardinality({col}) = 0 OR {col} && %(tags)s::text[])",
    "all": "(cardinality({col}) = 0 OR {col} @> %(tags)s::text[])",
    "any_strict": "({col} && %(tags)s::text[])",
    "all_strict": "(cardinality({col}) > 0 AND {col} @> %(tags)s::text[])",
    "exact": "({col} @> %(tags)s::text[] AND {col} <@ %(tags)s::text[])",
}


def tags_condition(alias: str, tags: list[str] | None, mode: TagsMatch) -> sql.Composable:
    """A boolean SQL expression over ``alias.tags``; ``TRUE`` when there is nothing to filter.

    No tags (``None``, or an empty list outside ``exact``) means no filter; ``exact`` with an
    empty list keeps only untagged memories, as docs/design.md (Recall request) says.
    """
    if tags is None or (not tags and mode != "exact"):
        return sql.SQL("TRUE")
    column = sql.SQL("{}.tags").format(sql.Identifier(alias))
    return sql.SQL(_TAG_CONDITIONS[mode]).format(col=column)
