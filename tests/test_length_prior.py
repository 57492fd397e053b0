"""Late interaction's length prior: what it takes from a long memory's score, what it leaves,
and that the setting reaches a recall."""

from __future__ import annotations

import math

import pytest

from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.recall.prerank import LENGTH_FREE_CHARS, length_prior


def test_memories_up_to_the_free_length_keep_their_scores() -> None:
    scores = {"short": 0.81, "edge": 0.80, "empty": 0.5}
    lengths = {"short": 20, "edge": LENGTH_FREE_CHARS, "empty": 0}
    assert length_prior(scores, lengths, 0.05) == scores


def test_a_longer_memory_loses_the_log_of_its_length_over_the_free_one() -> None:
    lengths = {"e": round(LENGTH_FREE_CHARS * math.e), "e2": round(LENGTH_FREE_CHARS * math.e**2)}
    adjusted = length_prior({"e": 0.9, "e2": 0.9}, lengths, 0.02)
    assert adjusted["e"] == pytest.approx(0.9 - 0.02, abs=1e-5)
    assert adjusted["e2"] == pytest.approx(0.9 - 0.04, abs=1e-5)
    # the order it gives: a short memory 0.01 behind a long one's MaxSim comes first
    order = length_prior({"long": 0.83, "short": 0.82}, {"long": 2_000, "short": 80}, 0.02)
    assert max(order, key=order.__getitem__) == "short"


def test_the_setting_reaches_the_late_interaction_scores_of_a_recall(
    engine: MemoryEngine, settings: Settings, bank: str
) -> None:
    long_text = "Notes on the garden: " + "tomatoes need sun, water and patience. " * 40
    engine.retain(
        bank,
        [
            {"id": "long", "text": long_text},
            {"id": "short", "text": "Always water the tomatoes before nine in the morning."},
        ],
    )

    def late_scores(weight: float) -> dict[str, float]:
        own = settings.with_overrides({"late_interaction_length_prior": weight})
        with MemoryEngine(settings=own, embedder=engine._core.embedder) as other:
            found = other.recall(bank, "When should the tomatoes be watered?", trace=True)
        scores = {m.id: m.scores.late_interaction for m in found.memories}
        assert None not in scores.values()
        return scores  # type: ignore[return-value]

    plain, adjusted = late_scores(0.0), late_scores(0.05)
    assert adjusted["short"] == pytest.approx(plain["short"], abs=1e-6)
    taken = 0.05 * math.log(len(long_text) / LENGTH_FREE_CHARS)
    assert adjusted["long"] == pytest.approx(plain["long"] - taken, abs=1e-6)
