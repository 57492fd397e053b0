"""How the command line prints a recall: one line per memory, and why it is there."""

from __future__ import annotations

import json
from datetime import datetime

from hindsight_tools.models import RecallResult


def format_result(result: RecallResult, *, explain: bool = False) -> str:
    """A compact human-readable listing: rank, score, date, fact type, text.

    With ``explain``, each memory's rank in every arm that ran follows on its own line
    (``-``: that arm didn't return it), and the time window ranked by, if any, ends the
    listing.
    """
    if not result.memories:
        return "(no memories)"
    arms = list(result.trace.arms) if result.trace is not None else []
    lines = []
    for rank, memory in enumerate(result.memories, start=1):
        date = memory.occurred_start or memory.mentioned_at
        when = f"{date:%Y-%m-%d}" if date else "undated"
        lines.append(
            f"{rank:>3}. [{memory.scores.final:.3f}] {when} ({memory.fact_type}) {memory.text}"
        )
        if explain:
            ranks = "  ".join(f"{arm}#{memory.source_ranks.get(arm, '-')}" for arm in arms)
            ce = memory.scores.cross_encoder
            if memory.kept:
                rerank = "kept by late interaction"
            else:
                rerank = "not reranked" if ce is None else f"cross-encoder {ce:.3f}"
            if memory.instruction:
                rerank += ", a standing instruction"
            late = memory.scores.late_interaction
            maxsim = "" if late is None else f"  maxsim {late:.3f}"
            lines.append(f"     rrf {memory.scores.rrf or 0:.4f}{maxsim}  {rerank}  {ranks}")
    for chunk in result.chunks:
        marker = " (truncated)" if chunk.truncated else ""
        lines.append(f"  chunk {chunk.document_id}#{chunk.chunk_index}{marker}: {chunk.text[:200]}")
    if result.trace is not None and explain and result.trace.time_window is not None:
        lines.append(_window_line(*result.trace.time_window, result.trace.event_anchor))
    if result.trace is not None and not explain:
        lines.append(json.dumps(result.trace.model_dump(mode="json")))
    return "\n".join(lines)


def _window_line(start: datetime | None, end: datetime | None, anchor: str | None) -> str:
    """The period the recall ranked by, and the memory that dated it when an event did."""

    def day(moment: datetime | None) -> str:
        return "…" if moment is None else f"{moment:%Y-%m-%d}"

    line = f"time window {day(start)} to {day(end)}"
    return line if anchor is None else f"{line}, dated by the event in memory {anchor}"
