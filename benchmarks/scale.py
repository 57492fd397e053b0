"""Recall latency against bank size, read from `benchmarks/recall_bench.py` reports.

recall_bench.py measures hindsight-tools (budgets low/mid/high) next to the single-kNN floor on
synthetic banks; this module only reads its Markdown so the comparison plots numbers that a
stated recall_bench command measured, and nothing else. Per bank section
(``### big-10000: 10,000 memories, …``) it takes the rows ``recall mid`` and ``floor: kNN``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_SECTION = re.compile(r"^### (?P<bank>\S+): (?P<size>[\d,]+) memories")
_COMMAND = re.compile(r"^`(?P<command>.+)`$")
_RERANKER = re.compile(r"reranker: (?P<reranker>[\w-]+)")
_ROW = re.compile(r"^\| (?P<label>[^|]+?) \| (?P<p50>[\d.]+) \| (?P<p95>[\d.]+) \|")
ROWS = {"recall mid": "recall", "floor: kNN": "floor"}


@dataclass(frozen=True)
class ScalePoint:
    size: int
    bank: str
    recall_p50_ms: float
    recall_p95_ms: float
    floor_p50_ms: float
    floor_p95_ms: float
    command: str
    source: str
    reranker: str = "?"


def parse_report(text: str, source: str = "") -> list[ScalePoint]:
    """Every bank section of one report that has both rows; sections without them are skipped."""
    command = ""
    reranker = "?"
    points: list[ScalePoint] = []
    bank: str | None = None
    size = 0
    found: dict[str, tuple[float, float]] = {}

    def close() -> None:
        if bank is not None and set(found) == set(ROWS.values()):
            points.append(
                ScalePoint(
                    size=size,
                    bank=bank,
                    recall_p50_ms=found["recall"][0],
                    recall_p95_ms=found["recall"][1],
                    floor_p50_ms=found["floor"][0],
                    floor_p95_ms=found["floor"][1],
                    command=command,
                    source=source,
                    reranker=reranker,
                )
            )

    for line in text.splitlines():
        if not command and (match := _COMMAND.match(line)):
            command = match["command"]
        elif bank is None and (match := _RERANKER.search(line)):
            reranker = match["reranker"]
        elif match := _SECTION.match(line):
            close()
            bank, size, found = match["bank"], int(match["size"].replace(",", "")), {}
        elif line.startswith("## "):  # the latency part is over
            close()
            bank, found = None, {}
        elif bank is not None and (match := _ROW.match(line)) and match["label"] in ROWS:
            found[ROWS[match["label"]]] = (float(match["p50"]), float(match["p95"]))
    close()
    return points


def read_reports(paths: Iterable[Path]) -> list[ScalePoint]:
    """Points of all reports by size; for a size measured twice the later report wins."""
    by_size: dict[int, ScalePoint] = {}
    for path in paths:
        for point in parse_report(path.read_text(), str(path)):
            by_size[point.size] = point
    return [by_size[size] for size in sorted(by_size)]
