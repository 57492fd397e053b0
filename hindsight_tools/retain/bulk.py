"""The bulk write path of an import: batches of new memories, rows by COPY, each batch
encoded while the one before it is written.

A retain upserts row by row; an import streams a large file whose memories are mostly new,
so each batch is copied into a transaction-local staging table and inserted from there in
one statement, keyword postings, entities and links following set-wise
(:func:`~hindsight_tools.retain.plans.derive`). A memory whose id the bank already holds is
skipped, not replaced: running an interrupted import again resumes it.

While the bank fits ``import_link_exact_max_units``, a batch's semantic and temporal links
are found in this process (:mod:`~hindsight_tools.retain.neighbours`,
:mod:`~hindsight_tools.retain.timeline`) with its encoding, beside the database writing the
batch before, and written by COPY; the write checks that the bank holds what they assumed
and otherwise finds them in SQL, as retain does.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from psycopg.types.json import Json

from hindsight_tools.encoders.embedding import Vectors
from hindsight_tools.models import ImportResult, MemoryItem
from hindsight_tools.query.entities import EntityExtractor
from hindsight_tools.retain.document_order import (
    drop_stale_readings_plan,
    positions_plan,
    stored_before_plan,
)
from hindsight_tools.retain.links import FoundLinks
from hindsight_tools.retain.neighbours import NeighbourIndex
from hindsight_tools.retain.plans import (
    BANK_STATE,
    BANK_VERSION,
    LOCK_BANK,
    HeldBank,
    bank_vectors_plan,
    derive,
    existing_ids_plan,
    write_sources,
)
from hindsight_tools.retain.reading_context import (
    Before,
    firsts_of_documents,
    last_of_documents,
    memories_before,
    stored_readings,
)
from hindsight_tools.retain.timeline import Timeline
from hindsight_tools.retain.units import (
    PreparedItem,
    document_of,
    prepare_items,
    with_content_ids,
)
from hindsight_tools.runtime.plan import Plan, Statement
from hindsight_tools.runtime.program import Blocking, Parallel, ParallelResult, Program
from hindsight_tools.settings import Settings
from hindsight_tools.store.deferred_indexes import (
    build_missing_indexes,
    drop_indexes_plan,
)

T = TypeVar("T")
# A batch's embeddings, its late-interaction vectors, and those of its memories read after
# the one before them in their document (None where none were computed).
Encoded = tuple[Vectors, list[bytes | None] | None, list[bytes | None] | None]
Encode = Callable[[Sequence[MemoryItem], Mapping[int, Before]], Encoded]


@dataclass(frozen=True)
class Ready:
    """A batch ready to write: its rows, its vectors, its links when found in this process,
    and the memory each of its memories was read after."""

    prepared: list[PreparedItem]
    encoded: Encoded
    found: FoundLinks | None
    before: dict[int, Before]


_STAGE = """
CREATE TEMP TABLE hindsight_import_stage (
    position integer, id text, text text, context text, fact_type text, embedding vector,
    occurred_start timestamptz, occurred_end timestamptz, mentioned_at timestamptz,
    tags text[], proof_count integer, document_id text, document_position bigint,
    chunk_id text, metadata json, entity_text text, token_vectors bytea,
    context_vectors bytea, context_of text
) ON COMMIT DROP
"""
_COPY = """
COPY hindsight_import_stage (
    position, id, text, context, fact_type, embedding, occurred_start, occurred_end,
    mentioned_at, tags, proof_count, document_id, document_position, chunk_id, metadata,
    entity_text, token_vectors, context_vectors, context_of)
FROM STDIN (FORMAT BINARY)
"""
# Binary: a vector goes as its 4-byte floats instead of as decimal text.
_STAGE_TYPES = (
    "int4", "text", "text", "text", "text", "vector", "timestamptz", "timestamptz",
    "timestamptz", "text[]", "int4", "text", "int8", "text", "json", "text", "bytea", "bytea",
    "text",
)  # fmt: skip
# The tsvector is computed once per row (LATERAL) for both the document and its length.
_INSERT_UNITS = """
INSERT INTO memory_units (
    bank_id, id, text, context, fact_type, embedding, occurred_start, occurred_end,
    mentioned_at, tags, proof_count, document_id, document_position, chunk_id, metadata,
    search_vector, search_length)
SELECT %(bank)s, s.id, s.text, s.context, s.fact_type, s.embedding, s.occurred_start,
       s.occurred_end, s.mentioned_at, s.tags, s.proof_count, s.document_id,
       s.document_position, s.chunk_id, s.metadata, d.doc,
       (SELECT coalesce(sum(coalesce(cardinality(t.positions), 1)), 0) FROM unnest(d.doc) t)
FROM hindsight_import_stage s
CROSS JOIN LATERAL (
    SELECT to_tsvector(%(language)s::regconfig, concat_ws(' ', s.text, s.context, s.entity_text))
) AS d(doc)
ORDER BY s.position
ON CONFLICT (bank_id, id) DO NOTHING
RETURNING id
"""
_INSERT_TOKEN_VECTORS = """
INSERT INTO memory_token_vectors (bank_id, id, vectors, context_vectors, context_of)
SELECT %(bank)s, s.id, s.token_vectors, s.context_vectors, s.context_of
FROM hindsight_import_stage s
WHERE s.token_vectors IS NOT NULL AND s.id = ANY(%(ids)s)
ON CONFLICT DO NOTHING
"""


class BatchReader:
    """``items`` in batches of ``size``, each checked by ``check(batch, index of its first
    item)`` and given content ids where it has none."""

    def __init__(
        self,
        items: Iterable[Any],
        size: int,
        check: Callable[[Sequence[Any], int], list[MemoryItem]],
    ) -> None:
        self._items = iter(items)
        self.size = size
        self._check = check
        self._start = 0

    def next(self) -> tuple[list[MemoryItem], int] | None:
        """The next batch and the stream position of its first item; None at the end."""
        chunk = list(itertools.islice(self._items, self.size))
        if not chunk:
            return None
        start, self._start = self._start, self._start + len(chunk)
        return with_content_ids(self._check(chunk, start)), start


@dataclass(frozen=True)
class _Failed:
    """A step's exception as its value: the batch before it is written before it is raised."""

    error: Exception


def _captured(fn: Callable[..., T], *args: Any) -> T | _Failed:
    try:
        return fn(*args)
    except Exception as exc:
        return _Failed(exc)


@dataclass
class _Batch:
    read: int
    fresh: list[MemoryItem]
    positions: list[int]  # of the fresh items in the whole stream
    # by document, the memory its first fresh item is read after
    earlier: dict[str, Before]


@dataclass(frozen=True)
class WrittenBatch:
    ids: list[str]
    # whether the links found in this process were used; if not, the bank had changed
    # beside the import, and the in-memory copy of its vectors no longer holds
    given_links_used: bool
    # the bank row's version after this batch (see plans.BANK_STATE)
    bank_version: str | None = None


@dataclass
class _Held:
    """The bank as this import holds it, to find a batch's links in this process."""

    neighbours: NeighbourIndex
    timeline: Timeline | None  # None: temporal links are off


def _ready(
    bank_id: str,
    encode: Encode,
    extractor: EntityExtractor,
    held: _Held | None,
    batch: _Batch,
) -> Ready:
    prepared = prepare_items(batch.fresh, extractor, batch.positions)
    before = memories_before(prepared, batch.earlier)
    encoded = encode(batch.fresh, before)
    if held is None:
        return Ready(prepared, encoded, None, before)
    ids = [item.id or "" for item in batch.fresh]
    semantic = held.neighbours.add(ids, encoded[0])
    if semantic is None:
        return Ready(prepared, encoded, None, before)
    temporal = None
    if held.timeline is not None:
        times = [item.occurred_start or item.mentioned_at for item in batch.fresh]
        temporal = held.timeline.add(ids, times)
    return Ready(prepared, encoded, FoundLinks.of(bank_id, semantic, temporal), before)


def _held_bank(bank_id: str, settings: Settings) -> Program[tuple[_Held | None, str | None]]:
    """The bank's vectors and event times held for the import, and the version of the
    bank they are."""
    limit = settings.import_link_exact_max_units
    if settings.semantic_link_top_k <= 0 or limit <= 0:
        return None, None
    found: ParallelResult = yield Parallel({"bank": bank_vectors_plan(bank_id, limit)})
    bank: HeldBank | None = found["bank"][0]
    if bank is None:
        return None, None
    neighbours = NeighbourIndex(
        bank.ids,
        bank.vectors,
        limit,
        settings.semantic_link_top_k,
        settings.semantic_link_threshold,
    )
    timeline = None
    if settings.temporal_link_max > 0:
        timeline = Timeline(
            bank.ids,
            bank.times,
            settings.temporal_link_window_hours,
            settings.temporal_link_max,
        )
    return _Held(neighbours, timeline), bank.version


@dataclass
class _Tally:
    imported: int = 0
    skipped: int = 0
    batches: int = 0
    last_id: str | None = None


def import_batches(
    bank_id: str,
    reader: BatchReader,
    extractor: EntityExtractor,
    encode: Encode,
    settings: Settings,
    progress: Callable[[int], object] | None = None,
    defer_indexes: bool = False,
    read_in_context: bool = False,
) -> Program[ImportResult]:
    """The import as a program: each batch written in its own transaction while the next
    one is encoded and the one after it read, so an import whose items bring no vectors
    runs at about the encoders' pace instead of encoders plus database, and one whose items
    bring them at about the database's.

    With ``defer_indexes`` the store's indexes that only searches and forgetting read are
    dropped while this process finds the links
    (:mod:`~hindsight_tools.store.deferred_indexes`) and built again as soon as it no longer
    does; the caller builds them after the last batch, or after a failure.

    When reading, checking or encoding a batch fails (a bad item, a failing source, the
    model), the batch before it is written first and the error raised after; a database
    error stops the import where it is. Either way the batches written stay, and running
    the import again goes on from there.

    With ``read_in_context``, each memory is also read after the memory before it in its
    document (:mod:`~hindsight_tools.retain.reading_context`)."""
    tally = _Tally()
    held, version = yield from _held_bank(bank_id, settings)
    # The SQL path of the links walks the vector index: set aside only while it isn't used,
    # and not when the first batch would already take the bank past what is held.
    links_in_sql = settings.semantic_link_top_k > 0
    room = held is not None and held.neighbours.room_for(reader.size)
    deferred = defer_indexes and (room or not links_in_sql)
    deferred_at_all = deferred
    if deferred:
        yield Parallel({"drop": drop_indexes_plan()})
    # Three batches at once: one written, the next encoded, the one after read and checked.
    first = yield Blocking(functools.partial(_captured, reader.next))
    # The last memory of each document of the batch being written, which the store doesn't
    # hold yet when the next batch is encoded; the batches before it are in the store.
    carried: dict[str, Before] | None = {} if read_in_context else None
    current = yield from _fresh_batch(bank_id, first, tally, frozenset(), carried)
    if isinstance(current, _Failed):
        raise current.error
    ready: Ready | _Failed | None = None
    if current is not None and current.fresh:
        ready = yield Blocking(functools.partial(_ready, bank_id, encode, extractor, held, current))
    read_ahead = None
    if current is not None:
        read_ahead = yield Blocking(functools.partial(_captured, reader.next))
    while current is not None:
        pending = frozenset(item.id for item in current.fresh if item.id is not None)
        if carried is not None and isinstance(ready, Ready):
            carried = last_of_documents(ready.prepared)
        upcoming = yield from _fresh_batch(bank_id, read_ahead, tally, pending, carried)
        steps: dict[str, Plan[Any] | Blocking] = {}
        prepared: list[PreparedItem] = []
        if isinstance(ready, Ready) and ready.prepared:
            prepared = ready.prepared
            embeddings, token_vectors, in_context = ready.encoded
            steps["import"] = import_plan(
                bank_id,
                prepared,
                embeddings,
                settings,
                token_vectors,
                ready.found,
                version,
                count_totals=tally.batches == 0,
                in_context=in_context,
                before=ready.before,
            )
        if isinstance(upcoming, _Batch):
            if upcoming.fresh:
                steps["encode"] = Blocking(
                    functools.partial(_captured, _ready, bank_id, encode, extractor, held, upcoming)
                )
            steps["read"] = Blocking(functools.partial(_captured, reader.next))
        done: ParallelResult = (yield Parallel(steps)) if steps else {}
        next_ready = done["encode"][0] if "encode" in done else None
        read_ahead = done["read"][0] if "read" in done else None
        if "import" in done:
            batch: WrittenBatch = done["import"][0]
            version = batch.bank_version
            if held is not None and not batch.given_links_used:
                # the next batch's links were found in the copy that no longer holds
                held = None
                if isinstance(next_ready, Ready):
                    next_ready = dataclasses.replace(next_ready, found=None)
            kept = set(batch.ids)
            written = [p.id for p in prepared if p.id in kept]
            tally.imported += len(written)
            tally.skipped += len(prepared) - len(written)
            tally.batches += 1
            tally.last_id = written[-1] if written else tally.last_id
        if deferred and links_in_sql and (held is None or held.neighbours.full):
            yield from build_missing_indexes(settings.index_build_memory, settings.pool_max_size)
            deferred = False
        if progress is not None:
            progress(current.read)
        for failed in (upcoming, next_ready):
            if isinstance(failed, _Failed):
                raise failed.error
        current = upcoming if isinstance(upcoming, _Batch) else None
        ready = next_ready
    return ImportResult(
        bank_id=bank_id,
        imported=tally.imported,
        skipped=tally.skipped,
        batches=tally.batches,
        last_id=tally.last_id,
        indexes_deferred=deferred_at_all,
    )


def _fresh_batch(
    bank_id: str,
    read: tuple[list[MemoryItem], int] | _Failed | None,
    tally: _Tally,
    pending: frozenset[str],
    carried: Mapping[str, Before] | None,
) -> Program[_Batch | _Failed | None]:
    """The batch ``read`` without the ids the bank holds, the ids of the batch still being
    written (``pending``) and repeats within itself, with the memory each of its documents
    follows (unless ``carried`` is None: nothing is read in context): ``carried`` from the
    batch before, or else found in the store; None at the end."""
    if read is None or isinstance(read, _Failed):
        return read
    parsed, start = read
    ids = [item.id or "" for item in parsed]
    found: ParallelResult = yield Parallel({"existing": existing_ids_plan(bank_id, ids)})
    seen = set(found["existing"][0]) | pending
    fresh, positions = [], []
    for offset, item in enumerate(parsed):
        if item.id not in seen:
            seen.add(item.id or "")
            fresh.append(item)
            positions.append(start + offset)
    tally.skipped += len(parsed) - len(fresh)
    if carried is None:
        return _Batch(len(parsed), fresh, positions, {})
    members = [(item.id or "", document_of(item)) for item in fresh]
    earlier = {d: carried[d] for d in firsts_of_documents(members) if d in carried}
    unknown = [(i, d) for i, d in members if d is not None and d not in carried]
    if unknown:
        stored: ParallelResult = yield Parallel({"before": stored_before_plan(bank_id, unknown)})
        earlier.update(stored["before"][0])
    return _Batch(len(parsed), fresh, positions, earlier)


def import_plan(
    bank_id: str,
    prepared: Sequence[PreparedItem],
    embeddings: Vectors,
    settings: Settings,
    token_vectors: Sequence[bytes | None] | None = None,
    found: FoundLinks | None = None,
    bank_version: str | None = None,
    count_totals: bool = True,
    in_context: Sequence[bytes | None] | None = None,
    before: Mapping[int, Before] | None = None,
) -> Plan[WrittenBatch]:
    """One batch of an import in one transaction: the ids it wrote (a memory another
    writer stored meanwhile is left as that writer stored it). ``found``, the batch's
    links found beforehand, is used only if the bank is as they assumed: as many memories,
    and its row at ``bank_version``, so that nobody else wrote to it since. The bank's
    totals are counted again with ``count_totals``, else grown by the batch's.
    ``in_context``: late-interaction vectors of memories read after the one before them
    (``before``, by index)."""
    bank = {"bank": bank_id}
    if found is not None:
        # Under the bank's lock (taken again by write_sources, which is harmless) and before
        # this batch creates the bank's row, if it is the first.
        yield Statement(LOCK_BANK, bank, "none")
        ((size, version),) = yield Statement(BANK_STATE, bank)
        if (size, version) != (found.bank_size, bank_version):
            found = None
    before = before or {}
    yield from write_sources(bank_id, prepared)
    positions = yield from positions_plan(bank_id, prepared)
    yield Statement(_STAGE, None, "none")
    readings = stored_readings(in_context, before)
    rows = [
        _stage_row(p, embeddings[p.index], token_vectors, readings, positions.get(p.index))
        for p in prepared
    ]
    yield Statement(_COPY, rows, "copy", copy_types=_STAGE_TYPES)
    language = settings.text_search_extension_native_language
    written = yield Statement(_INSERT_UNITS, {"bank": bank_id, "language": language})
    ids = [str(row[0]) for row in written]
    if len(ids) != len(prepared):
        found = None  # links to or from memories another writer holds
    if not ids:
        return WrittenBatch([], False)
    kept = set(ids)
    if token_vectors is not None:
        yield Statement(_INSERT_TOKEN_VECTORS, {"bank": bank_id, "ids": ids}, "none")
        # a memory read after one of this batch that another writer stored first (and
        # so was not written here) is checked too
        yield from drop_stale_readings_plan(bank_id, prepared, before, written=kept)
    fresh = [p for p in prepared if p.id in kept]
    yield from derive(bank_id, fresh, settings, found=found, added=not count_totals)
    if found is None:  # the import finds its links in SQL from here on
        return WrittenBatch(ids, False)
    ((version,),) = yield Statement(BANK_VERSION, bank)
    return WrittenBatch(ids, True, version)


def _stage_row(
    p: PreparedItem,
    embedding: Any,
    token_vectors: Sequence[bytes | None] | None,
    readings: Mapping[int, tuple[bytes, str]],
    position: int | None,
) -> tuple[Any, ...]:
    read, read_after = readings.get(p.index, (None, None))
    item = p.item
    return (
        p.index,
        p.id,
        item.text,
        item.context,
        item.fact_type,
        embedding,
        item.occurred_start,
        item.occurred_end,
        item.mentioned_at,
        list(item.tags),
        item.proof_count,
        p.document_id,
        position,
        p.chunk_id,
        Json(item.metadata),
        " ".join(p.entities),
        None if token_vectors is None else token_vectors[p.index],
        read,
        read_after,
    )
