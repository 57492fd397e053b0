"""``hindsight-tools demo``: retain a small invented life and ask it four kinds of question."""

from __future__ import annotations

import json
import time
from importlib import resources
from typing import Any

from hindsight_tools.cli.format import format_result
from hindsight_tools.engine import MemoryEngine

# "Now" for the demo's relative dates, so its output doesn't change with the calendar.
DEMO_NOW = "2025-06-01T12:00:00Z"
DEMO_QUERIES: tuple[tuple[str, str], ...] = (
    ("names", "What does Priya think of Marco?"),
    ("paraphrase", "What does she like to eat?"),
    ("time", "What did Priya do in summer 2023?"),
    ("time", "What happened last spring?"),
    ("relations", "Why did Priya move to Amsterdam?"),
)


def demo_items() -> list[dict[str, Any]]:
    text = resources.files("hindsight_tools.data").joinpath("demo_memories.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def run_demo(bank: str = "demo", *, max_results: int = 5) -> None:
    items = demo_items()
    started = time.perf_counter()
    with MemoryEngine() as engine:
        print(f"store: {engine.settings.database_url or engine.settings.data_dir}")
        engine.delete_bank(bank)
        result = engine.retain(bank, items)
        print(
            f"retained {len(result.ids)} memories into bank {bank!r} "
            f"in {time.perf_counter() - started:.1f}s (model load included)\n"
        )
        for kind, query in DEMO_QUERIES:
            recalled = engine.recall(bank, query, query_timestamp=DEMO_NOW, max_tokens=400)
            shown = recalled.model_copy(update={"memories": recalled.memories[:max_results]})
            print(f"[{kind}] {query}")
            print(format_result(shown))
            print()
