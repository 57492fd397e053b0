"""PNG figures for the comparison (matplotlib, no display needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.comparison import SystemRun
from benchmarks.scale import ScalePoint


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only; the benchmark machines have no screen
    import matplotlib.pyplot as plt

    return plt


def recall_curves(runs: Sequence[SystemRun], path: Path) -> Path:
    """Non-adversarial recall@k against k, one line per system."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for run in runs:
        ks = list(run.report.ks)
        values = [run.report.overall_no_adversarial.recall.get(k) for k in ks]
        points = [(k, v) for k, v in zip(ks, values, strict=True) if v is not None]
        axes.plot(*zip(*points, strict=True), marker="o", label=run.name)
    axes.set_xscale("log")
    ks = sorted({k for run in runs for k in run.report.ks})
    axes.set_xticks(ks, [str(k) for k in ks])
    axes.xaxis.set_minor_locator(_no_ticks())  # only the measured ks are labelled
    axes.set_xlabel("k (memories returned)")
    axes.set_ylabel("recall@k, non-adversarial")
    axes.set_ylim(0, 1)
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8, loc="lower right")
    axes.set_title("Turn-level recall@k on LoCoMo dev")
    return _save(plt, figure, path)


def latency_bars(runs: Sequence[SystemRun], path: Path) -> Path:
    """Recall p50 and p95 per system, on a log axis (they span three orders of magnitude)."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7, 0.6 * len(runs) + 1.5))
    names = [run.name for run in runs]
    p50 = [run.report.latency.p50_ms or 0.0 for run in runs]
    p95 = [run.report.latency.p95_ms or 0.0 for run in runs]
    rows = range(len(runs))
    axes.barh([r + 0.2 for r in rows], p50, height=0.4, label="p50")
    axes.barh([r - 0.2 for r in rows], p95, height=0.4, label="p95")
    axes.set_yticks(list(rows), names, fontsize=8)
    axes.invert_yaxis()
    axes.set_xscale("log")
    axes.set_xlabel("recall wall time, ms (log scale)")
    axes.grid(True, axis="x", alpha=0.3)
    axes.legend(fontsize=8)
    axes.set_title("Recall latency per question")
    return _save(plt, figure, path)


def scale_lines(points: Sequence[ScalePoint], path: Path) -> Path:
    """hindsight-tools mid recall and the kNN floor against bank size, p50 solid, p95 dashed."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.5))
    sizes = [p.size for p in points]
    for label, p50, p95 in (
        (
            "hindsight-tools recall (mid)",
            [p.recall_p50_ms for p in points],
            [p.recall_p95_ms for p in points],
        ),
        (
            "single kNN query (floor)",
            [p.floor_p50_ms for p in points],
            [p.floor_p95_ms for p in points],
        ),
    ):
        (line,) = axes.plot(sizes, p50, marker="o", label=f"{label} p50")
        axes.plot(
            sizes, p95, marker="o", linestyle="--", color=line.get_color(), label=f"{label} p95"
        )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xticks(sizes, [f"{s:,}" for s in sizes])
    axes.xaxis.set_minor_locator(_no_ticks())
    axes.set_xlabel("memories in the bank")
    axes.set_ylabel("ms (log scale)")
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8)
    axes.set_title("Recall latency against bank size")
    return _save(plt, figure, path)


def _no_ticks() -> Any:
    from matplotlib.ticker import NullLocator

    return NullLocator()


def _save(plt: Any, figure: Any, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
