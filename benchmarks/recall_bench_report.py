"""The recall benchmark's Markdown report, from what a run measured."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchmarks.recall_bench_data import NOW
from benchmarks.recall_bench_timing import (
    EXPLAIN_MIN_SIZE,
    HNSW_INDEX,
    RETAIN_BATCH,
    BankLatency,
    Overlap,
    ms,
    percentile,
)
from hindsight_tools.recall.arms.base import ARM_ORDER

# the traced stages that get a column each, in pipeline order
STAGES = (
    "embed",
    "late_interaction_query",
    "time_parse",
    "arms",
    "fusion",
    "hydrate",
    "late_interaction",
    "rerank",
    "scoring",
    "token_filter",
)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


# stages that run at the same time: together they take as long as the slowest of them
SIDE_BY_SIDE = ("embed", "late_interaction_query")


def _named(stages: Mapping[str, float]) -> float:
    """Wall time of the named stages, side-by-side stages counted as their slowest."""
    apart = sum(stages.get(n, 0.0) for n in STAGES if n not in SIDE_BY_SIDE)
    return apart + max(stages.get(n, 0.0) for n in SIDE_BY_SIDE)


def latency_section(result: BankLatency) -> list[str]:
    header = ["", "p50 ms", "p95 ms", *[f"{s} p50" for s in STAGES], "other p50", "total p50"]
    rows = []
    for budget, samples in result.recall.items():
        walls = [s.wall for s in samples]
        staged = [percentile([s.stages.get(n, 0.0) for s in samples], 50) for n in STAGES]
        totals = [s.stages.get("total", float("nan")) for s in samples]
        other = [t - _named(s.stages) for s, t in zip(samples, totals, strict=True)]
        rows.append(
            [
                f"recall {budget}",
                ms(percentile(walls, 50)),
                ms(percentile(walls, 95)),
                *map(ms, staged),
                ms(percentile(other, 50)),
                ms(percentile(totals, 50)),
            ]
        )
    blank = [""] * (len(header) - 3)
    for name, values in (
        ("floor: kNN", result.floor),
        ("floor + embedding", result.floor_embedded),
    ):
        rows.append([name, ms(percentile(values, 50)), ms(percentile(values, 95)), *blank])
    mid = percentile([s.wall for s in result.recall["mid"]], 50)
    return [
        f"### {result.bank}: {result.size:,} memories, {result.questions} questions "
        f"({result.timed_questions} with a time expression)",
        "",
        *_table(header, rows),
        "",
        "Stage columns are p50 ms from `trace.stages`; *other* = total − named stages, the "
        "two question encoders counted once as they run side by side (what runs between "
        "the stages).",
        "",
        *_table(["arm p50 / p95 ms (candidates p50, runs)", *ARM_ORDER], _arm_rows(result)),
        "",
        "Semantic arm plan (EXPLAIN of the first question): "
        + ", ".join(
            f"{b} = {'HNSW index scan' if hnsw else 'exact scan'}"
            for b, hnsw in result.hnsw_plans.items()
        )
        + ".",
        "",
        f"**recall mid p50 / floor p50 = {mid / percentile(result.floor, 50):.1f}×**; "
        f"recall mid p50 / (floor + embedding) p50 = "
        f"**{mid / percentile(result.floor_embedded, 50):.1f}×**",
        "",
    ]


def _arm_rows(result: BankLatency) -> list[list[str]]:
    rows = []
    for budget, samples in result.recall.items():
        cells = []
        for arm in ARM_ORDER:
            ran = [s.arms[arm] for s in samples if arm in s.arms]
            if not ran:
                cells.append("–")
                continue
            # which arm makes a recall's tail shows only in the arms' own tails
            seconds = [r[0] for r in ran]
            candidates = percentile([r[1] for r in ran], 50)
            cells.append(
                f"{ms(percentile(seconds, 50))} / {ms(percentile(seconds, 95))} "
                f"({candidates:.0f}, {len(ran)})"
            )
        rows.append([f"recall {budget}", *cells])
    return rows


_VECTOR_LITERAL = re.compile(r"'\[[^\]]*\]'::vector")


def _short_vectors(line: str) -> str:
    # EXPLAIN inlines the query vector: hundreds of floats that say nothing about the plan
    return _VECTOR_LITERAL.sub("'[query vector]'::vector", line)


def explain_section(bank: str | None, lines: list[str] | None) -> list[str]:
    if bank is None or lines is None:
        return [f"Skipped: no bank of at least {EXPLAIN_MIN_SIZE:,} memories in this run.", ""]
    used = sorted({m.group(0) for line in lines for m in HNSW_INDEX.finditer(line)})
    verdict = f"uses {', '.join(f'`{name}`' for name in used)}" if used else "does NOT use"
    return [
        f"Semantic arm (mid budget, all fact types) on `{bank}`: the plan **{verdict}** "
        "(HNSW indexes).",
        "",
        "```",
        *map(_short_vectors, lines),
        "```",
        "",
    ]


def overlap_section(results: Sequence[Overlap]) -> list[str]:
    ks = list(next(iter(results[0].means.values())))
    rows = [
        [
            f"`{r.bank}`",
            variant,
            "yes" if r.plans.get(variant) else "no",
            f"{r.rows[variant]:.0f} / {r.rows['exact']:.0f}",
            *(f"{by_k[k]:.3f}" for k in ks),
        ]
        for r in results
        for variant, by_k in r.means.items()
    ]
    hnsw = [
        min(by_k.values())
        for r in results
        for variant, by_k in r.means.items()
        if r.plans.get(variant)
    ]
    verdict = (
        f"**{'met' if min(hnsw) >= 0.95 else 'NOT met'}** (worst {min(hnsw):.3f})"
        if hnsw
        else "not tested (no plan used the HNSW index)"
    )
    exact_hnsw = any(r.plans.get("exact") for r in results)
    return [
        f"The semantic arm filtered by bank and one fact type (cycling through the three), "
        f"{results[0].queries} questions per bank, arm limit {results[0].limit} (mid budget). "
        f"Exact = the same SQL with index scans off (its plan uses HNSW: "
        f"{'yes' if exact_hnsw else 'no'}). *As planned* is what recall runs; *HNSW forced* "
        f"turns off sequential, bitmap and sort paths so the iterative index scan itself is "
        f"measured. Rows: mean rows returned by the variant / by the exact search.",
        "",
        *_table(["bank", "variant", "plan uses HNSW", "rows", *(f"overlap@{k}" for k in ks)], rows),
        "",
        f"Target overlap ≥ 0.95 wherever the HNSW index is used: {verdict}.",
        "",
    ]


@dataclass
class Run:
    command: str
    facts: dict[str, str]
    banks: list[tuple[str, int, float]]  # bank, memories, seconds
    components: tuple[int, float]
    table_rows: int
    latency: list[BankLatency]
    explain_bank: str | None
    explain: list[str] | None
    overlap: list[Overlap]
    reranker: str = "passthrough"


def render(run: Run) -> str:
    total = sum(n for _, n, _ in run.banks)
    seconds = sum(s for _, _, s in run.banks)
    lines = [
        "# Recall benchmark",
        "",
        f"`{run.command}`",
        "",
        *(f"- {k}: {v}" for k, v in run.facts.items()),
        f"- embeddings: composite vectors over {run.components[0]} components embedded by the "
        f"real model in {run.components[1]:.1f} s; questions also pay a real-model pass",
        f"- table `memory_units`: {run.table_rows:,} rows in {len(run.banks)} banks; "
        f"questions asked at {NOW.isoformat()}; reranker: {run.reranker}",
        "",
        "## Retain",
        "",
        *_table(
            ["bank", "memories", "seconds", "memories/s"],
            [[b, f"{n:,}", f"{s:.1f}", f"{n / s:.0f}" if s else "reused"] for b, n, s in run.banks]
            + [
                [
                    "all",
                    f"{total:,}",
                    f"{seconds:.1f}",
                    f"{total / seconds:.0f}" if seconds else "reused",
                ]
            ],
        ),
        "",
        f"Batches of {RETAIN_BATCH}; entities extracted and semantic/temporal links built as "
        "in normal use. `ANALYZE` ran after retaining.",
        "",
        "## Recall latency",
        "",
    ]
    for result in run.latency:
        lines += latency_section(result)
    lines += ["## EXPLAIN of the semantic arm", "", *explain_section(run.explain_bank, run.explain)]
    lines += ["## Filtered recall", "", *overlap_section(run.overlap)]
    return "\n".join(lines)
