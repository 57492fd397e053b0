"""What both engines share: settings, models, validation and the programs of every call.

An engine is this core plus an I/O layer. :class:`EngineCore` builds the models and turns a
call into a :class:`~hindsight_tools.runtime.program.Program` (pure steps that yield plans of
SQL statements and blocking model calls); :mod:`hindsight_tools.engine.sync` runs them on
threads and a sync pool, :mod:`hindsight_tools.engine.aio` on the event loop and an async
pool. Nothing here does I/O.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import numpy as np
import pydantic

from hindsight_tools.encoders.embedding import (
    Embedder,
    canonical_model_name,
    default_embedder,
    embed_texts,
)
from hindsight_tools.encoders.late_interaction import load_late_interaction
from hindsight_tools.errors import FieldProblem, InvalidRequestError
from hindsight_tools.manage.forget import forget_document_plan, forget_plan
from hindsight_tools.manage.read import get_plan, list_plan, tags_plan
from hindsight_tools.models import (
    ImportResult,
    ListRequest,
    MemoryItem,
    RecallRequest,
    RecallResult,
    RetainResult,
    StoredMemory,
)
from hindsight_tools.query.entities import EntityExtractor, extract_entities
from hindsight_tools.query.time_window import extract_time_window
from hindsight_tools.recall.arms.bm25 import keyword_backend
from hindsight_tools.recall.pipeline import RecallServices, recall_program
from hindsight_tools.recall.rerank.base import PassthroughReranker, RerankChain, Reranker
from hindsight_tools.recall.rerank.providers import build_rerank_chain
from hindsight_tools.retain.bulk import BatchReader, Encoded, import_batches
from hindsight_tools.retain.document_order import stored_before_plan
from hindsight_tools.retain.plans import LOCK_BANK, retain_plan
from hindsight_tools.retain.reading_context import (
    Before,
    firsts_of_documents,
    memories_before,
    read_after,
)
from hindsight_tools.retain.token_vectors import (
    Missing,
    banks_plan,
    missing_token_vectors_plan,
    store_readings_plan,
    store_token_vectors_plan,
    unread_plan,
)
from hindsight_tools.retain.units import prepare_items
from hindsight_tools.retain.vectors import (
    check_given_embeddings,
    merge_embeddings,
    place_token_vectors,
    to_encode,
)
from hindsight_tools.runtime.plan import Plan, Statement
from hindsight_tools.runtime.program import Blocking, Parallel, ParallelResult, Program
from hindsight_tools.settings import Settings
from hindsight_tools.store import bootstrap as store
from hindsight_tools.store.deferred_indexes import build_missing_indexes
from hindsight_tools.store.embedded import EmbeddedServer, acquire_server
from hindsight_tools.store.statistics import analyze_plan
from hindsight_tools.validation import (
    parse_items,
    problems_from_pydantic,
    refuse_single_item,
    validate_bank_id,
    validate_ids,
)

log = logging.getLogger(__name__)

T = TypeVar("T")
# The bank's rows that carry no foreign key (migrations 0009, 0011).
_DELETE_BANK_ROWS = (
    "DELETE FROM memory_links WHERE bank_id = %(bank)s",
    "DELETE FROM memory_terms WHERE bank_id = %(bank)s",
    "DELETE FROM unit_entities WHERE bank_id = %(bank)s",
)
_DELETE_BANK = "DELETE FROM banks WHERE bank_id = %(bank)s RETURNING bank_id"


def delete_bank_plan(bank_id: str) -> Plan[bool]:
    """Delete a bank and everything in it. Foreign keys take its rows, but for its links,
    keyword postings and entity mentions, which have none (migrations 0009, 0011): those go
    first, under the bank's lock, so a retain can't write any of them in between."""
    bank = {"bank": bank_id}
    yield Statement(LOCK_BANK, bank, "none")
    for statement in _DELETE_BANK_ROWS:
        yield Statement(statement, bank, "none")
    rows = yield Statement(_DELETE_BANK, bank)
    return bool(rows)


def resolve_settings(database_url: str | None, settings: Settings | None) -> Settings:
    """The engine's settings: ``settings`` (else the environment's), ``database_url`` over it."""
    settings = settings or Settings()
    if database_url is not None:
        settings = settings.with_overrides({"database_url": database_url})
    return settings


class EngineCore:
    """Everything an engine needs apart from I/O: configuration, models and programs."""

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None,
        entity_extractor: EntityExtractor | None,
        reranker: Reranker | None,
    ) -> None:
        self.settings = settings
        self.embedder = embedder or default_embedder(
            settings.embeddings_model,
            settings.embeddings_batch_size,
            settings.embeddings_query_runtime,
            settings.embeddings_onnx_cache_dir,
        )
        self.entity_extractor = entity_extractor or extract_entities
        # A reranker passed in still gets passthrough behind it: a recall never fails
        # because its cross-encoder did.
        self.reranker = (
            build_rerank_chain(settings)
            if reranker is None
            else RerankChain(
                [reranker]
                if isinstance(reranker, PassthroughReranker)
                else [reranker, PassthroughReranker()]
            )
        )
        self.late_interaction = load_late_interaction(
            settings.late_interaction,
            settings.late_interaction_model_dir,
            settings.late_interaction_threads,
        )
        # dateparser loads its language data on first use (~0.3 s): pay it here, not in
        # the first recall.
        extract_time_window("on June 5, 2022", datetime.now(UTC))
        self.recall_services = RecallServices(
            settings,
            self.embedder,
            self.reranker,
            self.entity_extractor,
            keyword_backend(
                settings.text_search_extension,
                settings.bm25_k1,
                settings.bm25_b,
                settings.bm25_exact_postings,
            ),
            self.late_interaction,
        )

    def connect(self) -> tuple[str, EmbeddedServer | None]:
        """The database URL to use (starting the embedded server if none is set), migrated."""
        server = None
        conninfo = self.settings.database_url
        if conninfo is None:
            server = acquire_server(self.settings.data_dir, self.settings.embedded_server_settings)
            conninfo = server.uri
        try:
            store.bootstrap(
                conninfo,
                self.embedder.dimension,
                canonical_model_name(self.embedder.name),
                self.settings.index_build_memory,
            )
        except BaseException:
            if server is not None:
                server.release()
            raise
        return conninfo, server

    def retain_program(
        self, bank_id: str, items: Iterable[MemoryItem | Mapping[str, Any]]
    ) -> Program[RetainResult]:
        validate_bank_id(bank_id)
        parsed = parse_items(items, self.settings)
        self._check_embeddings(parsed, None, 0)
        prepared = prepare_items(parsed, self.entity_extractor)
        before: dict[int, Before] = {}
        members = [(p.id, p.document_id) for p in prepared]
        if self.reads_in_context and firsts_of_documents(members):
            found: ParallelResult = yield Parallel({"before": stored_before_plan(bank_id, members)})
            before = memories_before(prepared, found["before"][0])
        embeddings, token_vectors, in_context = yield Blocking(
            functools.partial(self.encode, parsed, before)
        )
        done: ParallelResult = yield Parallel(
            {
                "retain": retain_plan(
                    bank_id,
                    prepared,
                    embeddings,
                    self.settings,
                    token_vectors,
                    in_context,
                    before,
                )
            }
        )
        return done["retain"][0]  # type: ignore[no-any-return]

    def import_program(
        self,
        bank_id: str,
        items: Iterable[MemoryItem | Mapping[str, Any]],
        batch_size: int,
        embedding_model: str | None,
        progress: Callable[[int], object] | None = None,
        defer_indexes: bool = False,
    ) -> Program[ImportResult]:
        validate_bank_id(bank_id)
        if (
            isinstance(batch_size, bool)
            or not isinstance(batch_size, int)
            or not (1 <= batch_size <= self.settings.retain_max_items)
        ):
            raise InvalidRequestError(
                [
                    FieldProblem(
                        "batch_size",
                        f"must be an integer from 1 to {self.settings.retain_max_items} "
                        f"(HINDSIGHT_API_RETAIN_MAX_ITEMS), got {batch_size!r}",
                    )
                ]
            )
        if not isinstance(defer_indexes, bool):
            raise InvalidRequestError(
                [
                    FieldProblem(
                        "defer_indexes",
                        f"must be true or false, got {defer_indexes!r}",
                    )
                ]
            )
        refuse_single_item(items)
        # A stated model is checked once, before anything is read, not when a vector comes.
        self._check_embeddings([], embedding_model, 0)
        batches = BatchReader(items, batch_size, self._checked)
        return (
            yield from import_batches(
                bank_id,
                batches,
                self.entity_extractor,
                self.encode,
                self.settings,
                progress,
                defer_indexes,
                read_in_context=self.reads_in_context,
            )
        )

    def index_program(self) -> Program[list[str]]:
        """Build the deferrable indexes the store lacks; the ones built."""
        return build_missing_indexes(self.settings.index_build_memory, self.settings.pool_max_size)

    def analyze_program(self, result: ImportResult) -> Program[ImportResult]:
        """After an import that wrote at least ``import_analyze_min`` memories, ANALYZE the
        tables the arms plan from (:mod:`hindsight_tools.store.statistics`); ``result``
        with ``analyzed`` set accordingly."""
        if not 0 < self.settings.import_analyze_min <= result.imported:
            return result
        yield Parallel({"analyze": analyze_plan()})
        return result.model_copy(update={"analyzed": True})

    @staticmethod
    def analyze_failed(result: ImportResult, error: Exception) -> ImportResult:
        # The memories are committed; statistics are an aid to the planner, which
        # autovacuum brings up to date later, so their failure doesn't fail the import.
        log.warning(
            "the import into %s is complete, but ANALYZE after it failed (%s); recalls of "
            "that bank may be planned for a smaller bank until autovacuum analyses the store",
            result.bank_id,
            error,
        )
        return result

    def _checked(self, chunk: Sequence[Any], start: int) -> list[MemoryItem]:
        parsed = parse_items(chunk, self.settings, first_index=start, unique_ids=False)
        self._check_embeddings(parsed, None, start)
        return parsed

    def _check_embeddings(
        self, items: Sequence[MemoryItem], stated_model: str | None, first_index: int
    ) -> None:
        check_given_embeddings(
            items,
            self.embedder.dimension,
            canonical_model_name(self.embedder.name),
            None if stated_model is None else canonical_model_name(stated_model),
            first_index,
        )

    @property
    def reads_in_context(self) -> bool:
        """Whether memories are also read after the memory before them in their document."""
        return self.late_interaction is not None and self.settings.late_interaction_context

    def encode(self, items: Sequence[MemoryItem], before: Mapping[int, Before]) -> Encoded:
        """Embeddings for every item (given or encoded), late-interaction vectors for the
        encoded ones, and for those of them read after another memory (``before``, by
        index), their reading after it (:mod:`~hindsight_tools.retain.reading_context`):
        blocking, the models' work."""
        positions = to_encode(items)
        texts = [items[i].text for i in positions]
        dimension = self.embedder.dimension
        encoded = (
            embed_texts(self.embedder, texts)
            if texts
            else np.empty((0, dimension), dtype=np.float32)
        )
        embeddings = merge_embeddings(items, encoded, positions, dimension)
        # One model after the other: a batch keeps both cores busy on its own, and side by
        # side measured within the host's noise (benchmarks/retain_bench.py).
        late = self.late_interaction
        if late is None:
            return embeddings, None, None
        documents = late.encode_documents(texts) if texts else []
        own = place_token_vectors(len(items), documents, positions)
        if not self.settings.late_interaction_context:
            return embeddings, own, None
        texts_at = {i: items[i].text for i in positions}
        return embeddings, own, self._read_in_context(len(items), texts_at, before)

    def _read_in_context(
        self, count: int, texts: Mapping[int, str], before: Mapping[int, Before]
    ) -> list[bytes | None]:
        """By index up to ``count``, the late-interaction vectors of each text of ``texts``
        that has a memory ``before`` it, read after that memory; None elsewhere."""
        late = self.late_interaction
        assert late is not None
        followers = [i for i in texts if i in before]
        read = [read_after(before[i].text, texts[i]) for i in followers]
        return place_token_vectors(count, late.encode_documents(read) if read else [], followers)

    def backfill_program(self, bank_id: str | None, batch: int) -> Program[int]:
        """Stores late-interaction vectors for memories that have none, ``batch`` at a
        time (each batch its own transaction), with their reading after the memory before
        them in their document, then, reading in context, the missing readings of memories
        that have their own vectors; returns how many memories were given vectors or a
        reading (a memory re-retained meanwhile keeps the vectors of its new text)."""
        if bank_id is not None:
            validate_bank_id(bank_id)
        if batch < 1:
            raise InvalidRequestError([FieldProblem("batch", f"must be at least 1, got {batch}")])
        late = self.late_interaction
        if late is None:
            return 0
        filled = 0
        while True:
            found: ParallelResult = yield Parallel(
                {"todo": missing_token_vectors_plan(bank_id, batch)}
            )
            todo: list[Missing] = found["todo"][0]
            if not todo:
                break
            vectors, in_context = yield Blocking(functools.partial(self._encode_missing, todo))
            yield Parallel({"store": store_token_vectors_plan(todo, vectors, in_context)})
            filled += len(todo)
        if not self.reads_in_context:
            return filled
        return filled + (yield from self._restore_readings(bank_id, batch))

    def _restore_readings(self, bank_id: str | None, batch: int) -> Program[int]:
        """The backfill's second pass: the reading in context of each memory that has its
        own vectors but not that reading, though a memory comes before it in its
        document; returns how many were stored."""
        banks: ParallelResult = yield Parallel({"banks": banks_plan(bank_id)})
        restored = 0
        for bank in banks["banks"][0]:
            after = ""
            while True:
                found: ParallelResult = yield Parallel({"todo": unread_plan(bank, after, batch)})
                todo: list[Missing] = found["todo"][0]
                if not todo:
                    break
                readings = yield Blocking(functools.partial(self._read_missing, todo))
                stored = yield Parallel({"store": store_readings_plan(bank, todo, readings)})
                restored += stored["store"][0]
                after = todo[-1].id
        return restored

    def _encode_missing(
        self, todo: Sequence[Missing]
    ) -> tuple[list[bytes], list[bytes | None] | None]:
        """The backfill's model work: each memory's own vectors and, reading in context,
        those of its text after the memory before it."""
        late = self.late_interaction
        assert late is not None
        own = late.encode_documents([m.text for m in todo])
        return own, self._read_missing(todo) if self.reads_in_context else None

    def _read_missing(self, todo: Sequence[Missing]) -> list[bytes | None]:
        """By index, each memory of ``todo`` read after the memory before it, where the
        store knows one."""
        texts = {i: m.text for i, m in enumerate(todo)}
        before = {i: m.before for i, m in enumerate(todo) if m.before is not None}
        return self._read_in_context(len(todo), texts, before)

    def recall_program(
        self, bank_id: str, query: str, options: dict[str, Any]
    ) -> Program[RecallResult]:
        validate_bank_id(bank_id)
        request = self.recall_request(query, options)
        return (yield from recall_program(self.recall_services, bank_id, request))

    def get_program(self, bank_id: str, ids: object) -> Program[list[StoredMemory]]:
        validate_bank_id(bank_id)
        plan = get_plan(bank_id, validate_ids(ids))
        done: ParallelResult = yield Parallel({"get": plan})
        return done["get"][0]  # type: ignore[no-any-return]

    def list_program(self, bank_id: str, options: dict[str, Any]) -> Program[list[StoredMemory]]:
        validate_bank_id(bank_id)
        given = {k: v for k, v in options.items() if v is not None}
        try:
            request = ListRequest.model_validate(given)
        except pydantic.ValidationError as exc:
            raise InvalidRequestError(problems_from_pydantic(exc, "", ListRequest)) from None
        done: ParallelResult = yield Parallel({"list": list_plan(bank_id, request)})
        return done["list"][0]  # type: ignore[no-any-return]

    def tags_program(self, bank_id: str, prefix: object) -> Program[dict[str, int]]:
        validate_bank_id(bank_id)
        if prefix is not None and (not isinstance(prefix, str) or "\x00" in prefix):
            raise InvalidRequestError(
                [FieldProblem("prefix", f"must be a string without NUL or None, got {prefix!r}")]
            )
        done: ParallelResult = yield Parallel({"tags": tags_plan(bank_id, prefix)})
        return done["tags"][0]  # type: ignore[no-any-return]

    def delete_program(self, bank_id: str, ids: object) -> Program[int]:
        validate_bank_id(bank_id)
        done: ParallelResult = yield Parallel({"delete": forget_plan(bank_id, validate_ids(ids))})
        return done["delete"][0]  # type: ignore[no-any-return]

    def delete_document_program(self, bank_id: str, document_id: object) -> Program[int]:
        validate_bank_id(bank_id)
        if not isinstance(document_id, str) or not document_id or "\x00" in document_id:
            raise InvalidRequestError(
                [FieldProblem("document_id", f"must be a non-empty string, got {document_id!r}")]
            )
        done: ParallelResult = yield Parallel(
            {"delete": forget_document_plan(bank_id, document_id)}
        )
        return done["delete"][0]  # type: ignore[no-any-return]

    @staticmethod
    def recall_request(query: str, options: dict[str, Any]) -> RecallRequest:
        given = {k: v for k, v in options.items() if v is not None}
        try:
            return RecallRequest.model_validate({"query": query, **given})
        except pydantic.ValidationError as exc:
            raise InvalidRequestError(problems_from_pydantic(exc, "", RecallRequest)) from None


def pool_timeout_message(settings: Settings) -> str:
    return (
        f"no database connection became free within {settings.pool_timeout:g} s "
        f"(all {settings.pool_max_size} pooled connections busy, or PostgreSQL unreachable); "
        "raise HINDSIGHT_API_POOL_MAX_SIZE or HINDSIGHT_API_POOL_TIMEOUT"
    )
