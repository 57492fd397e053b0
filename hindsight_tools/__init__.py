"""hindsight-tools: a recall engine for agent memory on PostgreSQL + pgvector."""

from hindsight_tools.engine import AsyncMemoryEngine, MemoryEngine
from hindsight_tools.errors import (
    EmbeddedServerError,
    EmbedderError,
    FieldProblem,
    HindsightError,
    InvalidRequestError,
    MissingExtensionError,
    RerankerError,
    SchemaMismatchError,
    StoreError,
)
from hindsight_tools.models import (
    CausalLink,
    MemoryItem,
    RecalledChunk,
    RecalledMemory,
    RecallRequest,
    RecallResult,
    RecallTrace,
    RetainResult,
    Scores,
)
from hindsight_tools.settings import Settings

__version__ = "0.1.0"

__all__ = [
    "AsyncMemoryEngine",
    "CausalLink",
    "EmbeddedServerError",
    "EmbedderError",
    "FieldProblem",
    "HindsightError",
    "InvalidRequestError",
    "MemoryEngine",
    "MemoryItem",
    "MissingExtensionError",
    "RecallRequest",
    "RecallResult",
    "RecallTrace",
    "RecalledChunk",
    "RecalledMemory",
    "RerankerError",
    "RetainResult",
    "SchemaMismatchError",
    "Scores",
    "Settings",
    "StoreError",
    "__version__",
]
