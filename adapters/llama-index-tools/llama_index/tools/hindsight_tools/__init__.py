"""LlamaIndex tool spec for hindsight-tools memory: recall and retain."""

from llama_index.tools.hindsight_tools.base import HindsightToolSpec

__all__ = ["HindsightToolSpec"]
