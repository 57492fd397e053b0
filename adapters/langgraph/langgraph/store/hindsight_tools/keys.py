"""Where a store item lives in a bank: its memory id, tags and metadata.

A LangGraph item is ``(namespace, key) -> value``. It becomes one memory whose metadata
holds the namespace, key and value exactly, whose id is derived from ``(namespace, key)``
(so a get is a lookup by id and a put an upsert), and whose tags name every prefix of the
namespace (so a search under a prefix is a tag filter inside every recall arm) and the
namespace itself (so ``list_namespaces`` reads the bank's tags, not its memories).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from langgraph.store.base import InvalidNamespaceError, Item

PREFIX_TAG = "lg-prefix:"
NAMESPACE_TAG = "lg-namespace:"
# A tag holds at most 256 characters; labels never contain a period, so joining them with
# one is unambiguous.
MAX_NAMESPACE_CHARS = 256 - len(NAMESPACE_TAG)
MAX_ID_CHARS = 256


def dotted(namespace: Sequence[str]) -> str:
    return ".".join(namespace)


def prefix_tag(prefix: Sequence[str]) -> str:
    """The tag every item under ``prefix`` carries (the empty prefix: every item)."""
    return PREFIX_TAG + dotted(prefix)


def namespace_tags(namespace: tuple[str, ...]) -> list[str]:
    text = dotted(namespace)
    if len(text) > MAX_NAMESPACE_CHARS:
        raise InvalidNamespaceError(
            f"Namespace {namespace} is {len(text)} characters joined with periods; "
            f"HindsightStore keeps namespaces of at most {MAX_NAMESPACE_CHARS}."
        )
    return [prefix_tag(namespace[:depth]) for depth in range(len(namespace) + 1)] + [
        NAMESPACE_TAG + text
    ]


def namespace_of_tag(tag: str) -> tuple[str, ...]:
    return tuple(tag.removeprefix(NAMESPACE_TAG).split("."))


def memory_id(namespace: tuple[str, ...], key: str) -> str:
    """Readable when it can be (the JSON of the path), else a digest of it: both are
    unambiguous, and they never collide since only the first starts with ``[``."""
    path = json.dumps([*namespace, key], ensure_ascii=False)
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        path = ""  # an unpaired surrogate: PostgreSQL text can't hold it
    if path and len(path) <= MAX_ID_CHARS:
        return path
    exact = json.dumps([*namespace, key], ensure_ascii=True)
    return "sha256:" + hashlib.sha256(exact.encode()).hexdigest()


def metadata(
    namespace: tuple[str, ...], key: str, value: Mapping[str, Any], indexed: bool
) -> dict[str, Any]:
    return {"namespace": list(namespace), "key": key, "value": dict(value), "indexed": indexed}


def item_fields(
    meta: Mapping[str, Any], created_at: datetime, updated_at: datetime
) -> dict[str, Any] | None:
    """An item's fields from a memory's metadata; ``None`` for a memory the store didn't
    write (a bank may hold other memories too)."""
    namespace, key, value = meta.get("namespace"), meta.get("key"), meta.get("value")
    if not isinstance(namespace, list) or not isinstance(key, str) or not isinstance(value, dict):
        return None
    return {
        "namespace": tuple(namespace),
        "key": key,
        "value": value,
        "created_at": created_at,
        "updated_at": updated_at,
    }


def to_item(meta: Mapping[str, Any], created_at: datetime, updated_at: datetime) -> Item | None:
    fields = item_fields(meta, created_at, updated_at)
    return None if fields is None else Item(**fields)
