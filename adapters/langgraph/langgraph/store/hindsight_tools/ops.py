"""A batch of LangGraph operations as a program of engine calls, written once for both
``batch`` and ``abatch``.

:func:`run_batch` yields each :class:`Call` (an engine method and its arguments) and is sent
its result; :mod:`langgraph.store.hindsight_tools.store` drives it on the sync engine or
awaits it on the async one. The reference's batch semantics hold: results in input order,
every read sees the store as it was before the batch's writes, and several puts to one
key keep the last. The puts of a batch are one transaction, its deletes another.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)
from langgraph.store.hindsight_tools import keys, namespaces
from langgraph.store.hindsight_tools.filters import all_of, metadata_filter
from pydantic import ValidationError

from hindsight_tools import MemoryItem, RecallResult, StoredMemory

Budget = Literal["low", "mid", "high"]
# list_memories pages hold at most this many
PAGE = 1000


@dataclass(frozen=True)
class Call:
    """One engine method call: ``getattr(engine, method)(bank_id, *args, **kwargs)``."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoreConfig:
    bank_id: str
    fields: tuple[str, ...] = ("$",)
    budget: Budget = "mid"
    max_tokens: int = 100_000


BatchProgram = Generator[Call, Any, list[Result]]


def run_batch(config: StoreConfig, ops: Sequence[Op]) -> BatchProgram:
    for op in ops:
        _check(op)
    results: list[Result] = [None] * len(ops)
    gets = {i: op for i, op in enumerate(ops) if isinstance(op, GetOp)}
    if gets:
        wanted = [keys.memory_id(op.namespace, op.key) for op in gets.values()]
        found: list[StoredMemory] = yield Call("get_memories", (wanted,))
        by_id = {m.id: m for m in found}
        for i, op in gets.items():
            memory = by_id.get(keys.memory_id(op.namespace, op.key))
            item = None if memory is None else _item(memory)
            # a memory with this id that another writer made is not the item
            if item is not None and (item.namespace, item.key) == (op.namespace, op.key):
                results[i] = item
    for i, op in enumerate(ops):
        if isinstance(op, SearchOp):
            results[i] = yield from _search(config, op)
        elif isinstance(op, ListNamespacesOp):
            tags: dict[str, int] = yield Call(
                "list_tags", kwargs={"prefix": namespaces.tag_prefix(op)}
            )
            results[i] = namespaces.select(op, map(keys.namespace_of_tag, tags))
    # the last put to a key wins, in the position of its first
    writes: dict[tuple[tuple[str, ...], str], PutOp] = {}
    for op in ops:
        if isinstance(op, PutOp):
            writes[(op.namespace, op.key)] = op
    items = [_memory_item(config, op) for op in writes.values() if op.value is not None]
    gone = [keys.memory_id(*k) for k, op in writes.items() if op.value is None]
    if items:
        yield Call("retain", (items,))
    if gone:
        yield Call("delete_memories", (gone,))
    return results


def _check(op: Op) -> None:
    if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
        raise ValueError(f"Unknown operation type: {type(op).__name__}")
    validate_op_namespace(op)
    if isinstance(op, PutOp):
        if op.value is not None and not op.namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        if op.value is not None and op.namespace[0] == "langgraph":
            raise InvalidNamespaceError(
                f'Root label for namespace cannot be "langgraph". Got: {op.namespace}'
            )
        if op.ttl is not None:
            raise NotImplementedError(
                "TTL is not supported by HindsightStore: memories are kept until deleted "
                "(put with ttl=None, or delete them)."
            )
    if isinstance(op, (GetOp, PutOp)) and not isinstance(op.key, str):
        raise ValueError(f"key must be a string, got {type(op.key).__name__}")


def _search(config: StoreConfig, op: SearchOp) -> Generator[Call, Any, list[SearchItem]]:
    """Without a query, a page of the items under the prefix that pass the filter, most
    recently updated first. With one, the same items, those the recall ranks first (with
    its final score) and the rest after them, unscored, as the reference returns items it
    has no vector for: a query reorders the items, it never hides one."""
    if op.limit <= 0 or op.offset < 0:
        return []
    scope = {"tags": [keys.prefix_tag(op.namespace_prefix)], "tags_match": "all_strict"}
    wanted = metadata_filter(op.filter)
    if not op.query:
        listed = yield from _listing(scope, wanted, op.offset, op.limit)
        return [_search_item(item, None) for item in listed]
    found: RecallResult = yield Call(
        "recall",
        (op.query,),
        {
            **scope,
            "metadata_filter": all_of({"indexed": True}, wanted),
            "budget": config.budget,
            "max_tokens": config.max_tokens,
        },
    )
    ranked = [m.id for m in found.memories]
    scores = {m.id: m.scores.final for m in found.memories}
    kept: list[SearchItem] = []
    page = ranked[op.offset : op.offset + op.limit]
    if page:
        # a recall carries no write times; the page's memories as stored do
        stored: list[StoredMemory] = yield Call("get_memories", (page,))
        for memory in stored:
            item = _item(memory)
            if item is not None:
                kept.append(_search_item(item, scores[memory.id]))
    if len(kept) < op.limit:
        rest = yield from _listing(
            scope,
            wanted,
            max(0, op.offset - len(ranked)),
            op.limit - len(kept),
            exclude=frozenset(ranked),
        )
        kept += [_search_item(item, None) for item in rest]
    return kept


def _listing(
    scope: Mapping[str, Any],
    wanted: Mapping[str, Any],
    skip: int,
    limit: int,
    exclude: frozenset[str] = frozenset(),
) -> Generator[Call, Any, list[Item]]:
    """``limit`` items after the first ``skip``, leaving out the memories in ``exclude``
    (which sit anywhere in the listing, so a page can't start past them)."""
    items: list[Item] = []
    offset = 0 if exclude else skip
    while len(items) < limit:
        size = PAGE if exclude else min(limit - len(items), PAGE)
        page: list[StoredMemory] = yield Call(
            "list_memories",
            kwargs={
                **scope,
                "metadata_filter": dict(wanted) or None,
                "order": "updated_at",
                "limit": size,
                "offset": offset,
            },
        )
        for memory in page:
            if memory.id in exclude:
                continue
            if skip and exclude:
                skip -= 1
                continue
            item = _item(memory)
            if item is not None and len(items) < limit:
                items.append(item)
        if len(page) < size:
            break
        offset += len(page)
    return items


def _item(memory: StoredMemory) -> Item | None:
    return keys.to_item(memory.metadata, memory.created_at, memory.updated_at)


def _search_item(item: Item, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=item.namespace,
        key=item.key,
        value=item.value,
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )


def _memory_item(config: StoreConfig, op: PutOp) -> MemoryItem:
    assert op.value is not None
    value = op.value
    text = "" if op.index is False else index_text(value, op.index or config.fields)
    indexed = bool(text.strip())
    try:
        return MemoryItem(
            id=keys.memory_id(op.namespace, op.key),
            # an item kept out of the index still needs a text; no search reaches it
            text=text if indexed else _text_safe(f"{keys.dotted(op.namespace)} {op.key}"),
            entities=None if indexed else [],
            tags=keys.namespace_tags(op.namespace),
            mentioned_at=datetime.now(UTC),
            metadata=keys.metadata(op.namespace, op.key, value, indexed),
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{_where(error['loc'])}: {error['msg']}" for error in exc.errors(include_url=False)
        )
        raise ValueError(f"cannot store {op.namespace}/{op.key!r}: {problems}") from None


def _where(location: tuple[int | str, ...]) -> str:
    # the value sits inside the memory's metadata; the caller knows it as the value
    if location[:2] == ("metadata", "value") or location[:1] == ("metadata",):
        return "value"
    return "key" if location[:1] == ("id",) else ".".join(map(str, location))


def index_text(value: Mapping[str, Any], fields: Sequence[str]) -> str:
    """The text a value is found by: each indexed field's text, one per line. The whole
    value (``$``) reads as its scalar leaves rather than as JSON, so that the keyword arm,
    the entity extractor and the cross-encoder see prose, not quotes and braces."""
    parts: list[str] = []
    for path in fields:
        if path == "$":
            parts += _leaves(value)
        else:
            parts += get_text_at_path(value, tokenize_path(path))
    return _text_safe("\n".join(p for p in parts if p.strip()))


def _text_safe(text: str) -> str:
    # The text is derived (the value keeps every character): what PostgreSQL text can't
    # hold, NUL and unpaired surrogates, becomes a space or U+FFFD instead of a refusal.
    text = text.replace("\x00", " ")
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _leaves(value: Any) -> list[str]:
    out: list[str] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, str):
            out.append(node)
        elif isinstance(node, (bool, int, float)):
            out.append(json.dumps(node))  # true, not True: as the value is written
        elif node is not None:
            out.append(str(node))  # not JSON: the value's check refuses it below
    return out
