"""LangChain integration of hindsight-tools: a retriever and the recall tool."""

from langchain_hindsight_tools.retrievers import HindsightRetriever
from langchain_hindsight_tools.tools import HindsightRecallTool

__all__ = ["HindsightRecallTool", "HindsightRetriever"]
