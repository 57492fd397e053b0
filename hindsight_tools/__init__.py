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
    ImportResult,
    MemoryItem,
    RecalledChunk,
    RecalledMemory,
    RecallRequest,
    RecallResult,
    RecallTrace,
    RetainResult,
    Scores,
    StoredMemory,
)
from hindsight_tools.settings import Settings
from hindsight_tools.tools import (
    RecallToolArgs,
    RetainToolArgs,
    arun_recall_tool,
    arun_retain_tool,
    recall_tool_schema,
    retain_tool_schema,
    run_recall_tool,
    run_retain_tool,
)

__version__ = "0.1.0"

__all__ = [
    "AsyncMemoryEngine",
    "CausalLink",
    "EmbeddedServerError",
    "EmbedderError",
    "FieldProblem",
    "HindsightError",
    "ImportResult",
    "InvalidRequestError",
    "MemoryEngine",
    "MemoryItem",
    "MissingExtensionError",
    "RecallRequest",
    "RecallResult",
    "RecallToolArgs",
    "RecallTrace",
    "RecalledChunk",
    "RecalledMemory",
    "RerankerError",
    "RetainResult",
    "RetainToolArgs",
    "SchemaMismatchError",
    "Scores",
    "Settings",
    "StoreError",
    "StoredMemory",
    "__version__",
    "arun_recall_tool",
    "arun_retain_tool",
    "recall_tool_schema",
    "retain_tool_schema",
    "run_recall_tool",
    "run_retain_tool",
]
