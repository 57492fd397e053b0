"""A cross-encoder as a LlamaIndex node postprocessor, its documented place for a reranker.

LlamaIndex's own ``SentenceTransformerRerank`` needs a sentence-transformers model folder
(fetched from the Hugging Face hub); this one runs hindsight-tools' ``OnnxCrossEncoder``, so
the peer reranks with the very model file hindsight-tools does.
"""

from __future__ import annotations

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from hindsight_tools.recall.rerank.onnx import OnnxCrossEncoder


class CrossEncoderRerank(BaseNodePostprocessor):
    """The ``top_n`` nodes of the ones given, by the cross-encoder's score, best first."""

    top_n: int = Field(description="Nodes to return, sorted by score.")
    source: str = Field(description="Which model file scores, in words for the report.")
    _model: OnnxCrossEncoder = PrivateAttr()

    def __init__(self, model: OnnxCrossEncoder, *, top_n: int, source: str) -> None:
        if top_n < 1:
            raise ValueError(f"top_n must be at least 1, got {top_n}")
        # mypy types a pydantic __init__ by the calling class's fields, here the base's
        super().__init__(top_n=top_n, source=source)  # type: ignore[call-arg]
        self._model = model

    @classmethod
    def class_name(cls) -> str:
        return "CrossEncoderRerank"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise ValueError("CrossEncoderRerank needs the query (a QueryBundle)")
        # the memory's text alone: the metadata (bank, dia_id) would only be noise to the model
        texts = [found.node.get_content(metadata_mode=MetadataMode.NONE) for found in nodes]
        scores = self._model.score(query_bundle.query_str, texts)
        rescored = [
            NodeWithScore(node=found.node, score=score)
            for found, score in zip(nodes, scores, strict=True)
        ]
        # sorted() is stable with reverse too: equal scores keep the fused order
        return sorted(rescored, key=lambda found: found.get_score(), reverse=True)[: self.top_n]
