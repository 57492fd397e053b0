"""The filter benchmark's Markdown report (see :mod:`benchmarks.filter_bench`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from benchmarks.filter_bench import (
    ARMS,
    CONFIGS,
    DIMENSION,
    LIST_LIMIT,
    RETAIN_BATCH,
    Build,
    Results,
)
from benchmarks.recall_bench_data import NOW
from benchmarks.recall_bench_timing import percentile


def _ms(seconds: float) -> str:
    return "–" if seconds != seconds else f"{seconds * 1000:.1f}"


def _index_use(lines: Sequence[str]) -> str:
    """The indexes a plan reads, as Markdown."""
    text = " ".join(lines)
    found = set(re.findall(r"Index (?:Only )?Scan (?:Backward )?(?:using|on) (\w+)", text))
    return ", ".join(f"`{i}`" for i in sorted(found)) or "no index"


def render(
    command: str,
    facts: Mapping[str, str],
    build: Build,
    asked: int,
    results: Results,
) -> str:
    lines = [
        "# Filter benchmark",
        "",
        f"`{command}`",
        "",
        *(f"- {k}: {v}" for k, v in facts.items()),
        "",
        "## Bank",
        "",
    ]
    size_note = "" if build.size == asked else f" (asked for {asked:,})"
    if build.retained:
        rate = build.retained / build.seconds if build.seconds else float("nan")
        built = f"{build.retained:,} retained by this run in {build.seconds:.0f} s ({rate:.0f}/s)"
    else:
        built = "reused from an earlier run"
    if build.deleted:
        built += f" ({build.deleted:,} memories beyond the size deleted first)"
    lines += [
        f"One bank of **{build.size:,} memories**{size_note}: {built}, batches of "
        f"{RETAIN_BATCH:,}, entities and links built as in normal use; `ANALYZE` after.",
        "Vectors: hashing embedder (normalised sum of per-word random unit vectors, "
        f"{DIMENSION} dimensions; no model). Reranker: passthrough; late interaction off; "
        "budget mid; questions asked at " + NOW.date().isoformat() + ".",
        "",
        "| configuration | filter | memories of the bank that pass |",
        "|---|---|---|",
    ]
    for c in CONFIGS:
        share = results.matching[c.name] / build.size if build.size else 0.0
        lines.append(f"| {c.name} | {c.described} | {results.matching[c.name]:,} ({share:.1%}) |")
    questions = len(next(iter(results.samples.values()), []))
    lines += [
        "",
        f"## Recall, {questions} questions",
        "",
        "| configuration | p50 ms | p95 ms | "
        + " | ".join(f"{a} p50 ms" for a in ARMS)
        + " | memories returned (mean) | violations |",
        "|---|---|---|" + "---|" * len(ARMS) + "---|---|",
    ]
    for c in CONFIGS:
        samples = results.samples[c.name]
        walls = [s.wall for s in samples]
        arm_cells = []
        for arm in ARMS:
            values = [s.arms[arm] for s in samples if arm in s.arms]
            runs = "" if len(values) == len(samples) else f" ({len(values)} of {len(samples)})"
            arm_cells.append(_ms(percentile(values, 50)) + runs)
        returned = float(np.mean([s.returned for s in samples])) if samples else float("nan")
        violations = sum(s.violations for s in samples)
        lines.append(
            f"| {c.name} | {_ms(percentile(walls, 50))} | {_ms(percentile(walls, 95))} | "
            + " | ".join(arm_cells)
            + f" | {returned:.1f} | {violations} |"
        )
    base = results.samples[CONFIGS[0].name]
    base_p50 = percentile([s.wall for s in base], 50)
    lines += [
        "",
        "Per-arm times are from `trace.arms`; the temporal arm runs only for questions that "
        "name a time (how many in brackets). A violation is a returned memory that does not "
        "satisfy its filter.",
        "",
        "| configuration | p50 / unfiltered p50 |",
        "|---|---|",
    ]
    for c in CONFIGS[1:]:
        p50 = percentile([s.wall for s in results.samples[c.name]], 50)
        lines.append(f"| {c.name} | {p50 / base_p50:.2f}× |")
    lines += [
        "",
        "## Plans with the selective filter",
        "",
        f"`SELECT id FROM memory_units m WHERE m.bank_id = … AND <filter>` "
        f"(EXPLAIN, no ANALYZE): {_index_use(results.explain_plain)}.",
        "",
        "```",
        *results.explain_plain,
        "```",
        "",
        "The semantic arm's query as the recall builds it (mid budget, EXPLAIN, no ANALYZE): "
        f"{_index_use(results.explain_semantic)}.",
        "",
        "```",
        *results.explain_semantic,
        "```",
        "",
        f"## Listing (`list_memories`, limit {LIST_LIMIT}, best of 3)",
        "",
        "| page | offset | memories | ms |",
        "|---|---|---|---|",
        *(f"| {w} | {o:,} | {n} | {_ms(s)} |" for w, o, n, s in results.listings),
        "",
        "## What the figures show",
        "",
        *summary(results, base_p50),
    ]
    return "\n".join(lines)


def summary(results: Results, base_p50: float) -> list[str]:
    lines = []
    for c in CONFIGS[1:]:
        samples = results.samples[c.name]
        p50 = percentile([s.wall for s in samples], 50)
        returned = float(np.mean([s.returned for s in samples])) if samples else float("nan")
        lines.append(
            f"- {c.name}: p50 {_ms(p50)} ms against {_ms(base_p50)} ms unfiltered "
            f"({p50 / base_p50:.2f}×); {returned:.1f} memories returned on average, of "
            f"{results.matching[c.name]:,} that pass the filter."
        )
    total = sum(s.violations for ss in results.samples.values() for s in ss)
    count = sum(s.returned for ss in results.samples.values() for s in ss)
    lines.append(f"- {total} of {count:,} returned memories violate their filter.")
    return lines


# --- main ------------------------------------------------------------------------------------
