"""``list_namespaces``: prefix and suffix conditions with ``*`` wildcards, a maximum depth,
and a page of the sorted result, as LangGraph defines them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langgraph.store.base import ListNamespacesOp, MatchCondition
from langgraph.store.hindsight_tools.keys import NAMESPACE_TAG, dotted


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"match_type {condition.match_type!r}: use 'prefix' or 'suffix'")
    return all(wanted == "*" or label == wanted for label, wanted in pairs)


def tag_prefix(op: ListNamespacesOp) -> str:
    """The literal start of the namespace tags that can match: the prefix labels before
    its first wildcard (more labels are checked exactly afterwards)."""
    for condition in op.match_conditions or ():
        if condition.match_type == "prefix":
            fixed: list[str] = []
            for label in condition.path:
                if label == "*":
                    break
                fixed.append(label)
            return NAMESPACE_TAG + dotted(fixed)
    return NAMESPACE_TAG


def select(op: ListNamespacesOp, namespaces: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
    found = [tuple(ns) for ns in namespaces]
    found = [ns for ns in found if all(_matches(c, ns) for c in op.match_conditions or ())]
    if op.max_depth is not None:
        found = sorted({ns[: op.max_depth] for ns in found})
    else:
        found = sorted(set(found))
    return found[op.offset : op.offset + op.limit]
