"""Composite embeddings: the synthetic banks' vectors without embedding 100k texts for real.

The real model embeds about 100 texts/s on a 2-core CPU: 100k memories would take close to
20 minutes before the first recall. :class:`CompositeEmbedder` embeds each template
*component* once with the real model and represents a text as the L2-normalised sum of its
components' vectors plus a little Gaussian noise seeded by the text, so the vectors cluster
the way real ones do (see :mod:`benchmarks.recall_bench`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from hindsight_tools.encoders.embedding import Embedder, Vectors


class CompositeEmbedder:
    """An :class:`Embedder` for the synthetic texts: sum of component vectors plus noise.

    Texts must be registered (by the generator) with their components before they are
    embedded; an unregistered text falls back to the real model. Deterministic: the noise
    is seeded by the text itself.
    """

    def __init__(self, real: Embedder, seed: int, noise: float = 0.15) -> None:
        self._real = real
        self._seed = seed
        self._noise = noise  # noise norm relative to the component sum's norm
        self._parts: dict[str, tuple[str, ...]] = {}
        self._questions: set[str] = set()
        self._units: dict[str, Vectors] = {}

    @property
    def name(self) -> str:
        return f"composite({self._real.name})"

    @property
    def dimension(self) -> int:
        return self._real.dimension

    def register(self, text: str, parts: tuple[str, ...], *, question: bool = False) -> None:
        self._parts[text] = parts
        if question:
            self._questions.add(text)

    def embed_components(self) -> int:
        """Embed every component not yet embedded with the real model; how many there were."""
        missing = sorted({p for ps in self._parts.values() for p in ps} - self._units.keys())
        for part, vector in zip(missing, self._real.embed(missing), strict=True):
            self._units[part] = vector
        return len(missing)

    def embed(self, texts: Sequence[str]) -> Vectors:
        charged = [t for t in texts if t in self._questions]
        if charged:
            self._real.embed(charged)  # recall pays what embedding a real question costs
        return self.vectors(texts)

    def vectors(self, texts: Sequence[str]) -> Vectors:
        """The composite vectors, without charging the real model's time for questions."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def _vector(self, text: str) -> Vectors:
        parts = self._parts.get(text)
        if parts is None:
            return np.asarray(self._real.embed([text])[0], dtype=np.float32)
        if any(p not in self._units for p in parts):
            self.embed_components()
        total = np.sum([self._units[p] for p in parts], axis=0, dtype=np.float64)
        digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
        rng = np.random.default_rng([self._seed, int.from_bytes(digest, "big")])
        scale = self._noise * float(np.linalg.norm(total)) / np.sqrt(self.dimension)
        noisy = total + rng.normal(0.0, scale, self.dimension)
        return (noisy / np.linalg.norm(noisy)).astype(np.float32)
