"""LlamaIndex retriever over a hindsight-tools memory bank."""

from llama_index.retrievers.hindsight_tools.base import HindsightRetriever

__all__ = ["HindsightRetriever"]
