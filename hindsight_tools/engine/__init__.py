"""``MemoryEngine`` and ``AsyncMemoryEngine``: the public entry points.

Both hold an :class:`~hindsight_tools.engine.core.EngineCore` (settings, models, validation,
the programs of every call) and differ only in how they run a program's steps: the sync
engine on threads and a sync pool, the async engine on the event loop and an async pool.
Their public methods and signatures are the same (``tests/test_engine_surface.py``).
"""

from hindsight_tools.engine.aio import AsyncMemoryEngine
from hindsight_tools.engine.sync import MemoryEngine

__all__ = ["AsyncMemoryEngine", "MemoryEngine"]
