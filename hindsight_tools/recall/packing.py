"""Filling the result top-down into token budgets (docs/design.md, Budgets and packing)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from hindsight_tools.encoders.tokens import count_tokens, truncate_to_tokens

T = TypeVar("T")


def fill_token_budget(items: Sequence[tuple[T, str]], max_tokens: int) -> list[tuple[T, int]]:
    """Walk ``items`` in order and keep them while their tokens fit; returns (item, tokens).

    The walk stops at the first memory that doesn't fit rather than skipping to smaller
    ones, so the result is always a prefix of the ranking and never holds half a memory.
    """
    kept: list[tuple[T, int]] = []
    used = 0
    for item, text in items:
        tokens = count_tokens(text)
        if used + tokens > max_tokens:
            break
        kept.append((item, tokens))
        used += tokens
    return kept


def fill_chunks(texts: Sequence[str], max_tokens: int) -> list[tuple[str, int, bool]]:
    """Chunks in rank order into ``max_tokens``; the first that doesn't fit is cut to the rest.

    Returns (text, tokens, truncated) for each chunk kept.
    """
    kept: list[tuple[str, int, bool]] = []
    used = 0
    for text in texts:
        room = max_tokens - used
        if room <= 0:
            break
        tokens = count_tokens(text)
        if tokens <= room:
            kept.append((text, tokens, False))
            used += tokens
            continue
        cut = truncate_to_tokens(text, room)
        if cut:
            kept.append((cut, count_tokens(cut), True))
        break
    return kept
