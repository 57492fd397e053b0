"""LangGraph's search filter, written as the engine's metadata filter over ``value``.

LangGraph compares the item's top-level value keys: a plain value is equality (a list
element by element, ``None`` also matching a missing key), a dict of ``$`` operators
(``$eq $ne $gt $gte $lt $lte``) applies each, and a plain dict descends into a nested
object. The engine's grammar has the same meaning for all of these, so the translation
only prefixes each path with ``value``; its further operators (``$in``, ``$nin``,
``$exists``, ``$contains``) pass through. Two things LangGraph compares differently are
refused or documented instead of silently differing: a key holding a period (the
engine's paths use periods) and an empty dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

VALUE = "value"


def metadata_filter(filter: Mapping[str, Any] | None) -> dict[str, Any]:
    """The engine filter for LangGraph ``filter`` (an empty one matches every item)."""
    if not filter:
        return {}
    conditions: dict[str, Any] = {}
    _descend(filter, (VALUE,), conditions)
    return conditions


def _descend(filter: Mapping[str, Any], path: tuple[str, ...], out: dict[str, Any]) -> None:
    for key, wanted in filter.items():
        if not isinstance(key, str) or not key or "." in key or key.startswith("$"):
            where = ".".join((*path[1:], str(key))) or repr(key)
            raise ValueError(
                f"filter key {where!r}: HindsightStore filters on value keys that are "
                "non-empty strings without periods, not starting with '$'"
            )
        here = (*path, key)
        if isinstance(wanted, Mapping) and any(str(k).startswith("$") for k in wanted):
            out[".".join(here)] = dict(wanted)
        elif isinstance(wanted, Mapping):
            if not wanted:
                raise ValueError(
                    f"filter key {'.'.join(here[1:])!r}: an empty object would match any "
                    "object there; name the nested keys to compare"
                )
            _descend(wanted, here, out)
        else:
            out[".".join(here)] = {"$eq": wanted}


def all_of(*filters: Mapping[str, Any]) -> dict[str, Any]:
    parts = [dict(f) for f in filters if f]
    if not parts:
        return {}
    return parts[0] if len(parts) == 1 else {"$and": parts}
