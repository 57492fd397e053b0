"""The graph arm on the real store."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from hindsight_tools import MemoryEngine
from hindsight_tools.models import FactType
from hindsight_tools.recall.arms.filters import NO_SCOPE
from hindsight_tools.recall.arms.graph import GraphQuery, graph_plan

ALL_TYPES: tuple[FactType, ...] = ("world", "experience", "observation")


def graph(engine: MemoryEngine, bank: str, query: str, **overrides: Any) -> dict[str, float]:
    fields: dict[str, Any] = {
        "bank_id": bank,
        "query_vector": engine._core.embedder.embed([query])[0],
        "query_entities": tuple(engine._core.entity_extractor(query)),
        "types": ALL_TYPES,
        "scope": NO_SCOPE,
        "limit": 100,
        "min_similarity": 0.3,
        "per_entity_limit": 200,
        "timeout_seconds": 10.0,
    }
    fields.update(overrides)
    return dict(engine._run(graph_plan(GraphQuery(**fields))))


@pytest.fixture
def linked(engine: MemoryEngine, bank: str) -> str:
    engine.retain(
        bank,
        [
            {
                "id": "seed",
                "text": "Nadia adopted a rescue greyhound named Pixel",
                "entities": ["Nadia", "Pixel"],
            },
            {"id": "same-entity", "text": "Pixel hates thunderstorms", "entities": ["Pixel"]},
            {
                "id": "two-entities",
                "text": "Nadia bought Pixel a raincoat",
                "entities": ["Nadia", "Pixel"],
            },
            {
                "id": "unrelated",
                "text": "The bakery on Elm Street sells rye bread",
                "entities": ["Elm Street"],
            },
            {
                "id": "named",
                "text": "Quentin repaired the roof last autumn",
                "entities": ["Quentin"],
            },
        ],
    )
    engine.retain(
        bank,
        [
            {
                "id": "effect",
                "text": "The neighbours complained about noise",
                "entities": [],
                "causal_links": [{"target_id": "seed", "link_type": "caused_by", "weight": 0.9}],
            }
        ],
    )
    engine.retain(
        bank,
        [
            {
                "id": "seed",
                "text": "Nadia adopted a rescue greyhound named Pixel",
                "entities": ["Nadia", "Pixel"],
                "causal_links": [{"target_id": "effect", "link_type": "causes", "weight": 0.8}],
            }
        ],
    )
    return bank


SEED_TEXT = "Nadia adopted a rescue greyhound named Pixel"


def test_graph_scores_entities_and_causal_links(engine: MemoryEngine, linked: str) -> None:
    # A high similarity floor makes the seed memory the only seed.
    scores = graph(engine, linked, SEED_TEXT, min_similarity=0.95)
    assert scores["seed"] > scores["same-entity"]  # seeds stay, scored by their own entities
    assert scores["two-entities"] > scores["same-entity"]
    assert scores["same-entity"] == pytest.approx(0.4621, abs=1e-3)  # tanh(0.5 · 1 shared)
    assert scores["effect"] >= 0.8  # linked only causally, from the seed
    assert "unrelated" not in scores


def test_entities_named_in_the_query_are_seeds(engine: MemoryEngine, linked: str) -> None:
    assert "named" not in graph(engine, linked, SEED_TEXT, min_similarity=0.95)
    scores = graph(engine, linked, "Tell me about Quentin", min_similarity=0.95)
    assert scores["named"] == pytest.approx(0.4621, abs=1e-3)


def test_graph_respects_filters(engine: MemoryEngine, linked: str) -> None:
    scores = graph(engine, linked, SEED_TEXT, min_similarity=0.95, types=("observation",))
    assert scores == {}


@pytest.fixture
def crowded(engine: MemoryEngine, bank: str) -> str:
    engine.retain(
        bank,
        [
            {
                "text": f"Team note {i}: Orla and Bram discussed the Falcon project",
                "entities": ["Orla", "Bram", "Falcon"],
            }
            for i in range(300)
        ]
        + [{"id": "cause", "text": "The Falcon project was cancelled", "entities": ["Falcon"]}],
    )
    return bank


def test_graph_drops_the_entity_signal_past_its_time_limit(
    engine: MemoryEngine, crowded: str, caplog: pytest.LogCaptureFixture
) -> None:
    full = graph(engine, crowded, "What did Orla and Bram discuss about Falcon?")
    assert any(score >= 0.9 for score in full.values())  # three shared entities: tanh(1.5)
    # 10 ms: the entity query over 300 memories takes several times that, and the trivial
    # statements around it (savepoints, setting the limit back), run under the same limit,
    # don't come near it on a loaded host, as they did with 1 ms
    with caplog.at_level(logging.WARNING):
        hurried = graph(
            engine, crowded, "What did Orla and Bram discuss about Falcon?", timeout_seconds=0.01
        )
    assert "entity signal dropped" in caplog.text
    assert max(full.values()) > 1.5  # entity signal (≈0.91) plus a semantic link
    assert hurried and max(hurried.values()) <= 1.0  # only the link signals remain


def test_graph_top_is_the_same_with_and_without_the_score_cutoff(
    engine: MemoryEngine, bank: str
) -> None:
    # Many memories share the seeds' entities, so the summed scores tie in large groups
    # and the tie-break by similarity decides who makes the cut.
    engine.retain(
        bank,
        [
            {"id": f"m{i:02d}", "text": f"Sam and Priya talked about topic {i} in Lisbon"}
            for i in range(40)
        ],
    )

    def ranked(limit: int, types: tuple[str, ...]) -> list[tuple[str, float]]:
        query = GraphQuery(
            bank_id=bank,
            query_vector=engine._core.embedder.embed(["What did Sam say about topic 7?"])[0],
            query_entities=("Sam",),
            types=types,  # type: ignore[arg-type]
            scope=NO_SCOPE,
            limit=limit,
            min_similarity=0.3,
            per_entity_limit=200,
            timeout_seconds=10.0,
        )
        return engine._run(graph_plan(query))

    full = ranked(1000, ALL_TYPES)
    assert len(full) > 12
    for limit in (5, 12):
        assert ranked(limit, ALL_TYPES) == full[:limit]  # unfiltered: joined past the cut only
        assert ranked(limit, ("world",)) == full[:limit]  # filtered: every candidate joined
