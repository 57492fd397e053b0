"""How many candidates each arm may return for a given ``budget`` (docs/design.md, Budgets and
packing)."""

from __future__ import annotations

from hindsight_tools.models import Budget
from hindsight_tools.settings import Settings

_ADAPTIVE_SHARE: dict[Budget, float] = {"low": 0.025, "mid": 0.075, "high": 0.25}


def recall_budget(budget: Budget, max_tokens: int, settings: Settings) -> int:
    """Fixed ``low/mid/high`` sizes, or (adaptive) a share of ``max_tokens`` within min/max."""
    if settings.recall_budget_function == "adaptive":
        wanted = int(max_tokens * _ADAPTIVE_SHARE[budget])
        return max(settings.recall_budget_min, min(wanted, settings.recall_budget_max))
    fixed = {
        "low": settings.recall_budget_low,
        "mid": settings.recall_budget_mid,
        "high": settings.recall_budget_high,
    }
    return fixed[budget]


def rerank_depth(budget: Budget, settings: Settings) -> int:
    """How many of the best fused candidates a cross-encoder scores; the rest keep their
    fused order. Follows the budget so a quick recall stays quick."""
    depth = {
        "low": settings.reranker_depth_low,
        "mid": settings.reranker_depth_mid,
        "high": settings.reranker_depth_high,
    }[budget]
    return min(depth, settings.reranker_max_candidates)
