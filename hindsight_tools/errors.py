"""Exceptions raised by hindsight-tools.

::

    HindsightError
    ├── InvalidRequestError (also ValueError)   bad input; nothing was written
    ├── StoreError                              the database could not do what was asked
    │   ├── MissingExtensionError               a required PostgreSQL extension is absent
    │   ├── SchemaMismatchError                 the store was made by another embedding model
    │   └── EmbeddedServerError                 the embedded PostgreSQL would not start
    ├── EmbedderError                           the embedding model failed to load or run
    └── RerankerError                           a reranker failed to load or to score

Lower-level exceptions (psycopg, torch) are mapped to these at the boundary, with the
original kept as ``__cause__``.
"""

from __future__ import annotations

from dataclasses import dataclass


class HindsightError(Exception):
    """Base of every error this package raises on purpose."""


@dataclass(frozen=True)
class FieldProblem:
    """One thing wrong with the input: where (``items[3].fact_type``) and what is allowed."""

    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class InvalidRequestError(HindsightError, ValueError):
    """The input was rejected before anything was written.

    ``problems`` lists every field at fault; the message names each one and what is
    allowed, so a model reading it in a tool call can correct itself.
    """

    def __init__(self, problems: list[FieldProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


class StoreError(HindsightError):
    """PostgreSQL failed or is unusable for this engine."""


class MissingExtensionError(StoreError):
    """A PostgreSQL extension the engine needs is not installed on the server."""


class SchemaMismatchError(StoreError):
    """The store's embeddings were made by another model (or dimension) than the configured
    one, or a newer version of the package migrated it."""


class EmbeddedServerError(StoreError):
    """The embedded PostgreSQL server could not be started."""


class EmbedderError(HindsightError):
    """The embedding model could not be loaded or failed on the given texts."""


class RerankerError(HindsightError):
    """A reranker could not be loaded or failed to score. During a recall this never
    escapes: the recall falls over to the next provider, at worst passthrough."""
