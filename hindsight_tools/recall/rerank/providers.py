"""Reranker providers and the choice among them (``HINDSIGHT_API_RERANKER_PROVIDER``).

``auto`` takes the first of local → onnx that loads, logged once, and falls back to
passthrough; an explicit list such as ``cohere,onnx,passthrough`` is a failover order at
recall time. Models are loaded once per process and shared by every engine.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from hindsight_tools.errors import RerankerError
from hindsight_tools.recall.rerank.base import PassthroughReranker, RerankChain, Reranker
from hindsight_tools.settings import RERANKER_PROVIDERS, Settings

log = logging.getLogger(__name__)

AUTO_ORDER = ("local", "onnx")


def provider_names(spec: str) -> list[str]:
    """``"cohere, onnx"`` → ``["cohere", "onnx"]``; ``auto`` expanded; names checked."""
    names = [n.strip().lower() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in RERANKER_PROVIDERS]
    if not names or unknown:
        raise RerankerError(
            f"reranker_provider {spec!r}: allowed values are {', '.join(RERANKER_PROVIDERS)}, "
            "or a comma-separated failover list of them"
        )
    return names


def build_rerank_chain(settings: Settings) -> RerankChain:
    names = provider_names(settings.reranker_provider)
    if names == ["auto"]:
        return RerankChain([_auto(settings), PassthroughReranker()])
    loaded: list[Reranker] = []
    for name in names:
        if name == "auto":
            loaded.append(_auto(settings))
            continue
        try:
            loaded.append(load_reranker(name, settings))
        except RerankerError as exc:
            if len(names) == 1:
                raise
            log.warning("reranker %s unavailable, skipped in the failover list: %s", name, exc)
    if not loaded:
        raise RerankerError(f"no reranker of {settings.reranker_provider!r} could be loaded")
    if not isinstance(loaded[-1], PassthroughReranker):
        loaded.append(PassthroughReranker())  # a recall must never fail for want of scores
    return RerankChain(loaded)


def load_reranker(name: str, settings: Settings) -> Reranker:
    if name == "passthrough":
        return PassthroughReranker()
    if name == "local":
        return _local(settings.reranker_local_model, settings.reranker_local_batch_size)
    if name == "onnx":
        return _onnx(
            settings.reranker_onnx_model_dir,
            settings.reranker_onnx_batch_size,
            settings.reranker_onnx_max_length,
            settings.reranker_onnx_threads,
        )
    if name == "cohere":
        from hindsight_tools.recall.rerank.cohere import CohereReranker

        if settings.reranker_cohere_api_key is None:
            raise RerankerError("the cohere reranker needs HINDSIGHT_API_RERANKER_COHERE_API_KEY")
        return CohereReranker(
            api_key=settings.reranker_cohere_api_key.get_secret_value(),
            model=settings.reranker_cohere_model,
            base_url=settings.reranker_cohere_base_url,
            timeout=settings.reranker_http_timeout,
        )
    if name == "tei":
        from hindsight_tools.recall.rerank.tei import TeiReranker

        if not settings.reranker_tei_url:
            raise RerankerError("the tei reranker needs HINDSIGHT_API_RERANKER_TEI_URL")
        return TeiReranker(
            settings.reranker_tei_url,
            batch_size=settings.reranker_tei_batch_size,
            timeout=settings.reranker_http_timeout,
        )
    raise RerankerError(f"unknown reranker {name!r}; allowed: {', '.join(RERANKER_PROVIDERS)}")


def _auto(settings: Settings) -> Reranker:
    key = (
        settings.reranker_local_model,
        settings.reranker_local_batch_size,
        settings.reranker_onnx_model_dir,
        settings.reranker_onnx_batch_size,
        settings.reranker_onnx_max_length,
        settings.reranker_onnx_threads,
    )
    if key not in _AUTO_CHOICES:
        _AUTO_CHOICES[key] = _choose(settings)
    return _AUTO_CHOICES[key]


# auto's decision per model configuration: made, and logged, once per process
_AUTO_CHOICES: dict[tuple[object, ...], Reranker] = {}


def _choose(settings: Settings) -> Reranker:
    reasons = []
    for name in AUTO_ORDER:
        try:
            reranker = load_reranker(name, settings)
        except RerankerError as exc:
            reasons.append(f"{name}: {exc}")
            continue
        log.info("reranker auto: using %s%s", name, f" ({'; '.join(reasons)})" if reasons else "")
        return reranker
    log.warning("reranker auto: no cross-encoder could load, using passthrough (%s)", reasons)
    return PassthroughReranker()


@functools.cache
def _local(model: str, batch_size: int) -> Reranker:
    from hindsight_tools.recall.rerank.local import LocalCrossEncoder

    return LocalCrossEncoder(model, batch_size=batch_size)


@functools.cache
def _onnx(model_dir: Path | None, batch_size: int, max_length: int, threads: int) -> Reranker:
    from hindsight_tools.recall.rerank.onnx import OnnxCrossEncoder

    return OnnxCrossEncoder(
        model_dir, batch_size=batch_size, max_length=max_length, threads=threads
    )


__all__ = ["AUTO_ORDER", "build_rerank_chain", "load_reranker", "provider_names"]
