"""Items into units, pure: final ids, entity names, document and chunk ids, and the
checks that need the whole batch (a causal link to itself)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from hindsight_tools.errors import FieldProblem, InvalidRequestError
from hindsight_tools.models import MemoryItem
from hindsight_tools.query.entities import EntityExtractor


@dataclass(frozen=True)
class PreparedItem:
    """An item ready to write: its final id, entity names and chunk id."""

    index: int
    id: str
    item: MemoryItem
    entities: tuple[str, ...]
    document_id: str | None
    chunk_id: str | None
    # where the caller counts the item (an import's position in the whole stream), for errors
    position: int


def entity_key(name: str) -> str:
    """Entities are one per bank and name, whatever the case or spacing."""
    return " ".join(name.split()).casefold()


def chunk_id_for(document_id: str, chunk_text: str) -> str:
    """Same document and text -> same chunk id, so a chunk is stored once."""
    digest = hashlib.sha256(f"{document_id}\x00{chunk_text}".encode()).hexdigest()
    return f"chunk-{digest[:32]}"


def document_id_for_chunk(chunk_text: str) -> str:
    return f"doc-{hashlib.sha256(chunk_text.encode()).hexdigest()[:32]}"


def document_of(item: MemoryItem) -> str | None:
    """The document an item belongs to: its own, or for one that brings only a chunk, the
    chunk's."""
    if item.document_id is None and item.chunk is not None:
        return document_id_for_chunk(item.chunk)
    return item.document_id


def content_id(item: MemoryItem) -> str:
    """An id from everything the item says, for an import's items that bring none: running
    the same import again finds them stored and skips them."""
    canonical = item.model_dump_json(exclude={"id"}).encode()
    return f"mem-{hashlib.sha256(canonical).hexdigest()[:32]}"


def with_content_ids(items: Sequence[MemoryItem]) -> list[MemoryItem]:
    return [
        item if item.id is not None else item.model_copy(update={"id": content_id(item)})
        for item in items
    ]


def prepare_items(
    items: Sequence[MemoryItem],
    extractor: EntityExtractor,
    positions: Sequence[int] | None = None,
) -> list[PreparedItem]:
    """``positions``: how the caller numbers the items in errors (their index by default)."""
    prepared = []
    problems = []
    for index, item in enumerate(items):
        position = index if positions is None else positions[index]
        memory_id = item.id or uuid.uuid4().hex
        for j, link in enumerate(item.causal_links):
            if link.target_id == memory_id:
                problems.append(
                    FieldProblem(
                        f"items[{position}].causal_links[{j}].target_id",
                        "points to the item itself; a causal link needs another memory's id",
                    )
                )
        names = item.entities if item.entities is not None else extractor(item.text)
        unique: dict[str, str] = {}
        for name in names:
            key = entity_key(name)
            if key:
                unique.setdefault(key, " ".join(name.split()))
        document_id = document_of(item)
        chunk_id = None
        if item.chunk is not None and document_id is not None:
            chunk_id = chunk_id_for(document_id, item.chunk)
        prepared.append(
            PreparedItem(
                index, memory_id, item, tuple(unique.values()), document_id, chunk_id, position
            )
        )
    if problems:
        raise InvalidRequestError(problems)
    return prepared
