"""The in-process semantic link neighbours of an import, against a plain brute-force oracle:
each memory's top k among everything held so far, itself excluded, above the threshold."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hindsight_tools.retain.neighbours import NeighbourIndex, SemanticLinks


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b)) / math.sqrt(float(np.dot(a, a)) * float(np.dot(b, b)))


def _assert_links(
    links: SemanticLinks,
    ids: list[str],
    vectors: np.ndarray,
    first: int,
    top_k: int,
    threshold: float,
) -> None:
    """Links of ids[first:] among all of ids, checked one memory at a time without numpy
    tricks: each memory's weights are its top k similarities above the threshold (which of
    two equally similar memories is kept may differ), and each link's weight is the
    similarity of its two ends."""
    position = {memory: i for i, memory in enumerate(ids)}
    found: dict[str, list[float]] = {}
    for f, t, w in zip(links.from_ids, links.to_ids, links.weights, strict=True):
        assert f != t
        assert w == pytest.approx(
            min(_cosine(vectors[position[f]], vectors[position[t]]), 1.0), abs=1e-5
        )
        found.setdefault(f, []).append(w)
    for i in range(first, len(ids)):
        scored = sorted(
            (_cosine(vectors[i], vectors[j]) for j in range(len(ids)) if j != i), reverse=True
        )
        expected = [min(s, 1.0) for s in scored[:top_k] if s >= threshold]
        assert sorted(found.get(ids[i], []), reverse=True) == pytest.approx(expected, abs=1e-5)
    assert set(found) <= set(ids[first:])


def _clustered(count: int, seed: int = 3) -> np.ndarray:
    """Vectors in a few tight clusters, so that many pairs pass a high threshold."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(5, 16))
    return (centres[np.arange(count) % 5] + 0.3 * rng.normal(size=(count, 16))).astype(np.float32)


def test_each_batch_links_to_what_is_held_and_to_itself_as_the_sql_path_does() -> None:
    vectors = _clustered(700)  # batches longer than the rows taken at a time
    ids = [f"m{i}" for i in range(700)]
    held = NeighbourIndex(ids[:100], vectors[:100], capacity=1000, top_k=7, threshold=0.6)
    for start, stop in ((100, 130), (130, 700)):
        links = held.add(ids[start:stop], vectors[start:stop])
        assert links is not None
        assert links.bank_size == start
        _assert_links(links, ids[:stop], vectors[:stop], start, 7, 0.6)
        assert len(held) == stop


def test_the_threshold_and_top_k_bound_the_links() -> None:
    vectors = _clustered(60)
    ids = [f"m{i}" for i in range(60)]
    links = NeighbourIndex([], np.empty((0, 0), np.float32), 100, top_k=3, threshold=0.9).add(
        ids, vectors
    )
    assert links is not None and links.bank_size == 0
    per_memory = {f: links.from_ids.count(f) for f in set(links.from_ids)}
    assert max(per_memory.values()) == 3
    assert min(links.weights) >= 0.9
    assert all(f != t for f, t in zip(links.from_ids, links.to_ids, strict=True))
    _assert_links(links, ids, vectors, 0, 3, 0.9)


def test_a_lone_first_memory_has_no_neighbours() -> None:
    held = NeighbourIndex([], np.empty((0, 0), np.float32), 10, top_k=5, threshold=0.0)
    links = held.add(["only"], np.ones((1, 4), np.float32))
    assert links == SemanticLinks(0, [], [], [])


def test_past_its_capacity_it_gives_up_for_the_rest_of_the_import() -> None:
    vectors = _clustered(30)
    held = NeighbourIndex([], np.empty((0, 0), np.float32), 25, top_k=5, threshold=0.0)
    assert held.add([f"a{i}" for i in range(20)], vectors[:20]) is not None
    assert held.add([f"b{i}" for i in range(10)], vectors[20:]) is None
    assert held.full
    # a smaller batch that would fit again does not: the held copy is gone
    assert held.add(["c"], vectors[:1]) is None


def test_a_bank_already_past_the_capacity_is_not_held() -> None:
    held = NeighbourIndex(["a", "b", "c"], _clustered(3), 2, top_k=5, threshold=0.0)
    assert held.full
    assert held.add(["d"], _clustered(1)) is None


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_similarity_does_not_depend_on_the_vectors_length(scale: float) -> None:
    vectors = _clustered(40)
    ids = [f"m{i}" for i in range(40)]
    scaled = vectors * np.float32(scale)
    links = NeighbourIndex([], np.empty((0, 0), np.float32), 100, top_k=4, threshold=0.5).add(
        ids, scaled
    )
    assert links is not None
    _assert_links(links, ids, vectors, 0, 4, 0.5)
