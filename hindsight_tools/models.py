"""Pydantic models at the edges: what callers pass in and what they get back."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

FactType = Literal["world", "experience", "observation"]
FACT_TYPES: tuple[FactType, ...] = ("world", "experience", "observation")
CausalLinkType = Literal["causes", "caused_by", "enables", "prevents"]
LinkType = Literal["semantic", "temporal", "causes", "caused_by", "enables", "prevents"]
Budget = Literal["low", "mid", "high"]
TagsMatch = Literal["any", "all", "any_strict", "all_strict", "exact"]
ListOrder = Literal["id", "updated_at"]

MAX_ID_CHARS = 256
MAX_METADATA_BYTES = 65_536
MAX_METADATA_DEPTH = 32


def _no_nul(value: str) -> str:
    # PostgreSQL text holds neither NUL nor unpaired surrogates (they have no UTF-8 form):
    # say so here instead of failing inside a transaction.
    if "\x00" in value:
        raise ValueError("must not contain NUL (\\x00) characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"must be valid Unicode: unpaired surrogate {value[exc.start]!r} at character "
            f"{exc.start}"
        ) from None
    return value


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must be a non-empty string (not only whitespace)")
    return value


def _as_utc(value: datetime | None) -> datetime | None:
    # Naive datetimes are taken as UTC so that every stored date is comparable.
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    if value is not None:
        # PostgreSQL would store 0001-01-01T00:00+05:00 (a date BC in UTC), but Python could
        # never read it back: every later recall of the bank would fail.
        try:
            value.astimezone(UTC)
        except OverflowError:
            raise ValueError("must lie between 0001-01-01 and 9999-12-31 in UTC") from None
    return value


def _check_metadata_depth(value: Any) -> None:
    """Refuse nesting deeper than ``MAX_METADATA_DEPTH``, walking without recursion so that
    a hostile depth can't exhaust Python's stack (``json.dumps`` would)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)) and depth > MAX_METADATA_DEPTH:
            raise ValueError(f"nests deeper than {MAX_METADATA_DEPTH} levels")
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)


PgText = Annotated[StrictStr, AfterValidator(_no_nul)]
NonBlankText = Annotated[StrictStr, AfterValidator(_non_blank), AfterValidator(_no_nul)]
Identifier = Annotated[
    StrictStr,
    Field(min_length=1, max_length=MAX_ID_CHARS),
    AfterValidator(_non_blank),
    AfterValidator(_no_nul),
]
# Length limits before the validators, so that pydantic words them in characters.
EntityName = Annotated[
    StrictStr,
    Field(max_length=MAX_ID_CHARS),
    AfterValidator(_non_blank),
    AfterValidator(_no_nul),
]
Tag = Annotated[StrictStr, Field(min_length=1, max_length=MAX_ID_CHARS), AfterValidator(_no_nul)]
Timestamp = Annotated[datetime, AfterValidator(_as_utc)]


class CausalLink(BaseModel):
    """A directed causal relation from the item it belongs to towards another memory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target_id: Identifier
    link_type: CausalLinkType = "causes"
    weight: float = Field(default=1.0, ge=0.0, le=1.0)


class MemoryItem(BaseModel):
    """One memory to retain. Only ``text`` is required.

    ``id`` is stable: retaining the same id again updates that memory. ``entities`` are
    extracted from the text when left out (``None``); an empty list means "none".
    ``metadata`` is returned exactly as given (it must be JSON-serialisable).
    ``embedding`` is the text's vector when the caller already has it (a migration from
    another store): made by the store's model, of its dimension; such a memory is not
    re-embedded, and its late-interaction vectors are left to
    :meth:`~hindsight_tools.MemoryEngine.backfill_token_vectors`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: NonBlankText
    id: Identifier | None = None
    fact_type: FactType = "world"
    context: PgText | None = None
    occurred_start: Timestamp | None = None
    occurred_end: Timestamp | None = None
    mentioned_at: Timestamp | None = None
    entities: list[EntityName] | None = None
    tags: list[Tag] = Field(default_factory=list)
    document_id: Identifier | None = None
    chunk: NonBlankText | None = None
    proof_count: StrictInt = Field(default=1, ge=1)
    metadata: dict[str, Any] = Field(default_factory=dict)
    causal_links: list[CausalLink] = Field(default_factory=list)
    embedding: list[FiniteFloat] | None = Field(default=None, min_length=1)

    @field_validator("metadata")
    @classmethod
    def _metadata_is_json(cls, value: dict[str, Any]) -> dict[str, Any]:
        _check_metadata_depth(value)
        try:
            size = len(json.dumps(value, allow_nan=False).encode())
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"must be JSON-serialisable (str keys; str, number, bool, null, list, dict "
                f"values; no NaN or infinity): {exc}"
            ) from None
        if size > MAX_METADATA_BYTES:
            raise ValueError(f"is {size} bytes as JSON; at most {MAX_METADATA_BYTES}")
        return value

    @model_validator(mode="after")
    def _dates_in_order(self) -> MemoryItem:
        if (
            self.occurred_start is not None
            and self.occurred_end is not None
            and self.occurred_end < self.occurred_start
        ):
            raise ValueError(
                f"occurred_end ({self.occurred_end.isoformat()}) is before occurred_start "
                f"({self.occurred_start.isoformat()}); it must be equal to or later"
            )
        return self


class RetainResult(BaseModel):
    """What a ``retain`` call stored: the ids in input order, and how many were new."""

    model_config = ConfigDict(frozen=True)

    bank_id: str
    ids: list[str]
    created: int
    updated: int


class ImportResult(BaseModel):
    """What an import wrote: memories written, memories skipped because the bank already
    held their id (an earlier run of the same import) or the stream repeated it, batches
    committed, the id of the last memory of the last committed batch, whether the search
    indexes were set aside for the load, and whether the import ended by analysing the
    tables (so that the planner knows the bank's new size)."""

    model_config = ConfigDict(frozen=True)

    bank_id: str
    imported: int
    skipped: int
    batches: int
    last_id: str | None = None
    # whether the store's search indexes were set aside for the load (asked for,
    # and the bank small enough for the import to find its links itself)
    indexes_deferred: bool = False
    # whether the import ended with ANALYZE (it wrote at least IMPORT_ANALYZE_MIN memories)
    analyzed: bool = False


class MemoryFields(BaseModel):
    """What a memory is, as recall and the management calls return it."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    fact_type: FactType
    context: str | None = None
    occurred_start: datetime | None = None
    occurred_end: datetime | None = None
    mentioned_at: datetime | None = None
    tags: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    document_id: str | None = None
    chunk_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class StoredMemory(MemoryFields):
    """A memory as stored: what was retained (metadata exactly as given), the entities found
    in it, and when the store first and last wrote it."""

    proof_count: int = 1
    created_at: datetime
    updated_at: datetime


MAX_LIST_LIMIT = 1000


class MemoryScope(BaseModel):
    """The filters a recall and a listing share: which memories they may see."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    types: list[FactType] | None = None
    tags: list[PgText] | None = None
    tags_match: TagsMatch = "any"
    # Parsed (and refused with the path at fault) by hindsight_tools.query.metadata_filter.
    metadata_filter: dict[str, Any] | None = None
    occurred_after: Timestamp | None = None
    occurred_before: Timestamp | None = None

    @model_validator(mode="after")
    def _dates_in_order(self) -> MemoryScope:
        after, before = self.occurred_after, self.occurred_before
        if after is not None and before is not None and after >= before:
            raise ValueError(
                f"occurred_after ({after.isoformat()}) must be before occurred_before "
                f"({before.isoformat()}): the range is [after, before)"
            )
        return self

    def fact_types(self) -> tuple[FactType, ...]:
        """The requested fact types, de-duplicated, in canonical order (all when unset)."""
        if not self.types:
            return FACT_TYPES
        return tuple(t for t in FACT_TYPES if t in self.types)


class ListRequest(MemoryScope):
    """A listing of a bank's memories: the filters of a recall (without a query), an order
    (``id``: by id; ``updated_at``: the most recently written first, ties by id) and a page."""

    order: ListOrder = "id"
    limit: StrictInt = Field(default=100, ge=1, le=MAX_LIST_LIMIT)
    offset: StrictInt = Field(default=0, ge=0)


class Scores(BaseModel):
    """Every score a memory collected on its way through the pipeline (``None``: not scored).
    ``late_interaction`` is MaxSim less the length prior of a memory longer than 512
    characters (``late_interaction_length_prior``)."""

    model_config = ConfigDict(frozen=True)

    final: float
    cross_encoder: float | None = None
    late_interaction: float | None = None
    rrf: float | None = None
    semantic: float | None = None
    bm25: float | None = None
    graph: float | None = None
    temporal: float | None = None


class RecalledMemory(MemoryFields):
    """One memory in a recall result."""

    scores: Scores
    source_ranks: dict[str, int] = Field(default_factory=dict)
    tokens: int = 0
    kept: bool = Field(
        default=False,
        description="Among late interaction's best candidates, which keep their places above "
        "the cross-encoder's (HINDSIGHT_API_RERANKER_KEEP).",
    )
    instruction: bool = Field(
        default=False,
        description='A standing instruction to the agent (it opens "Always …", "Never …", '
        '"From now on …"): it says how to answer questions of its topic, and is placed by '
        "the semantic arm's rank unless the question names a period "
        "(HINDSIGHT_API_INSTRUCTION_RANK).",
    )


class RecalledChunk(BaseModel):
    """A source chunk of a returned memory (whole, or cut to fit and marked ``truncated``)."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    document_id: str
    chunk_index: int
    text: str
    truncated: bool = False
    tokens: int = 0


class ArmTrace(BaseModel):
    model_config = ConfigDict(frozen=True)

    candidates: int
    seconds: float


class RecallTrace(BaseModel):
    """How a recall went: per-arm counts and timings, the time window, budget and reranker."""

    model_config = ConfigDict(frozen=True)

    arms: dict[str, ArmTrace]
    time_window: tuple[datetime | None, datetime | None] | None = None
    # The memory that dated the event a question places its period by, when it does
    # ("Why did she leave?"); time_window is then that period (recall/anchored.py).
    event_anchor: str | None = None
    recall_budget: int
    reranker: str
    reranked: int = 0
    kept: int = 0
    late_interaction: int = 0
    reranker_timed_out: bool = False
    reranker_failed: list[str] = Field(default_factory=list)
    stages: dict[str, float] = Field(default_factory=dict)


class RecallResult(BaseModel):
    """Memories best first (by ``scores.final``), chunks when asked, and the trace when asked."""

    model_config = ConfigDict(frozen=True)

    memories: list[RecalledMemory]
    chunks: list[RecalledChunk] = Field(default_factory=list)
    trace: RecallTrace | None = None


class RecallRequest(MemoryScope):
    """A recall request (docs/design.md, Recall request). Every field is checked; errors name
    the allowed values."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query: NonBlankText
    budget: Budget = "mid"
    max_tokens: StrictInt = Field(default=4096, ge=0)
    include_chunks: bool = False
    max_chunk_tokens: StrictInt = Field(default=8192, ge=0)
    query_timestamp: Timestamp | None = None
    trace: bool = False

    def now(self) -> datetime:
        """``query_timestamp``, or the current UTC time when none was given."""
        return self.query_timestamp or datetime.now(UTC)
