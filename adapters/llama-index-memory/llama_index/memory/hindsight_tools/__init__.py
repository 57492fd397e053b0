"""LlamaIndex memory backed by a hindsight-tools memory bank."""

from llama_index.memory.hindsight_tools.base import HindsightMemory
from llama_index.memory.hindsight_tools.block import HindsightMemoryBlock

__all__ = ["HindsightMemory", "HindsightMemoryBlock"]
