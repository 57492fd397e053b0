"""Recall results as adapters hand them on: text for a model, flat metadata for documents."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hindsight_tools.encoders.tokens import count_tokens, truncate_to_tokens
from hindsight_tools.models import RecalledChunk, RecalledMemory, RecallResult, StoredMemory


def format_recall(result: RecallResult, *, max_tokens: int, max_chunk_tokens: int) -> str:
    """One line per memory (date, fact type, text), then the chunks, each part in its budget.

    The engine already fits memory texts into ``max_tokens``; the dates and labels added here
    cost tokens too, so lines are counted again and the ones past the budget dropped.
    """
    memories = _fit("Memories (best first):", [memory_line(m) for m in result.memories], max_tokens)
    chunks = _fit_chunks(result.chunks, max_chunk_tokens)
    parts = [part for part in (memories, chunks) if part]
    if parts:
        return "\n\n".join(parts)
    if result.chunks:
        return (
            f"Nothing fits: max_tokens={max_tokens}, max_chunk_tokens={max_chunk_tokens}; "
            "raise them to see the matches."
        )
    # the engine drops what doesn't fit the budget, so a tiny one looks like no match
    return f"No memories found within max_tokens={max_tokens}."


def memory_line(memory: RecalledMemory) -> str:
    # a model told that a memory is a rule applies it, rather than reading it as an answer
    kind = f"{memory.fact_type}, standing instruction" if memory.instruction else memory.fact_type
    return f"- {_when(memory)} ({kind}) {memory.text}"


def stored_lines(memories: list[StoredMemory]) -> str:
    """Stored memories for a model, one per line with the id it can act on."""
    if not memories:
        return "No memories."
    return "\n".join(f"- {m.id}: {_when(m)} ({m.fact_type}) {m.text}" for m in memories)


def _when(memory: RecalledMemory | StoredMemory) -> str:
    start = memory.occurred_start or memory.mentioned_at
    if start is None:
        return "[undated]"
    end = memory.occurred_end
    if memory.occurred_start is not None and end is not None and end.date() != start.date():
        return f"[{start:%Y-%m-%d} to {end:%Y-%m-%d}]"
    return f"[{start:%Y-%m-%d}]"


def _fit(header: str, lines: list[str], budget: int) -> str:
    # cl100k_base never merges tokens across a newline, so per-line counts add up exactly.
    kept: list[str] = []
    used = count_tokens(header + "\n")
    for line in lines:
        cost = count_tokens(line + "\n")
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return "\n".join([header, *kept]) if kept else ""


def _fit_chunks(chunks: list[RecalledChunk], budget: int) -> str:
    header = "Source chunks:"
    used = count_tokens(header + "\n")
    lines: list[str] = []
    for chunk in chunks:
        label = f"[{chunk.document_id} #{chunk.chunk_index}] "
        line = label + chunk.text + (" (truncated)" if chunk.truncated else "")
        room = budget - used - count_tokens(label + " (truncated)\n")
        while count_tokens(line + "\n") > budget - used and room > 0:
            # the engine fitted the chunk texts alone; the label may push the last one over
            line = label + truncate_to_tokens(chunk.text, room) + " (truncated)"
            room -= 1
        if count_tokens(line + "\n") > budget - used:
            break
        lines.append(line)
        used += count_tokens(line + "\n")
    return "\n".join([header, *lines]) if lines else ""


def memory_metadata(memory: RecalledMemory, chunk_text: str | None = None) -> dict[str, Any]:
    """A memory's ids, dates, labels and scores as JSON-ready metadata for a framework document.

    The user's own ``metadata`` stays one nested dict, exactly as stored, so none of its keys
    can shadow (or be shadowed by) the engine's.
    """
    out: dict[str, Any] = {
        "id": memory.id,
        "fact_type": memory.fact_type,
        "context": memory.context,
        "occurred_start": _iso(memory.occurred_start),
        "occurred_end": _iso(memory.occurred_end),
        "mentioned_at": _iso(memory.mentioned_at),
        "tags": list(memory.tags),
        "entities": list(memory.entities),
        "document_id": memory.document_id,
        "chunk_id": memory.chunk_id,
        "scores": memory.scores.model_dump(),
        "source_ranks": dict(memory.source_ranks),
        "instruction": memory.instruction,
        "metadata": memory.metadata,
    }
    if chunk_text is not None:
        out["chunk"] = chunk_text
    return out


def chunk_texts(result: RecallResult) -> dict[str, str]:
    """Chunk text by chunk id, for putting each memory's source next to it."""
    return {chunk.chunk_id: chunk.text for chunk in result.chunks}


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None
