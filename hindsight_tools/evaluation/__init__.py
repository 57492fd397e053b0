"""Turn-level recall@k on a LoCoMo-shaped directory (``tests/data/mini-locomo`` has the shape).

Three layers, each a module that can be tested on its own:

- :mod:`~hindsight_tools.evaluation.report` (pure): :func:`recall_at_k`,
  :func:`latency_percentiles`, :func:`aggregate` into a :class:`Report`, and
  :func:`format_report`, which renders it as Markdown;
- :mod:`~hindsight_tools.evaluation.data`: :func:`load_dataset` reads ``memories.jsonl``,
  ``documents.jsonl`` (optional) and ``queries.jsonl`` into one :class:`BankData` per
  conversation;
- :mod:`~hindsight_tools.evaluation.run`: :func:`run_eval` retains each conversation into
  its own bank, asks its questions and returns the :class:`Report`.
"""

from hindsight_tools.evaluation.data import BankData, Dataset, Question, load_dataset
from hindsight_tools.evaluation.report import (
    ADVERSARIAL_NAME,
    CATEGORY_NAMES,
    DEFAULT_KS,
    Latency,
    QuestionResult,
    Report,
    RetainStats,
    Score,
    aggregate,
    format_report,
    latency_percentiles,
    recall_at_k,
)
from hindsight_tools.evaluation.run import (
    EVAL_BANK_PREFIX,
    EVAL_MAX_TOKENS,
    RETAIN_BATCH,
    run_eval,
)

__all__ = [
    "ADVERSARIAL_NAME",
    "CATEGORY_NAMES",
    "DEFAULT_KS",
    "EVAL_BANK_PREFIX",
    "EVAL_MAX_TOKENS",
    "RETAIN_BATCH",
    "BankData",
    "Dataset",
    "Latency",
    "Question",
    "QuestionResult",
    "Report",
    "RetainStats",
    "Score",
    "aggregate",
    "format_report",
    "latency_percentiles",
    "load_dataset",
    "recall_at_k",
    "run_eval",
]
