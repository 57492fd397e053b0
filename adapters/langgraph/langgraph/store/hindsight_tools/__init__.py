"""A LangGraph store (``BaseStore``) on hindsight-tools agent memory."""

from langgraph.store.hindsight_tools.store import HindsightStore

__all__ = ["HindsightStore"]
